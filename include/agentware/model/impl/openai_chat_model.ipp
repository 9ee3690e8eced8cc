#ifndef AGENTWARE_MODEL_IMPL_OPENAI_CHAT_MODEL_IPP
#define AGENTWARE_MODEL_IMPL_OPENAI_CHAT_MODEL_IPP

#include <agentware/model/detail/client_core.hpp>
#include <agentware/model/openai_chat_model.hpp>
#include <agentware/model/openai_format.hpp>

#include <boost/json/serialize.hpp>

#include <memory>
#include <string>
#include <utility>

namespace agentware {

namespace detail {

class openai_protocol final : public chat_protocol {
public:
    openai_protocol(const openai_config& config, std::string key)
        : model_(config.model), headers_(config.headers), defaults_(config.defaults), wire_(config.wire) {
        provider = config.provider;
        secret = std::move(key);
    }

    http_request_spec make_request(const chat_request& request, bool stream) const override {
        http_request_spec spec = json_request("/chat/completions",
                                              boost::json::serialize(make_openai_request(
                                                  with_defaults(request, defaults_), model_, stream, wire_)),
                                              stream);
        if (!secret.empty()) spec.headers.emplace_back("Authorization", "Bearer " + secret);
        spec.headers.insert(spec.headers.end(), headers_.begin(), headers_.end());
        return spec;
    }

    model_response parse_body(std::string_view body) const override {
        return parse_openai_response(body, provider);
    }

    std::unique_ptr<stream_assembly> make_stream_assembly(const stream_handler* handler) const override {
        return std::make_unique<stream_assembly_of<openai_stream_assembler>>(handler, provider, secret);
    }

private:
    std::string model_;
    std::vector<std::pair<std::string, std::string>> headers_;
    model_settings defaults_;
    openai_wire_options wire_;
};

} // namespace detail

openai_chat_model::openai_chat_model(openai_config config) {
    if (config.model.empty())
        throw model_error(model_error_kind::configuration, "openai_config: the model id is empty");
    auto protocol = std::make_unique<detail::openai_protocol>(
        config, detail::read_api_key(config.api_key_env, config.model));
    core_ = std::make_shared<detail::client_core>(std::move(protocol), config.base_url, config.http,
                                                  config.retry);
    config_ = std::make_shared<const openai_config>(std::move(config));
}

} // namespace agentware

#endif
