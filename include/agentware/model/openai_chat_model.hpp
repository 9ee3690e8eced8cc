#ifndef AGENTWARE_MODEL_OPENAI_CHAT_MODEL_HPP
#define AGENTWARE_MODEL_OPENAI_CHAT_MODEL_HPP

// A client for the chat-completions API of OpenAI and of the servers that
// copy it (DeepSeek, Moonshot, Qwen, OpenRouter, vLLM, Ollama, llama.cpp).

#include <agentware/model/async_chat_model.hpp>
#include <agentware/model/chat_model.hpp>
#include <agentware/model/detail/client_core.hpp>
#include <agentware/model/http_transport.hpp>
#include <agentware/model/merge_settings.hpp>
#include <agentware/model/openai_format.hpp>
#include <agentware/model/retry.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <memory>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

namespace agentware {

struct openai_config {
    std::string provider = "openai";                    ///< names the server in error messages
    std::string base_url = "https://api.openai.com/v1"; ///< "/chat/completions" is appended
    std::string model;                                  ///< the provider's model id
    /// The environment variable holding the API key; empty for servers that need none.
    std::string api_key_env = "OPENAI_API_KEY";
    std::vector<std::pair<std::string, std::string>>
        headers;             ///< extra headers (OpenRouter's HTTP-Referer, ...)
    model_settings defaults; ///< under every request's own settings
    openai_wire_options wire;
    http_options http;
    retry_policy retry;
};

namespace detail {

struct openai_protocol {
    std::string provider;
    std::string model;
    std::string secret;
    std::vector<std::pair<std::string, std::string>> headers;
    model_settings defaults;
    openai_wire_options wire;

    using stream_assembler = openai_stream_assembler;

    http_request_spec make_request(const chat_request& request, bool stream) const {
        chat_request merged = request;
        merged.settings = merge_settings(defaults, request.settings);
        http_request_spec spec;
        spec.target = "/chat/completions";
        spec.body = boost::json::serialize(make_openai_request(merged, model, stream, wire));
        spec.headers.emplace_back("Content-Type", "application/json");
        spec.headers.emplace_back("Accept", stream ? "text/event-stream" : "application/json");
        if (!secret.empty()) spec.headers.emplace_back("Authorization", "Bearer " + secret);
        for (const auto& h : headers)
            spec.headers.push_back(h);
        return spec;
    }

    model_response parse_body(std::string_view body) const { return parse_openai_response(body, provider); }
};

} // namespace detail

/// An OpenAI-compatible chat model. Copies share one connection pool and
/// cancel() reaches the calls of all of them. Streams when the request's
/// stream handler has a callback set.
class openai_chat_model {
public:
    /// Reads the API key from `config.api_key_env`; throws model_error
    /// (configuration) when it is unset or the base URL is not http(s).
    explicit openai_chat_model(openai_config config) {
        if (config.model.empty())
            throw model_error(model_error_kind::configuration, "openai_config: the model id is empty");
        std::string secret = detail::read_api_key(config.api_key_env, config.model);
        detail::openai_protocol protocol{config.provider, config.model,    secret,
                                         config.headers,  config.defaults, config.wire};
        core_ = std::make_shared<detail::client_core<detail::openai_protocol>>(
            std::move(protocol), config.base_url, std::move(secret), config.http, config.retry);
        config_ = std::make_shared<const openai_config>(std::move(config));
    }

    /// Blocks the calling thread until the answer is complete.
    model_response invoke(const chat_request& request) { return core_->invoke(request, nullptr); }

    /// Like invoke; `stop` requested from another thread cancels the call.
    model_response invoke(const chat_request& request, std::stop_token stop) {
        return core_->invoke(request, &stop);
    }

    /// Runs on the awaiting coroutine's executor; many calls may share one io_context.
    boost::asio::awaitable<model_response> async_invoke(const chat_request& request) {
        return core_->call(request, nullptr);
    }

    /// Cancels every call in flight (from any thread); they throw model_error (cancelled).
    void cancel() { core_->cancel_all(); }

    /// Drops kept-alive connections (do it before destroying an io_context the model was used on).
    void close_idle_connections() { core_->transport().close_idle_connections(); }

    const openai_config& config() const noexcept { return *config_; }

private:
    std::shared_ptr<detail::client_core<detail::openai_protocol>> core_;
    std::shared_ptr<const openai_config> config_;
};

static_assert(chat_model<openai_chat_model> && async_chat_model<openai_chat_model>);

} // namespace agentware

#endif
