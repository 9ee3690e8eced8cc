#ifndef AGENTWARE_MESSAGE_ERROR_HPP
#define AGENTWARE_MESSAGE_ERROR_HPP
// The exception thrown when JSON handed to the message layer is not a message.

#include <stdexcept>

namespace agentware {

/// Thrown by the JSON conversions of the message layer when the input is
/// structurally wrong (not an object, unknown or missing role, a field of the
/// wrong type, ...). what() names the offending field and says why, e.g.
/// `message: field "role" must be one of system, user, assistant, tool (got "robot")`.
/// Recoverable provider quirks (null content, unparsable tool arguments) never
/// throw: they are normalised or become an invalid_tool_call.
class message_format_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace agentware

#endif
