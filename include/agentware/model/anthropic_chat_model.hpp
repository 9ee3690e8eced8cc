#ifndef AGENTWARE_MODEL_ANTHROPIC_CHAT_MODEL_HPP
#define AGENTWARE_MODEL_ANTHROPIC_CHAT_MODEL_HPP

// A client for Anthropic's Messages API, with the same behaviour as the
// OpenAI-compatible one (retries, timeouts, streaming, cancellation).

#include <agentware/detail/config.hpp>
#include <agentware/model/anthropic_format.hpp>
#include <agentware/model/async_chat_model.hpp>
#include <agentware/model/chat_model.hpp>
#include <agentware/model/http_chat_client.hpp>

#include <memory>
#include <string>

namespace agentware {

/// `base_url` gets "/v1/messages" appended ("/messages" after a "/v1");
/// `headers` carry extras such as anthropic-beta.
struct anthropic_config : http_client_config {
    anthropic_config() {
        provider = "anthropic";
        base_url = "https://api.anthropic.com";
        api_key_env = "ANTHROPIC_API_KEY";
    }
    std::string api_version = "2023-06-01"; ///< the anthropic-version header
    anthropic_wire_options wire;
};

/// A Claude model over the Messages API (calls: http_chat_client).
class anthropic_chat_model : public http_chat_client {
public:
    /// Reads the API key from `config.api_key_env`; throws model_error
    /// (configuration) when it is unset or the base URL is not http(s).
    AGENTWARE_DECL explicit anthropic_chat_model(anthropic_config config);

    const anthropic_config& config() const noexcept { return *config_; }

private:
    std::shared_ptr<const anthropic_config> config_;
};

static_assert(chat_model<anthropic_chat_model> && async_chat_model<anthropic_chat_model>);

} // namespace agentware

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/model/impl/anthropic_chat_model.ipp>
#endif

#endif
