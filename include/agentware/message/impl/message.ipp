#ifndef AGENTWARE_MESSAGE_IMPL_MESSAGE_IPP
#define AGENTWARE_MESSAGE_IMPL_MESSAGE_IPP

// The definitions of agentware/message/message.hpp's non-template code: in every translation unit
// that includes it (header-only), or once in <agentware/src.hpp>
// (AGENTWARE_SEPARATE_COMPILATION).

#include <agentware/message/message.hpp>

namespace agentware {

// Out of line so that with separate compilation the copies of a message (a
// dozen members) are compiled once, not in every file that copies one.
message::message(const message&) = default;
message& message::operator=(const message&) = default;

} // namespace agentware

#endif
