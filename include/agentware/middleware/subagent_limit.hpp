#ifndef AGENTWARE_MIDDLEWARE_SUBAGENT_LIMIT_HPP
#define AGENTWARE_MIDDLEWARE_SUBAGENT_LIMIT_HPP

// subagent_limit: keeps the model from launching more subagents than allowed,
// by removing excess `task` calls from its answer before they run (DeerFlow's
// SubagentLimitMiddleware): at most `max_concurrent` per answer, and at most
// `max_total_per_run`. A prompt can ask for limits; only this enforces them.

#include <agentware/agent/runtime.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/ai_edit.hpp>
#include <agentware/middleware/detail/json_values.hpp>
#include <agentware/state/basic_state.hpp>
#include <agentware/thread/delegations.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

struct subagent_limit_options {
    std::size_t max_concurrent =
        3; ///< task calls kept per model answer, clamped to [1, max_concurrent_ceiling]
    std::size_t max_total_per_run = 6; ///< task calls kept per run, clamped to [1, max_total_ceiling]
    std::size_t max_concurrent_ceiling =
        4;                              ///< DeerFlow's fixed 4; raise it for large fan-out (DeerFlow #4993)
    std::size_t max_total_ceiling = 50; ///< DeerFlow's fixed 50; likewise
    std::string task_tool_name = "task";
    bool limits_from_context =
        true; ///< a run's context may set `max_concurrent_subagents` / `max_total_subagents`

    /// DeerFlow's `subagents:` section (its delegation limits).
    static constexpr std::string_view config_section = "subagents";
    friend bool operator==(const subagent_limit_options&, const subagent_limit_options&) = default;
};

struct subagent_limit {
    static constexpr std::string_view limit_note = "[SUBAGENT LIMIT REACHED] The subagent delegation limit "
                                                   "for this run has been reached. Continue using the "
                                                   "subagent results already collected, execute remaining "
                                                   "simple work directly, or summarize the remaining "
                                                   "work instead of launching more subagents.";
    static constexpr std::string_view stop_reason_value = "subagent_limit_capped";

    subagent_limit() : subagent_limit(subagent_limit_options{}) {}
    explicit subagent_limit(subagent_limit_options o)
        : options_(std::move(o)), ledger_(std::make_shared<ledger>()) {}

    const subagent_limit_options& options() const noexcept { return options_; }

    static std::size_t clamp(std::size_t v, std::size_t ceiling) noexcept {
        return std::clamp<std::size_t>(v, 1, std::max<std::size_t>(ceiling, 1));
    }
    /// The limits a run works with: the options (or the run's context), clamped.
    std::size_t effective_max_concurrent(const runtime& rt) const {
        return clamp(from_context(rt, "max_concurrent_subagents", options_.max_concurrent),
                     options_.max_concurrent_ceiling);
    }
    std::size_t effective_max_total(const runtime& rt) const {
        return clamp(from_context(rt, "max_total_subagents", options_.max_total_per_run),
                     options_.max_total_ceiling);
    }

