#ifndef AGENTWARE_MIDDLEWARE_LOOP_DETECTION_HPP
#define AGENTWARE_MIDDLEWARE_LOOP_DETECTION_HPP

// loop_detection: notices a model that keeps calling tools without getting
// anywhere (DeerFlow's LoopDetectionMiddleware), in three layers checked after
// each model answer:
//  1. the same set of tool calls (salient arguments only) seen again and
//     again in the thread's recent answers;
//  2. one tool called very often, whatever its arguments;
//  3. (beyond DeerFlow, after its PR 2590) answers cycling through the same
//     tools: A, B, A, B, ... or A, B, C, A, B, C, ...
// First it warns: the warning is queued for the run and shown to the model at
// its next call, after the tool results, in the request only (a message
// stored there would break the assistant/tool pairing strict providers check).
// If the model goes on, a hard stop removes the answer's tool calls and
// appends a note, so the run ends with that answer.
//
// Histories are kept per thread (the most recently used `max_tracked_threads`)
// and survive across runs; warnings are per run. Everything lives in the
// middleware object, shared by the concurrent runs it serves, under one mutex.

#include <agentware/agent/runtime.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/detail/hash.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/ai_edit.hpp>
#include <agentware/middleware/detail/json_values.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace agentware {

/// Per-tool thresholds for layer 2.
struct tool_frequency_limit {
    std::size_t warn = 30;
    std::size_t hard_limit = 50;

    friend bool operator==(const tool_frequency_limit&, const tool_frequency_limit&) = default;
};

struct loop_detection_options {
    std::size_t warn_threshold = 3; ///< layer 1: same call set this often in the window -> warning
    std::size_t hard_limit = 5;     ///< layer 1: ... -> hard stop
    std::size_t window_size = 20;   ///< layer 1: answers remembered per thread
    std::size_t max_tracked_threads = 100;
    std::size_t tool_freq_warn = 30;       ///< layer 2: calls of one tool -> warning
    std::size_t tool_freq_hard_limit = 50; ///< layer 2: ... -> hard stop
    std::map<std::string, tool_frequency_limit, std::less<>> tool_freq_overrides; ///< e.g. bash: {150, 300}
    std::vector<std::string> batch_friendly_tools; ///< never counted by any layer (DeerFlow PR 2591)
    bool detect_cycles = true;                     ///< layer 3
    std::size_t cycle_warn = 3;                    ///< layer 3: full repetitions of a cycle -> warning
    std::size_t cycle_hard_limit = 4;              ///< layer 3: ... -> hard stop
    std::size_t max_cycle_length = 4;              ///< layer 3: longest cycle looked for (answers per lap)
    std::string disable_context_key =
        "disable_loop_detection"; ///< a run whose context sets it is not watched

    /// Throws std::invalid_argument (DeerFlow's texts) when the thresholds make no sense.
    void validate() const {
        auto positive = [](std::size_t v, const char* what) {
            if (v < 1) throw std::invalid_argument(detail::format("{} must be >= 1", what));
        };
        positive(warn_threshold, "warn_threshold");
        positive(hard_limit, "hard_limit");
        positive(window_size, "window_size");
        positive(max_tracked_threads, "max_tracked_threads");
        positive(tool_freq_warn, "tool_freq_warn");
        positive(tool_freq_hard_limit, "tool_freq_hard_limit");
        if (hard_limit < warn_threshold)
            throw std::invalid_argument("hard_limit must be greater than or equal to warn_threshold");
        if (tool_freq_hard_limit < tool_freq_warn)
            throw std::invalid_argument(
                "tool_freq_hard_limit must be greater than or equal to tool_freq_warn");
        for (const auto& [name, limit] : tool_freq_overrides) {
            positive(limit.warn, "warn");
            positive(limit.hard_limit, "hard_limit");
            if (limit.hard_limit < limit.warn) throw std::invalid_argument("hard_limit must be >= warn");
        }
        if (detect_cycles) {
            positive(cycle_warn, "cycle_warn");
            if (cycle_hard_limit < cycle_warn)
                throw std::invalid_argument("cycle_hard_limit must be greater than or equal to cycle_warn");
            if (max_cycle_length < 2) throw std::invalid_argument("max_cycle_length must be >= 2");
        }
    }

