#ifndef AGENTWARE_MODEL_ANTHROPIC_CHAT_MODEL_HPP
#define AGENTWARE_MODEL_ANTHROPIC_CHAT_MODEL_HPP

// A client for Anthropic's Messages API, with the same behaviour as the
// OpenAI-compatible one (retries, timeouts, streaming, cancellation).

#include <agentware/model/anthropic_format.hpp>
#include <agentware/model/async_chat_model.hpp>
#include <agentware/model/chat_model.hpp>
#include <agentware/model/detail/client_core.hpp>
#include <agentware/model/http_transport.hpp>
#include <agentware/model/merge_settings.hpp>
#include <agentware/model/retry.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <memory>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

namespace agentware {

struct anthropic_config {
    std::string provider = "anthropic";
    std::string base_url =
        "https://api.anthropic.com"; ///< "/v1/messages" is appended ("/messages" after a "/v1")
    std::string model;
    std::string api_key_env = "ANTHROPIC_API_KEY";
    std::string api_version = "2023-06-01";                   ///< the anthropic-version header
    std::vector<std::pair<std::string, std::string>> headers; ///< e.g. anthropic-beta
    model_settings defaults;
    anthropic_wire_options wire;
    http_options http;
    retry_policy retry;
};

namespace detail {

struct anthropic_protocol {
    std::string provider;
    std::string model;
    std::string secret;
    std::string api_version;
    std::string target;
    std::vector<std::pair<std::string, std::string>> headers;
    model_settings defaults;
    anthropic_wire_options wire;

    using stream_assembler = anthropic_stream_assembler;

    http_request_spec make_request(const chat_request& request, bool stream) const {
        chat_request merged = request;
        merged.settings = merge_settings(defaults, request.settings);
        http_request_spec spec;
        spec.target = target;
        spec.body = boost::json::serialize(make_anthropic_request(merged, model, stream, wire));
        spec.headers.emplace_back("Content-Type", "application/json");
        spec.headers.emplace_back("Accept", stream ? "text/event-stream" : "application/json");
        spec.headers.emplace_back("anthropic-version", api_version);
        if (!secret.empty()) spec.headers.emplace_back("x-api-key", secret);
        for (const auto& h : headers)
            spec.headers.push_back(h);
        return spec;
    }

    model_response parse_body(std::string_view body) const {
        return parse_anthropic_response(body, provider);
    }
};

} // namespace detail

/// A Claude model over the Messages API. Copies share one connection pool.
class anthropic_chat_model {
public:
    explicit anthropic_chat_model(anthropic_config config) {
        if (config.model.empty())
            throw model_error(model_error_kind::configuration, "anthropic_config: the model id is empty");
        std::string secret = detail::read_api_key(config.api_key_env, config.model);
        const std::string path = detail::parse_url(config.base_url).path;
        detail::anthropic_protocol protocol{config.provider,
                                            config.model,
                                            secret,
                                            config.api_version,
                                            path.ends_with("/v1") ? "/messages" : "/v1/messages",
                                            config.headers,
                                            config.defaults,
                                            config.wire};
        core_ = std::make_shared<detail::client_core<detail::anthropic_protocol>>(
            std::move(protocol), config.base_url, std::move(secret), config.http, config.retry);
        config_ = std::make_shared<const anthropic_config>(std::move(config));
    }

    model_response invoke(const chat_request& request) { return core_->invoke(request, nullptr); }
    model_response invoke(const chat_request& request, std::stop_token stop) {
        return core_->invoke(request, &stop);
    }
    boost::asio::awaitable<model_response> async_invoke(const chat_request& request) {
        return core_->call(request, nullptr);
    }
    void cancel() { core_->cancel_all(); }
    void close_idle_connections() { core_->transport().close_idle_connections(); }
    const anthropic_config& config() const noexcept { return *config_; }

private:
    std::shared_ptr<detail::client_core<detail::anthropic_protocol>> core_;
    std::shared_ptr<const anthropic_config> config_;
};

static_assert(chat_model<anthropic_chat_model> && async_chat_model<anthropic_chat_model>);

} // namespace agentware

#endif
