#ifndef AGENTWARE_TOOL_INVALID_ARGUMENTS_HPP
#define AGENTWARE_TOOL_INVALID_ARGUMENTS_HPP

// One wording for refused arguments, whether the agent's schema check or a
// typed tool's conversion refuses them: the model learns one way to retry.

#include <string>
#include <string_view>

namespace agentware::detail {

/// The text of the error tool message that answers a call with bad arguments.
inline std::string invalid_arguments_message(std::string_view tool, std::string_view problem) {
    std::string out = "Error: invalid arguments for tool \"";
    out += tool;
    out += "\": ";
    out += problem;
    out += ". Fix the arguments and call the tool again.";
    return out;
}

} // namespace agentware::detail

#endif
