#ifndef AGENTWARE_MODEL_MERGE_SETTINGS_HPP
#define AGENTWARE_MODEL_MERGE_SETTINGS_HPP

// A model's configured defaults combined with the settings of one request.

#include <agentware/model/chat_model.hpp>

namespace agentware {

/// `defaults` with every field that `overrides` sets replaced: optionals that
/// hold a value, non-empty strings and lists, extra_body keys one by one.
/// `thinking` is on when either asks for it.
inline model_settings merge_settings(const model_settings& defaults, const model_settings& overrides) {
    model_settings out = defaults;
    if (overrides.temperature) out.temperature = overrides.temperature;
    if (overrides.max_tokens) out.max_tokens = overrides.max_tokens;
    if (!overrides.stop.empty()) out.stop = overrides.stop;
    if (!overrides.tool_choice.empty()) out.tool_choice = overrides.tool_choice;
    if (overrides.parallel_tool_calls) out.parallel_tool_calls = overrides.parallel_tool_calls;
    if (!overrides.reasoning_effort.empty()) out.reasoning_effort = overrides.reasoning_effort;
    out.thinking = defaults.thinking || overrides.thinking;
    for (const auto& [key, value] : overrides.extra_body)
        out.extra_body[key] = value;
    return out;
}

} // namespace agentware

#endif