    static constexpr std::string_view config_section = "loop_detection";
    friend bool operator==(const loop_detection_options&, const loop_detection_options&) = default;
};

struct loop_detection {
    static constexpr std::string_view warning_text =
        "[LOOP DETECTED] You are repeating the same tool calls. Stop calling tools and produce your final "
        "answer "
        "now. If you cannot complete the task, summarize what you accomplished so far.";
    static constexpr std::string_view tool_freq_warning_format =
        "[LOOP DETECTED] You have called {} {} times without producing a final answer. Stop calling tools "
        "and "
        "produce your final answer now. If you cannot complete the task, summarize what you accomplished so "
        "far.";
    static constexpr std::string_view hard_stop_text =
        "[FORCED STOP] Repeated tool calls exceeded the safety limit. Producing final answer with results "
        "collected "
        "so far.";
    static constexpr std::string_view tool_freq_hard_stop_format =
        "[FORCED STOP] Tool {} called {} times — exceeded the per-tool safety limit. Producing final answer "
        "with "
        "results collected so far.";
    // Layer 3 is ours, so are its texts (in the style of the others).
    static constexpr std::string_view cycle_warning_format =
        "[LOOP DETECTED] You are cycling through the same tools ({}) without producing a final answer. Stop "
        "calling "
        "tools and produce your final answer now. If you cannot complete the task, summarize what you "
        "accomplished "
        "so far.";
    static constexpr std::string_view cycle_hard_stop_format =
        "[FORCED STOP] Tool calls cycled through {} {} times — exceeded the safety limit. Producing final "
        "answer "
        "with results collected so far.";
    static constexpr std::string_view warning_name = "loop_warning";
    static constexpr std::string_view stop_reason_value = "loop_capped";
    static constexpr std::size_t max_pending_warnings_per_run = 4;
    static constexpr std::size_t max_stop_reasons = 1000;

    loop_detection() : loop_detection(loop_detection_options{}) {}
    explicit loop_detection(loop_detection_options o)
        : options_(std::move(o)), shared_(std::make_shared<tracker>()) {
        options_.validate();
        freq_window_ = std::max(options_.window_size, options_.tool_freq_hard_limit);
        for (const auto& [name, limit] : options_.tool_freq_overrides)
            freq_window_ = std::max(freq_window_, limit.hard_limit);
        cycle_window_ = std::max(options_.window_size, options_.cycle_hard_limit * options_.max_cycle_length);
    }

    const loop_detection_options& options() const noexcept { return options_; }

    /// The stable key of one answer's tool calls: order-independent, blind to
    /// non-salient arguments (a changing `description` does not change it).
    /// FNV-1a 64 (16 hex digits) of the sorted "name:key" list as JSON.
    static std::string hash_tool_calls(const std::vector<tool_call>& calls) {
        std::vector<std::string> parts;
        parts.reserve(calls.size());
        for (const auto& c : calls)
            parts.push_back(c.name + ":" + call_key(c));
        std::sort(parts.begin(), parts.end());
        boost::json::array a;
        for (auto& p : parts)
            a.emplace_back(p);
        return detail::fnv1a_64_hex(detail::canonical_json(a));
    }

    /// One call's key (DeerFlow's `_stable_tool_key`).
    static std::string call_key(const tool_call& c) {
        const boost::json::object& args = c.args;
        if (c.name == "read_file") {
            const auto* path = args.if_contains("path");
            std::int64_t start = line_arg(args, "start_line").value_or(1);
            std::int64_t end = line_arg(args, "end_line").value_or(start);
            if (start > end) std::swap(start, end);
            start = std::max<std::int64_t>(start, 1);
            end = std::max<std::int64_t>(end, 1);
            return detail::format("{}:{}-{}", path ? detail::python_str(*path) : "None", (start - 1) / 200,
                                  (end - 1) / 200);
        }
        if (c.name == "write_file" || c.name == "str_replace") return detail::canonical_json(args);
        static constexpr std::array<std::string_view, 7> salient{"path",    "url",  "query", "command",
                                                                 "pattern", "glob", "cmd"};
        boost::json::object picked;
        for (auto k : salient)
            if (const auto* v = args.if_contains(k); v && !v->is_null()) picked[k] = *v;
        return detail::canonical_json(picked.empty() ? args : picked);
    }

