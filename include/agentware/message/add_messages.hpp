#ifndef AGENTWARE_MESSAGE_ADD_MESSAGES_HPP
#define AGENTWARE_MESSAGE_ADD_MESSAGES_HPP

// The merge rule for the message list of the agent state (LangGraph's add_messages).

#include <agentware/detail/config.hpp>
#include <agentware/message/message.hpp>

#include <vector>

namespace agentware {

/// Merges `updates` into `into` the way LangGraph's add_messages reducer does:
///  * a message without id gets make_message_id() and is appended;
///  * a message whose id is already present replaces that message in place;
///  * remove_message(id) deletes the message with that id (which may have been
///    added earlier in the same update); removing an unknown id throws
///    std::invalid_argument naming the id. Removals take effect at the end, so
///    a message removed and then re-sent in one update stays (as in LangGraph);
///  * remove_all_messages() drops everything before it — the current list and
///    the part of the update before the last such marker — and the rest of the
///    update is merged into the then empty list.
/// If it throws std::invalid_argument, `into` is unchanged.
///
/// Complexity (n = into.size(), u = updates.size()): messages without id cost
/// O(1) amortised each (no search). A message with an id is searched from the
/// back, O(distance from the end); past 8 such searches on a list longer than
/// 32 a hash index is built once, bounding the whole call by O(n + u) expected.
/// Removals add one O(n) compaction pass.
AGENTWARE_DECL void add_messages(std::vector<message>& into, std::vector<message> updates);

} // namespace agentware

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/message/impl/add_messages.ipp>
#endif

#endif
