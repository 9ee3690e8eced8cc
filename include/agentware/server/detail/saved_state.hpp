#ifndef AGENTWARE_SERVER_DETAIL_SAVED_STATE_HPP
#define AGENTWARE_SERVER_DETAIL_SAVED_STATE_HPP

// The state a run saved last, brought up to the agent's next save by what
// changed: the checkpoint a run writes is that change (checkpoint_record's
// `changes`), so a save costs the messages it adds and the last few it
// compares, not the history, in the run and in the store.

#include <agentware/agent/checkpointer.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace agentware::server::detail {

/// How many of the last saved messages a save compares with the agent's. The
/// older ones are taken as unchanged when these are (append_file_checkpointer's
/// rule: a hook that rewrites history, as summarisation does, changes the last
/// ones too, and is then compared in full).
inline constexpr std::size_t saved_state_window = 32;

/// Brings `saved` (the state saved last, an object with a `messages` array,
/// followed by the tool results `pending` checkpointed since) to `now`, and
/// returns the change record that does the same to that checkpoint's values:
/// `{"at", "append", "set", "unset"}` (store.hpp). `pending` is emptied.
inline boost::json::object advance_saved_state(boost::json::object& saved,
                                               std::vector<boost::json::value>& pending,
                                               const state_view& now,
                                               std::size_t window = saved_state_window) {
    auto& list = saved["messages"];
    if (!list.is_array()) list = boost::json::array{};
    auto& messages = list.as_array();
    for (auto& r : pending)
        messages.push_back(std::move(r));
    pending.clear();

    const std::size_t before = messages.size();
    const std::size_t count = now.message_count();
    std::size_t kept = std::min(before, count);
    std::size_t i = kept > window ? kept - window : 0;
    while (i < kept && now.message(i) == messages[i])
        ++i;
    if (i < kept) { // rewritten: where, compared from the start
        std::size_t j = 0;
        while (j < i && now.message(j) == messages[j])
            ++j;
        kept = j;
    }

    boost::json::object changes;
    changes["at"] = kept;
    messages.resize(kept);
    if (kept < count) {
        boost::json::array appended;
        appended.reserve(count - kept);
        for (std::size_t k = kept; k < count; ++k) {
            appended.push_back(now.message(k));
            messages.push_back(appended.back());
        }
        changes["append"] = std::move(appended);
    }

    boost::json::object fields = now.fields();
    boost::json::object set;
    boost::json::array unset;
    for (const auto& kv : saved)
        if (kv.key() != "messages" && !fields.contains(kv.key())) unset.emplace_back(kv.key());
    for (auto& kv : fields) {
        if (kv.key() == "messages") continue;
        const auto* old = saved.if_contains(kv.key());
        if (old != nullptr && *old == kv.value()) continue;
        saved[kv.key()] = kv.value();
        set.emplace(kv.key(), std::move(kv.value()));
    }
    for (const auto& key : unset)
        saved.erase(key.as_string());
    if (!set.empty()) changes["set"] = std::move(set);
    if (!unset.empty()) changes["unset"] = std::move(unset);
    return changes;
}

} // namespace agentware::server::detail

#endif