    // --- hooks ---

    /// A new run of a thread: warnings other runs of it left behind are stale.
    template <class State>
    void before_agent(State&, runtime& rt) {
        std::lock_guard lock(shared_->mutex);
        auto& p = shared_->pending;
        const std::string& thread = thread_of(rt);
        p.erase(std::remove_if(p.begin(), p.end(),
                               [&](const auto& e) {
                                   return e.first.thread_id == thread && e.first.run_id != rt.run_id;
                               }),
                p.end());
    }

    template <class State>
    void after_model(State& state, runtime& rt) {
        message* ai = detail::last_ai_with_calls(state);
        if (!ai || detail::flag(rt.context, options_.disable_context_key)) return;
        std::vector<tool_call> counted;
        for (const auto& c : ai->tool_calls)
            if (!batch_friendly(c.name)) counted.push_back(c);
        if (counted.empty()) return;

        std::optional<std::string> stop;
        {
            std::lock_guard lock(shared_->mutex);
            verdict v = detect(thread_of(rt), counted);
            if (v.warning) queue_warning(detail::run_key{thread_of(rt), rt.run_id}, std::move(*v.warning));
            if (v.hard_stop) {
                record_stop_reason(rt.run_id);
                stop = std::move(v.hard_stop);
            }
        }
        if (stop) {
            rt.context["stop_reason"] = stop_reason_value;
            ai->tool_calls.clear();
            ai->edit_invalid_tool_calls().clear(); // nothing may run after a forced stop
            detail::append_note(*ai, *stop, detail::empty_answer_note::separated);
            detail::settle_finish_reason(*ai);
        }
    }

    /// Shows the run's queued warnings to the model: one hidden human message
    /// at the end of this request (after the tool results), never stored.
    auto wrap_model_call(auto& req, auto&& next) {
        if (req.rt) {
            std::vector<std::string> warnings =
                take_warnings(detail::run_key{thread_of(*req.rt), req.rt->run_id});
            if (!warnings.empty()) {
                std::string text;
                for (const auto& w : warnings)
                    text += (text.empty() ? "" : "\n\n") + w;
                message m = human_message(std::move(text));
                m.name = std::string(warning_name);
                req.messages.edit().push_back(std::move(m));
            }
        }
        return next(req);
    }

    /// The run is over: its unconsumed warnings go.
    template <class State>
    void after_agent(State&, runtime& rt) {
        std::lock_guard lock(shared_->mutex);
        auto& p = shared_->pending;
        const detail::run_key key{thread_of(rt), rt.run_id};
        p.erase(std::remove_if(p.begin(), p.end(), [&](const auto& e) { return e.first == key; }), p.end());
    }

    // --- for callers (a subagent executor) and tests ---

    /// "loop_capped" when a run was hard-stopped, once (it is removed).
    std::optional<std::string> consume_stop_reason(std::string_view run_id) {
        std::lock_guard lock(shared_->mutex);
        auto& s = shared_->stop_reasons;
        auto it = std::find_if(s.begin(), s.end(), [&](const auto& e) { return e.first == run_id; });
        if (it == s.end()) return std::nullopt;
        std::string reason = std::move(it->second);
        s.erase(it);
        return reason;
    }

    /// The warnings queued for a run and not yet shown (a copy).
    std::vector<std::string> pending_warnings(std::string_view thread_id, std::string_view run_id) const {
        std::lock_guard lock(shared_->mutex);
        for (const auto& [key, list] : shared_->pending)
            if (key.thread_id == thread_id && key.run_id == run_id) return list;
        return {};
    }

