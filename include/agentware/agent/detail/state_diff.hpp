#ifndef AGENTWARE_AGENT_DETAIL_STATE_DIFF_HPP
#define AGENTWARE_AGENT_DETAIL_STATE_DIFF_HPP

// What changed between two saves of an agent state in JSON: how many leading
// messages the new one keeps of the old, and which other top-level keys it
// set or removed. The stores that write differences (append_checkpointer.hpp,
// server/postgres_store.hpp) share it, so they agree on what a change is.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace agentware::detail {

/// How many leading elements `after` shares with `before`, compared by value
/// (a summarisation rewrites old messages: only a full comparison sees it).
inline std::size_t kept_prefix(const boost::json::array& before, const boost::json::array& after) {
    const std::size_t n = std::min(before.size(), after.size());
    std::size_t i = 0;
    while (i < n && before[i] == after[i])
        ++i;
    return i;
}

/// kept_prefix, taking the elements of `before` older than its last `window`
/// as unchanged when those last ones are (the rule of append_checkpointer's
/// verify_window): a save then compares what may have changed, not the whole
/// history. When they differ, the full comparison finds where.
inline std::size_t kept_prefix_within(const boost::json::array& before, const boost::json::array& after,
                                      std::size_t window) {
    if (after.size() >= before.size()) {
        std::size_t i = before.size() > window ? before.size() - window : 0;
        while (i < before.size() && before[i] == after[i])
            ++i;
        if (i == before.size()) return i;
    }
    return kept_prefix(before, after);
}

struct field_changes {
    boost::json::object set;  ///< keys new in `after` or holding another value, with that value
    boost::json::array unset; ///< keys `before` has and `after` lacks
    bool empty() const noexcept { return set.empty() && unset.empty(); }
};

/// The top-level keys that differ between `before` and `after`, compared by value.
inline field_changes changed_fields(const boost::json::object& before, const boost::json::object& after) {
    field_changes out;
    for (const auto& kv : after) {
        const auto* old = before.if_contains(kv.key());
        if (old == nullptr || *old != kv.value()) out.set.emplace(kv.key(), kv.value());
    }
    for (const auto& kv : before)
        if (!after.contains(kv.key())) out.unset.emplace_back(kv.key());
    return out;
}

/// What is wrong with applying the change record `changes` (`{"at": n,
/// "append": [...], "set": {...}, "unset": [...]}`) to `state`, or an empty
/// view when it applies.
inline std::string_view state_changes_error(const boost::json::object& state,
                                            const boost::json::object& changes) {
    const auto* at = changes.if_contains("at");
    if (at == nullptr) return {};
    const auto* m = state.if_contains("messages");
    if (m == nullptr || !m->is_array()) return "cuts messages the state before it lacks";
    if (!at->is_uint64() && !(at->is_int64() && at->get_int64() >= 0)) return "has no count in \"at\"";
    if (at->to_number<std::size_t>() > m->as_array().size())
        return "keeps more messages than the state before it has";
    return {};
}

/// Applies a change record to `state`: its messages cut to their first `at`
/// and the appended ones added, then the other keys set or removed. The
/// record's values are moved out. Returns what is wrong with it (the state
/// then untouched), or an empty view.
inline std::string_view apply_state_changes(boost::json::object& state, boost::json::object& changes) {
    if (const auto why = state_changes_error(state, changes); !why.empty()) return why;
    if (const auto* at = changes.if_contains("at")) {
        auto& messages = state.at("messages").as_array();
        messages.resize(at->to_number<std::size_t>());
        if (auto* append = changes.if_contains("append"); append != nullptr && append->is_array())
            for (auto& m : append->as_array())
                messages.push_back(std::move(m));
    }
    if (auto* set = changes.if_contains("set"); set != nullptr && set->is_object())
        for (auto& kv : set->as_object())
            state[kv.key()] = std::move(kv.value());
    if (const auto* unset = changes.if_contains("unset"); unset != nullptr && unset->is_array())
        for (const auto& key : unset->as_array())
            if (key.is_string()) state.erase(key.as_string());
    return {};
}

} // namespace agentware::detail

#endif
