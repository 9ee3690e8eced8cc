#ifndef AGENTWARE_MODEL_MODEL_INFO_HPP
#define AGENTWARE_MODEL_MODEL_INFO_HPP

// What the configuration says about a model, for middleware that adapts to it
// (a view-image tool needs vision; summarization needs the context size).

#include <cstdint>
#include <string>

namespace agentware {

struct model_info {
    std::string name;     ///< the configured name
    std::string provider; ///< "openai", "anthropic", ...
    std::string model;    ///< the provider's model id
    bool supports_vision = false;
    bool supports_thinking = false;
    bool thinking_enabled = false;
    std::uint64_t max_input_tokens = 0; ///< 0 when unknown

    friend bool operator==(const model_info&, const model_info&) = default;
};

} // namespace agentware

#endif