    template <class State>
    void after_model(State& state, runtime& rt) {
        message* ai = detail::last_ai_with_calls(state);
        if (!ai) return;
        const auto is_task = [&](const tool_call& c) { return c.name == options_.task_tool_name; };
        const auto tasks =
            static_cast<std::size_t>(std::count_if(ai->tool_calls.begin(), ai->tool_calls.end(), is_task));
        if (tasks == 0) return;

        const std::size_t max_total = effective_max_total(rt);
        const std::size_t max_concurrent = effective_max_concurrent(rt);
        std::lock_guard lock(ledger_->mutex);
        std::size_t& used = ledger_->runs[detail::run_key::of(rt)];
        if constexpr (requires { requires State::template has<delegations_field>; }) {
            // durable_context's ledger holds the run's delegations even after
            // summarization removed their calls, and outlives this object's
            // counts: count from it (this answer's calls, which it may have
            // recorded already, left out).
            std::set<std::string, std::less<>> now;
            for (const auto& c : ai->tool_calls)
                if (is_task(c)) now.insert(c.id);
            used = std::max(used,
                            count_run_delegations(agentware::get<delegations_field>(state), rt.run_id, now));
        }
        const std::size_t remaining = used >= max_total ? 0 : max_total - used;
        const std::size_t allowed = std::min(max_concurrent, remaining);
        if (tasks <= allowed) {
            used += tasks;
            return;
        }
        std::size_t kept = 0;
        std::vector<tool_call> calls;
        calls.reserve(ai->tool_calls.size());
        for (auto& c : ai->tool_calls) {
            if (is_task(c) && kept++ >= allowed) continue;
            calls.push_back(std::move(c));
        }
        ai->tool_calls = std::move(calls);
        used += allowed;
        detail::settle_finish_reason(*ai);
        if (remaining == 0) { // DeerFlow says so only when the budget was spent before this answer
            rt.context["stop_reason"] = stop_reason_value;
            detail::append_note(*ai, limit_note, detail::empty_answer_note::alone);
        }
    }

    /// Forgets the run's count (the run is over).
    template <class State>
    void after_agent(State&, runtime& rt) {
        std::lock_guard lock(ledger_->mutex);
        ledger_->runs.erase(detail::run_key::of(rt));
    }

    /// Task calls this run has kept so far (for tests and monitoring).
    std::size_t used(const runtime& rt) const {
        std::lock_guard lock(ledger_->mutex);
        auto it = ledger_->runs.find(detail::run_key::of(rt));
        return it == ledger_->runs.end() ? 0 : it->second;
    }

private:
    // Per-run counts, shared by the concurrent runs this object serves (and by
    // its copies: an agent's copies are the same agent).
    struct ledger {
        mutable std::mutex mutex;
        std::map<detail::run_key, std::size_t> runs;
    };

    std::size_t from_context(const runtime& rt, std::string_view key, std::size_t fallback) const {
        if (!options_.limits_from_context) return fallback;
        const auto* v = rt.context.if_contains(key);
        if (!v) return fallback;
        if (v->is_int64() && v->get_int64() > 0) return static_cast<std::size_t>(v->get_int64());
        if (v->is_uint64() && v->get_uint64() > 0) return static_cast<std::size_t>(v->get_uint64());
        return fallback; // DeerFlow's `or 3`: absent, null, 0 or junk mean "the default"
    }

    subagent_limit_options options_;
    std::shared_ptr<ledger> ledger_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const subagent_limit_options& o) {
    jv = boost::json::object{{"max_concurrent", o.max_concurrent},
                             {"max_total_per_run", o.max_total_per_run},
                             {"max_concurrent_ceiling", o.max_concurrent_ceiling},
                             {"max_total_ceiling", o.max_total_ceiling},
                             {"task_tool_name", o.task_tool_name},
                             {"limits_from_context", o.limits_from_context}};
}
/// Reads DeerFlow's `subagents:` keys that limit delegation (`max_total_per_run`).
inline subagent_limit_options tag_invoke(boost::json::value_to_tag<subagent_limit_options>,
                                         const boost::json::value& jv) {
    json_reader r(jv, std::string(subagent_limit_options::config_section));
    subagent_limit_options o;
    r.read("max_concurrent", o.max_concurrent)
        .read("max_total_per_run", o.max_total_per_run)
        .read("max_concurrent_ceiling", o.max_concurrent_ceiling)
        .read("max_total_ceiling", o.max_total_ceiling)
        .read("task_tool_name", o.task_tool_name)
        .read("limits_from_context", o.limits_from_context)
        // the executor's (subagents_options, <agentware/subagents/config.hpp>)
        .skip("timeout_seconds")
        .skip("max_turns")
        .skip("token_budget")
        .skip("agents")
        .skip("custom_agents")
        .reject_unknown_keys();
    return o;
}

} // namespace agentware

#endif
