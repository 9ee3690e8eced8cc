#ifndef AGENTWARE_MODEL_IMPL_OPENAI_MODERATION_CLIENT_IPP
#define AGENTWARE_MODEL_IMPL_OPENAI_MODERATION_CLIENT_IPP

#include <agentware/model/detail/client_core.hpp>
#include <agentware/model/openai_moderation_client.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <memory>
#include <string>
#include <utility>

namespace agentware {

namespace detail {

// The moderation endpoint as a chat_protocol, so that a check is one call of
// client_core (retries, backoff, cancellation, error kinds written once). The
// request's extra_body is the moderation request's body; the answer comes
// back as the text of an ai message, checked here and read by the client.
class openai_moderation_protocol final : public chat_protocol {
public:
    openai_moderation_protocol(const openai_moderation_config& config, std::string key)
        : headers_(config.headers) {
        provider = config.provider;
        secret = std::move(key);
    }

    http_request_spec make_request(const chat_request& request, bool) const override {
        http_request_spec spec =
            json_request("/moderations", boost::json::serialize(request.settings.extra_body), false);
        if (!secret.empty()) spec.headers.emplace_back("Authorization", "Bearer " + secret);
        spec.headers.insert(spec.headers.end(), headers_.begin(), headers_.end());
        return spec;
    }

    model_response parse_body(std::string_view body) const override {
        (void)parse_openai_moderation(body); // throws model_error (invalid_response) on a malformed answer
        return model_response{ai_message(std::string(body)), {}};
    }

    std::unique_ptr<stream_assembly> make_stream_assembly(const stream_handler*) const override {
        return nullptr; // never streamed
    }

private:
    std::vector<std::pair<std::string, std::string>> headers_;
};

inline chat_request moderation_request(const std::string& text, const std::string& model) {
    chat_request r;
    r.settings.extra_body = openai_moderation_body(text, model);
    return r;
}

} // namespace detail

openai_moderation_client::openai_moderation_client(openai_moderation_config config) {
    auto protocol = std::make_unique<detail::openai_moderation_protocol>(
        config, detail::read_api_key(config.api_key_env, config.provider + " moderation"));
    core_ = std::make_shared<detail::client_core>(std::move(protocol), config.base_url, config.http,
                                                  config.retry);
}

moderation_result openai_moderation_client::check(const std::string& text, const std::string& model) const {
    return parse_openai_moderation(core_->invoke(detail::moderation_request(text, model), nullptr).ai.text());
}

boost::asio::awaitable<moderation_result> openai_moderation_client::async_check(std::string text,
                                                                                std::string model) const {
    const chat_request request = detail::moderation_request(text, model);
    model_response r = co_await core_->call(request, nullptr);
    co_return parse_openai_moderation(r.ai.text());
}

void openai_moderation_client::cancel() { core_->cancel_all(); }

} // namespace agentware

#endif