    /// Threads whose history is kept.
    std::size_t tracked_threads() const {
        std::lock_guard lock(shared_->mutex);
        return shared_->threads.size();
    }

private:
    struct thread_track {
        std::deque<std::string> hashes; // layer 1 window
        std::set<std::string, std::less<>> warned_hashes;
        std::deque<std::string> names; // layer 2 window
        std::unordered_map<std::string, std::size_t> name_counts;
        std::set<std::string, std::less<>> warned_names;
        std::deque<std::string> rounds; // layer 3: one tool-name signature per answer
        std::set<std::string, std::less<>> warned_cycles;
        std::list<std::string>::iterator lru;
    };

    struct tracker {
        mutable std::mutex mutex;
        std::list<std::string> lru; // most recent first
        std::unordered_map<std::string, thread_track> threads;
        std::deque<std::pair<detail::run_key, std::vector<std::string>>> pending; // oldest first
        std::deque<std::pair<std::string, std::string>> stop_reasons;             // run id -> reason
    };

    struct verdict {
        std::optional<std::string> warning;
        std::optional<std::string> hard_stop;
    };

    static const std::string& thread_of(const runtime& rt) {
        static const std::string fallback = "default";
        return rt.thread_id.empty() ? fallback : rt.thread_id;
    }

    bool batch_friendly(std::string_view name) const {
        const auto& b = options_.batch_friendly_tools;
        return std::find(b.begin(), b.end(), name) != b.end();
    }

    // Python's int(x or default): missing, null, 0, "" and unconvertible values give nullopt.
    static std::optional<std::int64_t> line_arg(const boost::json::object& args, std::string_view key) {
        const auto* v = args.if_contains(key);
        if (!v || !detail::truthy(*v)) return std::nullopt;
        if (v->is_int64()) return v->get_int64();
        if (v->is_uint64())
            return static_cast<std::int64_t>(std::min<std::uint64_t>(v->get_uint64(), INT64_MAX));
        if (v->is_bool()) return 1;
        if (v->is_double() && std::isfinite(v->get_double()) && std::fabs(v->get_double()) < 9e18)
            return static_cast<std::int64_t>(v->get_double());
        if (v->is_string()) {
            std::string_view s = detail::trim(v->get_string());
            std::int64_t out = 0;
            if (!s.empty() && s.front() == '+') s.remove_prefix(1);
            auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
            if (ec == std::errc{} && ptr == s.data() + s.size() && !s.empty()) return out;
        }
        return std::nullopt;
    }

    thread_track& touch(const std::string& thread) {
        auto& t = *shared_;
        auto it = t.threads.find(thread);
        if (it != t.threads.end()) {
            t.lru.splice(t.lru.begin(), t.lru, it->second.lru);
            return it->second;
        }
        t.lru.push_front(thread);
        thread_track& track = t.threads[thread];
        track.lru = t.lru.begin();
        while (t.threads.size() > options_.max_tracked_threads) {
            t.threads.erase(t.lru.back());
            t.lru.pop_back();
        }
        return track;
    }

