#ifndef AGENTWARE_MIDDLEWARE_TOKEN_BUDGET_HPP
#define AGENTWARE_MIDDLEWARE_TOKEN_BUDGET_HPP

// token_budget: a run may spend so many tokens (DeerFlow's
// TokenBudgetMiddleware). After each model answer it adds up the usage of the
// answers new in this run (what the provider reported, else the token
// counter's estimate) against `max_tokens` and, when set, separate input and
// output limits. At `warn_threshold` of the tightest limit it warns once: the
// warning waits for the next model call and is shown there at the end of the
// request only (a stored message would break the ai/tool pairing). At
// `hard_stop_threshold` it removes the answer's tool calls, appends the
// exceeded note and records `stop_reason = token_capped`, so the run ends with
// that answer.
//
// Per-run figures live in the middleware, keyed by thread and run, under one
// mutex; they go when the run ends.

#include <agentware/agent/runtime.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/detail/awaitable.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/ai_edit.hpp>
#include <agentware/middleware/detail/run_usage.hpp>
#include <agentware/model/token_counter.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace agentware {

/// DeerFlow's `token_budget:` section.
struct token_budget_options {
    std::uint64_t max_tokens = 200000;
    std::optional<std::uint64_t> max_input_tokens;
    std::optional<std::uint64_t> max_output_tokens;
    double warn_threshold = 0.8;
    double hard_stop_threshold = 1.0;

    void validate() const {
        if (max_tokens < 1) throw std::invalid_argument("max_tokens must be >= 1");
        if ((max_input_tokens && *max_input_tokens < 1) || (max_output_tokens && *max_output_tokens < 1))
            throw std::invalid_argument("max_input_tokens and max_output_tokens must be >= 1 when set");
        if (!(warn_threshold > 0) || !(hard_stop_threshold > 0))
            throw std::invalid_argument("thresholds must be > 0");
        if (warn_threshold > hard_stop_threshold)
            throw std::invalid_argument("warn_threshold must be <= hard_stop_threshold");
    }

    static constexpr std::string_view config_section = "token_budget";
    friend bool operator==(const token_budget_options&, const token_budget_options&) = default;
};

class token_budget {
public:
    // Text kept for parity with DeerFlow (reference §5.16k).
    static constexpr std::string_view warning_format =
        "[TOKEN BUDGET WARNING] You have used {} of your {} {} token budget ({:.0f}%). Wrap up your current "
        "work and produce a final answer. Avoid starting new tool calls unless absolutely necessary.";
    // Text kept for parity with DeerFlow (reference §5.16k).
    static constexpr std::string_view exceeded_format =
        "[TOKEN BUDGET EXCEEDED] The {} token usage ({}) has exceeded the safety limit ({}). Producing final "
        "answer with results collected so far.";
    static constexpr std::string_view warning_name = "budget_warning";
    static constexpr std::string_view stop_reason_value = "token_capped";
    static constexpr std::size_t max_tracked_runs = 1000;

    token_budget() : token_budget(token_budget_options{}) {}
    explicit token_budget(token_budget_options o, token_estimate_options estimate = {})
        : options_(std::move(o)), counter_(estimate), shared_(std::make_shared<tracker>()) {
        options_.validate();
    }

    const token_budget_options& options() const noexcept { return options_; }

    /// The run's answers before this run do not count: remember them.
    template <class State>
    void before_agent(State& state, runtime& rt) {
        std::lock_guard lock(shared_->mutex);
        run_track& t = track(detail::run_key::of(rt));
        for (const message& m : state.messages)
            if (m.is_ai() && !m.id.empty()) t.seen.emplace(m.id, m.provider.usage());
    }

    template <class State>
    void after_model(State& state, runtime& rt) {
        if (state.messages.empty() || !state.messages.back().is_ai()) return;
        const detail::run_key key = detail::run_key::of(rt);
        std::optional<std::string> stop;
        {
            std::lock_guard lock(shared_->mutex);
            run_track& t = track(key);
            add_new_usage(state.messages, t);
            if (t.used.total_tokens == 0) return;
            struct limit {
                std::string_view reason;
                std::uint64_t used, budget;
            };
            std::vector<limit> limits{{"total", t.used.total_tokens, options_.max_tokens}};
            if (options_.max_input_tokens)
                limits.push_back({"input", t.used.input_tokens, *options_.max_input_tokens});
            if (options_.max_output_tokens)
                limits.push_back({"output", t.used.output_tokens, *options_.max_output_tokens});
            double highest = 0;
            const limit* hit = nullptr;
            for (const auto& l : limits) {
                const double f = static_cast<double>(l.used) / static_cast<double>(l.budget);
                if (f > highest) {
                    highest = f;
                    hit = &l;
                }
            }
            if (!hit) return;
            if (highest >= options_.hard_stop_threshold) {
                stop = fmt::format(fmt::runtime(exceeded_format), hit->reason,
                                   detail::group_thousands(hit->used), detail::group_thousands(hit->budget));
                shared_->stop_reasons[rt.run_id] = std::string(stop_reason_value);
            } else if (highest >= options_.warn_threshold && !t.warned) {
                t.warned = true;
                t.pending.push_back(
                    fmt::format(fmt::runtime(warning_format), detail::group_thousands(hit->used),
                                detail::group_thousands(hit->budget), hit->reason, highest * 100));
            }
        }
        if (stop) {
            rt.context["stop_reason"] = stop_reason_value;
            message& ai = state.messages.back();
            ai.tool_calls.clear();
            ai.edit_invalid_tool_calls().clear();
            detail::append_note(ai, *stop, detail::empty_answer_note::separated);
            detail::settle_finish_reason(ai);
        }
    }

