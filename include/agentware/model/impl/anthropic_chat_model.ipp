#ifndef AGENTWARE_MODEL_IMPL_ANTHROPIC_CHAT_MODEL_IPP
#define AGENTWARE_MODEL_IMPL_ANTHROPIC_CHAT_MODEL_IPP

#include <agentware/model/anthropic_chat_model.hpp>
#include <agentware/model/anthropic_format.hpp>
#include <agentware/model/detail/client_core.hpp>

#include <boost/json/serialize.hpp>

#include <memory>
#include <string>
#include <utility>

namespace agentware {

namespace detail {

class anthropic_protocol final : public chat_protocol {
public:
    anthropic_protocol(const anthropic_config& config, std::string key)
        : model_(config.model), api_version_(config.api_version),
          target_(parse_url(config.base_url).path.ends_with("/v1") ? "/messages" : "/v1/messages"),
          headers_(config.headers), defaults_(config.defaults), wire_(config.wire) {
        provider = config.provider;
        secret = std::move(key);
    }

    http_request_spec make_request(const chat_request& request, bool stream) const override {
        http_request_spec spec = json_request(target_,
                                              boost::json::serialize(make_anthropic_request(
                                                  with_defaults(request, defaults_), model_, stream, wire_)),
                                              stream);
        spec.headers.emplace_back("anthropic-version", api_version_);
        if (!secret.empty()) spec.headers.emplace_back("x-api-key", secret);
        spec.headers.insert(spec.headers.end(), headers_.begin(), headers_.end());
        return spec;
    }

    model_response parse_body(std::string_view body) const override {
        return parse_anthropic_response(body, provider);
    }

    std::unique_ptr<stream_assembly> make_stream_assembly(const stream_handler* handler) const override {
        return std::make_unique<stream_assembly_of<anthropic_stream_assembler>>(handler, provider, secret);
    }

private:
    std::string model_;
    std::string api_version_;
    std::string target_;
    std::vector<std::pair<std::string, std::string>> headers_;
    model_settings defaults_;
    anthropic_wire_options wire_;
};

} // namespace detail

anthropic_chat_model::anthropic_chat_model(anthropic_config config) {
    if (config.model.empty())
        throw model_error(model_error_kind::configuration, "anthropic_config: the model id is empty");
    auto protocol = std::make_unique<detail::anthropic_protocol>(
        config, detail::read_api_key(config.api_key_env, config.model));
    core_ = std::make_shared<detail::client_core>(std::move(protocol), config.base_url, config.http,
                                                  config.retry);
    config_ = std::make_shared<const anthropic_config>(std::move(config));
}

} // namespace agentware

#endif