    verdict detect(const std::string& thread, const std::vector<tool_call>& calls) {
        thread_track& t = touch(thread);

        // Layer 1: the same call set again.
        const std::string hash = hash_tool_calls(calls);
        t.hashes.push_back(hash);
        while (t.hashes.size() > options_.window_size)
            t.hashes.pop_front();
        for (auto it = t.warned_hashes.begin(); it != t.warned_hashes.end();)
            it = std::find(t.hashes.begin(), t.hashes.end(), *it) == t.hashes.end()
                     ? t.warned_hashes.erase(it)
                     : std::next(it);
        const auto count = static_cast<std::size_t>(std::count(t.hashes.begin(), t.hashes.end(), hash));

        // Layer 3 keeps its history on every answer, so a cycle is seen whole.
        std::string signature;
        if (options_.detect_cycles) {
            std::set<std::string> names;
            for (const auto& c : calls)
                names.insert(c.name);
            for (const auto& n : names)
                signature += (signature.empty() ? "" : "+") + n;
            t.rounds.push_back(signature);
            while (t.rounds.size() > cycle_window_)
                t.rounds.pop_front();
        }

        if (count >= options_.hard_limit) return {std::nullopt, std::string(hard_stop_text)};
        if (count >= options_.warn_threshold && !t.warned_hashes.count(hash)) {
            t.warned_hashes.insert(hash);
            return {std::string(warning_text), std::nullopt};
        }

        if (options_.detect_cycles)
            if (auto v = detect_cycle(t); v.warning || v.hard_stop) return v;

        // Layer 2: one tool too often. The first call that triggers decides.
        for (const auto& c : calls) {
            if (c.name.empty()) continue;
            t.names.push_back(c.name);
            ++t.name_counts[c.name];
            while (t.names.size() > freq_window_) {
                auto old = t.name_counts.find(t.names.front());
                if (old != t.name_counts.end() && --old->second == 0) t.name_counts.erase(old);
                t.names.pop_front();
            }
            const std::size_t freq = t.name_counts[c.name];
            tool_frequency_limit limit{options_.tool_freq_warn, options_.tool_freq_hard_limit};
            if (auto o = options_.tool_freq_overrides.find(c.name); o != options_.tool_freq_overrides.end())
                limit = o->second;
            if (freq >= limit.hard_limit)
                return {std::nullopt, fmt::format(fmt::runtime(tool_freq_hard_stop_format), c.name, freq)};
            if (freq >= limit.warn) {
                if (!t.warned_names.count(c.name)) {
                    t.warned_names.insert(c.name);
                    return {fmt::format(fmt::runtime(tool_freq_warning_format), c.name, freq), std::nullopt};
                }
            } else {
                t.warned_names.erase(c.name); // below the threshold again: may warn again later
            }
        }
        return {};
    }

    // The shortest lap (2..max_cycle_length answers, at least two different
    // signatures) that the latest answers repeat, and how many times in a row.
    verdict detect_cycle(thread_track& t) {
        const auto& r = t.rounds;
        const std::size_t n = r.size();
        for (std::size_t p = 2; p <= options_.max_cycle_length && 2 * p <= n; ++p) {
            bool distinct = false;
            for (std::size_t i = n - p + 1; i < n && !distinct; ++i)
                distinct = r[i] != r[n - p];
            if (!distinct) continue;
            std::size_t laps = 1;
            while ((laps + 1) * p <= n) {
                bool same = true;
                for (std::size_t i = 0; i < p && same; ++i)
                    same = r[n - (laps + 1) * p + i] == r[n - p + i];
                if (!same) break;
                ++laps;
            }
            if (laps < 2) continue;
            // The same lap seen from any starting point is one cycle.
            std::vector<std::string> lap(r.end() - static_cast<std::ptrdiff_t>(p), r.end());
            auto smallest = std::min_element(lap.begin(), lap.end());
            std::rotate(lap.begin(), smallest, lap.end());
            std::string shown;
            for (const auto& s : lap)
                shown += (shown.empty() ? "" : " → ") + s;
            if (laps >= options_.cycle_hard_limit)
                return {std::nullopt, fmt::format(fmt::runtime(cycle_hard_stop_format), shown, laps)};
            if (laps >= options_.cycle_warn) {
                if (t.warned_cycles.insert(shown).second)
                    return {fmt::format(fmt::runtime(cycle_warning_format), shown), std::nullopt};
                return {};
            }
            return {};
        }
        t.warned_cycles.clear(); // no cycle now: a later one may warn again
        return {};
    }

