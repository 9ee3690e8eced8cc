#ifndef AGENTWARE_MODEL_OPENAI_CHAT_MODEL_HPP
#define AGENTWARE_MODEL_OPENAI_CHAT_MODEL_HPP

// A client for the chat-completions API of OpenAI and of the servers that
// copy it (DeepSeek, Moonshot, Qwen, OpenRouter, vLLM, Ollama, llama.cpp).

#include <agentware/detail/config.hpp>
#include <agentware/model/async_chat_model.hpp>
#include <agentware/model/chat_model.hpp>
#include <agentware/model/http_chat_client.hpp>
#include <agentware/model/openai_format.hpp>

#include <memory>

namespace agentware {

/// `base_url` gets "/chat/completions" appended; `headers` carry extras such
/// as OpenRouter's HTTP-Referer.
struct openai_config : http_client_config {
    openai_config() {
        provider = "openai";
        base_url = "https://api.openai.com/v1";
        api_key_env = "OPENAI_API_KEY";
    }
    openai_wire_options wire;
};

/// An OpenAI-compatible chat model (calls: http_chat_client).
class openai_chat_model : public http_chat_client {
public:
    /// Reads the API key from `config.api_key_env`; throws model_error
    /// (configuration) when it is unset or the base URL is not http(s).
    AGENTWARE_DECL explicit openai_chat_model(openai_config config);

    const openai_config& config() const noexcept { return *config_; }

private:
    std::shared_ptr<const openai_config> config_;
};

static_assert(chat_model<openai_chat_model> && async_chat_model<openai_chat_model>);

} // namespace agentware

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/model/impl/openai_chat_model.ipp>
#endif

#endif
