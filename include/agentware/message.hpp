#ifndef AGENTWARE_MESSAGE_HPP
#define AGENTWARE_MESSAGE_HPP
// The message layer: messages, content blocks, ids, the add_messages merge
// rule, JSON conversions (OpenAI chat-completions format) and fmt output.
// Note: Boost.JSON is used header-only; one TU of the program must include
// <boost/json/src.hpp>.

#include <agentware/message/add_messages.hpp>
#include <agentware/message/content.hpp>
#include <agentware/message/error.hpp>
#include <agentware/message/format.hpp>
#include <agentware/message/id.hpp>
#include <agentware/message/json.hpp>
#include <agentware/message/message.hpp>
#include <agentware/message/provider_metadata.hpp>

#endif