    void queue_warning(const detail::run_key& key, std::string text) {
        auto& p = shared_->pending;
        auto it = std::find_if(p.begin(), p.end(), [&](const auto& e) { return e.first == key; });
        if (it == p.end()) {
            p.emplace_back(key, std::vector<std::string>{});
            while (p.size() > 2 * options_.max_tracked_threads)
                p.pop_front();
            it = std::prev(p.end());
        }
        auto& list = it->second;
        if (std::find(list.begin(), list.end(), text) != list.end()) return;
        list.push_back(std::move(text));
        if (list.size() > max_pending_warnings_per_run)
            list.erase(list.begin(), list.end() - static_cast<std::ptrdiff_t>(max_pending_warnings_per_run));
    }

    std::vector<std::string> take_warnings(const detail::run_key& key) {
        std::lock_guard lock(shared_->mutex);
        auto& p = shared_->pending;
        auto it = std::find_if(p.begin(), p.end(), [&](const auto& e) { return e.first == key; });
        if (it == p.end()) return {};
        std::vector<std::string> out = std::move(it->second);
        p.erase(it);
        return out;
    }

    void record_stop_reason(const std::string& run_id) {
        auto& s = shared_->stop_reasons;
        auto it = std::find_if(s.begin(), s.end(), [&](const auto& e) { return e.first == run_id; });
        if (it != s.end()) s.erase(it);
        s.emplace_back(run_id, std::string(stop_reason_value));
        while (s.size() > max_stop_reasons)
            s.pop_front();
    }

    loop_detection_options options_;
    std::size_t freq_window_ = 0;
    std::size_t cycle_window_ = 0;
    std::shared_ptr<tracker> shared_; // shared with copies: an agent's copies are one agent
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const tool_frequency_limit& l) {
    jv = boost::json::object{{"warn", l.warn}, {"hard_limit", l.hard_limit}};
}
inline tool_frequency_limit tag_invoke(boost::json::value_to_tag<tool_frequency_limit>,
                                       const boost::json::value& jv) {
    json_reader r(jv);
    tool_frequency_limit l{r.required<std::size_t>("warn"), r.required<std::size_t>("hard_limit")};
    r.reject_unknown_keys();
    return l;
}

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const loop_detection_options& o) {
    jv = boost::json::object{{"warn_threshold", o.warn_threshold},
                             {"hard_limit", o.hard_limit},
                             {"window_size", o.window_size},
                             {"max_tracked_threads", o.max_tracked_threads},
                             {"tool_freq_warn", o.tool_freq_warn},
                             {"tool_freq_hard_limit", o.tool_freq_hard_limit},
                             {"tool_freq_overrides", boost::json::value_from(o.tool_freq_overrides)},
                             {"batch_friendly_tools", boost::json::value_from(o.batch_friendly_tools)},
                             {"detect_cycles", o.detect_cycles},
                             {"cycle_warn", o.cycle_warn},
                             {"cycle_hard_limit", o.cycle_hard_limit},
                             {"max_cycle_length", o.max_cycle_length},
                             {"disable_context_key", o.disable_context_key}};
}

/// Reads DeerFlow's `loop_detection:` keys (missing keys keep their defaults),
/// then validates the thresholds as DeerFlow's configuration does.
inline loop_detection_options tag_invoke(boost::json::value_to_tag<loop_detection_options>,
                                         const boost::json::value& jv) {
    json_reader r(jv, std::string(loop_detection_options::config_section));
    loop_detection_options o;
    r.read("warn_threshold", o.warn_threshold)
        .read("hard_limit", o.hard_limit)
        .read("window_size", o.window_size)
        .read("max_tracked_threads", o.max_tracked_threads)
        .read("tool_freq_warn", o.tool_freq_warn)
        .read("tool_freq_hard_limit", o.tool_freq_hard_limit)
        .read("tool_freq_overrides", o.tool_freq_overrides)
        .read("batch_friendly_tools", o.batch_friendly_tools)
        .read("detect_cycles", o.detect_cycles)
        .read("cycle_warn", o.cycle_warn)
        .read("cycle_hard_limit", o.cycle_hard_limit)
        .read("max_cycle_length", o.max_cycle_length)
        .read("disable_context_key", o.disable_context_key)
        .reject_unknown_keys();
    r.validate(o);
    return o;
}

} // namespace agentware

#endif