    /// Shows a queued warning at the end of this request (never stored). If
    /// the call fails, the warning is queued again for the retry.
    auto wrap_model_call(auto& req, auto&& next) {
        std::vector<std::string> warnings;
        detail::run_key key;
        if (req.rt) {
            key = detail::run_key::of(*req.rt);
            std::lock_guard lock(shared_->mutex);
            if (auto it = shared_->runs.find(key); it != shared_->runs.end()) {
                warnings = std::move(it->second.pending);
                it->second.pending.clear();
            }
        }
        if (warnings.empty()) return next(req);
        std::string text;
        for (const auto& w : warnings)
            text += (text.empty() ? "" : "\n\n") + w;
        message m = human_message(std::move(text));
        m.name = std::string(warning_name);
        req.messages.edit().push_back(std::move(m));
        using response_t = detail::awaited_t<decltype(next(req))>;
        auto shared = shared_;
        return map_response(
            req, next, [](response_t response) { return response; },
            [shared, key, warnings](std::exception_ptr e) -> response_t {
                {
                    std::lock_guard lock(shared->mutex);
                    auto& pending = shared->runs[key].pending;
                    pending.insert(pending.begin(), warnings.begin(), warnings.end());
                }
                std::rethrow_exception(e);
            });
    }

    template <class State>
    void after_agent(State&, runtime& rt) {
        std::lock_guard lock(shared_->mutex);
        shared_->runs.erase(detail::run_key::of(rt));
    }

    /// "token_capped" when the run was hard-stopped, once (for a subagent executor).
    std::optional<std::string> consume_stop_reason(const std::string& run_id) {
        std::lock_guard lock(shared_->mutex);
        auto it = shared_->stop_reasons.find(run_id);
        if (it == shared_->stop_reasons.end()) return std::nullopt;
        std::string r = std::move(it->second);
        shared_->stop_reasons.erase(it);
        return r;
    }

    /// The tokens counted for a run so far.
    token_usage used(const std::string& thread_id, const std::string& run_id) const {
        std::lock_guard lock(shared_->mutex);
        auto it = shared_->runs.find(detail::run_key{thread_id, run_id});
        return it == shared_->runs.end() ? token_usage{} : it->second.used;
    }

private:
    struct run_track {
        std::unordered_map<std::string, token_usage> seen; // answer id -> what was counted for it
        token_usage used;
        bool warned = false;
        std::vector<std::string> pending;
    };
    struct tracker {
        mutable std::mutex mutex;
        std::map<detail::run_key, run_track> runs;
        std::map<std::string, std::string, std::less<>> stop_reasons;
    };

    run_track& track(const detail::run_key& key) {
        auto& runs = shared_->runs;
        if (runs.size() >= max_tracked_runs && !runs.count(key)) runs.erase(runs.begin()); // abandoned runs
        if (shared_->stop_reasons.size() >= max_tracked_runs)
            shared_->stop_reasons.erase(shared_->stop_reasons.begin());
        return runs[key];
    }

    // Counts each answer new in this run once (reported usage, else the
    // estimate), and any growth of the usage an answer reports later (as
    // DeerFlow's subagent tokens are added to the message that ran them).
    void add_new_usage(const std::vector<message>& messages, run_track& t) const {
        for (std::size_t i = 0; i < messages.size(); ++i) {
            const message& m = messages[i];
            if (!m.is_ai() || m.id.empty()) continue;
            token_usage before;
            if (auto it = t.seen.find(m.id); it != t.seen.end()) {
                if (m.provider.usage().empty()) continue; // estimates are made once
                before = it->second;
            }
            const token_usage now = detail::usage_of_answer(messages, i, counter_).usage;
            const std::uint64_t din =
                now.input_tokens > before.input_tokens ? now.input_tokens - before.input_tokens : 0;
            const std::uint64_t dout =
                now.output_tokens > before.output_tokens ? now.output_tokens - before.output_tokens : 0;
            t.used.input_tokens += din;
            t.used.output_tokens += dout;
            t.used.total_tokens += din + dout;
            t.seen[m.id] = now;
        }
    }

    token_budget_options options_;
    token_counter counter_;
    std::shared_ptr<tracker> shared_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const token_budget_options& o) {
    boost::json::object out{{"max_tokens", o.max_tokens},
                            {"max_input_tokens", nullptr},
                            {"max_output_tokens", nullptr},
                            {"warn_threshold", o.warn_threshold},
                            {"hard_stop_threshold", o.hard_stop_threshold}};
    if (o.max_input_tokens) out["max_input_tokens"] = *o.max_input_tokens;
    if (o.max_output_tokens) out["max_output_tokens"] = *o.max_output_tokens;
    jv = std::move(out);
}

/// Reads DeerFlow's `token_budget:` keys (`enabled` is the preset's).
inline token_budget_options tag_invoke(boost::json::value_to_tag<token_budget_options>,
                                       const boost::json::value& jv) {
    json_reader r(jv, std::string(token_budget_options::config_section));
    token_budget_options o;
    r.read("max_tokens", o.max_tokens)
        .read("max_input_tokens", o.max_input_tokens)
        .read("max_output_tokens", o.max_output_tokens)
        .read("warn_threshold", o.warn_threshold)
        .read("hard_stop_threshold", o.hard_stop_threshold)
        .reject_unknown_keys();
    r.validate(o);
    return o;
}

} // namespace agentware

#endif
