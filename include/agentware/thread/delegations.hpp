#ifndef AGENTWARE_THREAD_DELEGATIONS_HPP
#define AGENTWARE_THREAD_DELEGATIONS_HPP

// The delegation ledger: the `delegations` state field that durable_context
// writes and subagent_limit reads (DeerFlow's DelegationEntry and its
// merge_delegations reducer, reference §3).

#include <agentware/detail/iso_time.hpp> // created_at
#include <agentware/json/reader.hpp>
#include <agentware/message/detail/text.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// One `task` call and what became of it.
struct delegation_entry {
    std::string id;            ///< the task call's id
    std::string run_id;        ///< the run that made it
    std::string description;   ///< at most 200 characters
    std::string subagent_type; ///<
    std::string status;        ///< in_progress, or completed, failed, cancelled, timed_out, polling_timed_out
    std::string result_brief;  ///< at most 2000 characters (head and tail)
    std::string result_sha256; ///< when the task tool gave one
    std::string result_ref;    ///< the result message's id, or the call id
    std::string stop_reason;   ///< token_capped, turn_capped, loop_capped
    std::string created_at;    ///< ISO 8601, UTC (`Z`)
    friend bool operator==(const delegation_entry&, const delegation_entry&) = default;
};

namespace detail {

inline bool terminal_delegation_status(std::string_view s) {
    return s == "completed" || s == "failed" || s == "cancelled" || s == "timed_out" ||
           s == "polling_timed_out";
}

/// `text` within `max` bytes: its first two thirds, "\n...\n", its end.
inline std::string bounded_brief(std::string_view text, std::size_t max) {
    if (text.size() <= max) return std::string(text);
    constexpr std::string_view gap = "\n...\n";
    std::size_t head = (max - gap.size()) * 2 / 3;
    std::size_t tail = max - gap.size() - head;
    std::string out(utf8_prefix(text, head));
    out += gap;
    std::size_t from = text.size() - tail;
    while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80)
        ++from; // start on a whole character
    out += text.substr(from);
    return out;
}

} // namespace detail

/// The `delegations` state field. An update folds in by id, in first-seen
/// order: a terminal status is never replaced by a non-terminal one, a
/// replacement keeps the original `created_at` (and `run_id` when it has
/// none), and the last 50 entries are kept.
struct delegations_field {
    static constexpr std::string_view name = "delegations";
    using value_type = std::vector<delegation_entry>;
    static constexpr std::size_t max_entries = 50;

    static void merge(value_type& current, value_type&& update) {
        for (auto& e : update) {
            auto it =
                std::find_if(current.begin(), current.end(), [&](const auto& c) { return c.id == e.id; });
            if (it == current.end()) {
                current.push_back(std::move(e));
                continue;
            }
            if (detail::terminal_delegation_status(it->status) &&
                !detail::terminal_delegation_status(e.status))
                continue;
            if (e.status == it->status && e.result_brief.empty()) continue; // nothing new
            delegation_entry merged = std::move(e);
            merged.created_at = it->created_at;
            if (merged.run_id.empty()) merged.run_id = it->run_id;
            if (merged.description.empty()) merged.description = it->description;
            if (merged.subagent_type.empty()) merged.subagent_type = it->subagent_type;
            *it = std::move(merged);
        }
        if (current.size() > max_entries)
            current.erase(current.begin(), current.end() - static_cast<std::ptrdiff_t>(max_entries));
    }
};

/// How many distinct delegations of run `run_id` the ledger holds, leaving
/// out the ids in `except` (the calls being judged now).
inline std::size_t count_run_delegations(const std::vector<delegation_entry>& ledger, std::string_view run_id,
                                         const std::set<std::string, std::less<>>& except = {}) {
    std::set<std::string_view> ids;
    for (const auto& e : ledger)
        if (e.run_id == run_id && !except.contains(e.id)) ids.insert(e.id);
    return ids.size();
}

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const delegation_entry& e) {
    boost::json::object o{{"id", e.id},
                          {"description", e.description},
                          {"subagent_type", e.subagent_type},
                          {"status", e.status},
                          {"created_at", e.created_at}};
    auto optional = [&](std::string_view key, const std::string& v) {
        if (!v.empty()) o[key] = v;
    };
    optional("run_id", e.run_id);
    optional("result_brief", e.result_brief);
    optional("result_sha256", e.result_sha256);
    optional("result_ref", e.result_ref);
    optional("stop_reason", e.stop_reason);
    jv = std::move(o);
}

inline delegation_entry tag_invoke(boost::json::value_to_tag<delegation_entry>,
                                   const boost::json::value& jv) {
    json_reader r(jv);
    delegation_entry e;
    e.id = r.required<std::string>("id");
    r.read("run_id", e.run_id)
        .read("description", e.description)
        .read("subagent_type", e.subagent_type)
        .read("status", e.status)
        .read("result_brief", e.result_brief)
        .read("result_sha256", e.result_sha256)
        .read("result_ref", e.result_ref)
        .read("stop_reason", e.stop_reason)
        .read("created_at", e.created_at)
        .reject_unknown_keys();
    return e;
}

} // namespace agentware

#endif
