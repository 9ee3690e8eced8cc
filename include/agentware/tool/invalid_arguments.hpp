#ifndef AGENTWARE_TOOL_INVALID_ARGUMENTS_HPP
#define AGENTWARE_TOOL_INVALID_ARGUMENTS_HPP

// One wording for refused arguments, whether the agent's schema check or a
// typed tool's conversion refuses them: the model learns one way to retry.

#include <string>
#include <string_view>

namespace agentware::detail {

/// How every such refusal starts (tool_error_handling classifies it by this).
inline constexpr std::string_view invalid_arguments_prefix = "Error: invalid arguments for tool \"";

/// The text of the error tool message that answers a call with bad arguments.
inline std::string invalid_arguments_message(std::string_view tool, std::string_view problem) {
    std::string out(invalid_arguments_prefix);
    out += tool;
    out += "\": ";
    out += problem;
    out += ". Fix the arguments and call the tool again.";
    return out;
}

} // namespace agentware::detail

#endif
