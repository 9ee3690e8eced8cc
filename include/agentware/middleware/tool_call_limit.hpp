#ifndef AGENTWARE_MIDDLEWARE_TOOL_CALL_LIMIT_HPP
#define AGENTWARE_MIDDLEWARE_TOOL_CALL_LIMIT_HPP

// tool_call_limit: caps how many calls of one tool (or of all tools) an agent
// makes, per thread and per run (LangChain's ToolCallLimitMiddleware, the
// current Python design). After each model answer the matching calls are
// taken in order; a call is allowed while one more stays within both limits,
// else it is blocked: it gets an error tool message instead of running.
//   continue: blocked calls are answered, the others run, the model goes on;
//   error:    throws tool_call_limit_exceeded;
//   end:      also appends an ai message that says which limit, and ends
//             the run (refused when other tools' calls are in the answer).
// The counts are state fields keyed by tool name ("__all__" for all tools),
// so several limits (`basic_tool_call_limit<Tag>`) share them.

#include <agentware/agent/runtime.hpp>
#include <agentware/core/jump.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/id.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/call_limits.hpp>
#include <agentware/state/basic_state.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// Tool calls allowed in the thread, by tool name ("__all__": every tool).
struct thread_tool_call_count {
    static constexpr std::string_view name = "thread_tool_call_count";
    using value_type = std::map<std::string, std::size_t, std::less<>>;
};
/// Tool calls allowed in the current run, by tool name; reset when a run starts.
struct run_tool_call_count {
    static constexpr std::string_view name = "run_tool_call_count";
    using value_type = std::map<std::string, std::size_t, std::less<>>;
};

struct tool_call_limit_options {
    std::optional<std::string> tool_name;          ///< none: all tools count together
    std::optional<std::size_t> thread_limit;       ///< none: no limit per thread
    std::optional<std::size_t> run_limit;          ///< none: no limit per run
    exit_behavior exit = exit_behavior::continue_; ///< `continue`, `error` or `end`

    void validate() const {
        if (!thread_limit && !run_limit)
            throw std::invalid_argument("At least one limit must be specified (thread_limit or run_limit)");
        if (thread_limit && run_limit && *run_limit > *thread_limit)
            throw std::invalid_argument(detail::format(
                "run_limit ({}) cannot exceed thread_limit ({}). The run limit should be less than or equal "
                "to the thread limit.",
                *run_limit, *thread_limit));
    }

    static constexpr std::string_view config_section = "tool_call_limit";
    friend bool operator==(const tool_call_limit_options&, const tool_call_limit_options&) = default;
};

/// Thrown by tool_call_limit with `exit_behavior::error`, and with `end` when
/// other tools' calls are pending (`other_calls_pending`).
class tool_call_limit_exceeded : public std::runtime_error {
public:
    explicit tool_call_limit_exceeded(std::string what, bool other_calls_pending = false)
        : std::runtime_error(std::move(what)), other_calls_pending(other_calls_pending) {}
    bool other_calls_pending;
};

template <class Tag = void>
struct basic_tool_call_limit {
    using state_fields = fields<thread_tool_call_count, run_tool_call_count>;
    static constexpr std::string_view all_tools_key = "__all__";

    explicit basic_tool_call_limit(tool_call_limit_options o) : options_(std::move(o)) {
        options_.validate();
    }

    const tool_call_limit_options& options() const noexcept { return options_; }
    const std::string& count_key() const noexcept { return key_; }

    /// What a blocked call's tool message says.
    std::string blocked_text() const {
        // Text kept for parity with LangChain (next.md §1.5).
        if (options_.tool_name)
            return detail::format("Tool call limit exceeded. Do not call '{}' again.", *options_.tool_name);
        return "Tool call limit exceeded. Do not make additional tool calls.";
    }

    /// What the run's last ai message says with `end` (and what `error` throws).
    std::string final_text(std::size_t thread_count, std::size_t run_count) const {
        // Text kept for parity with LangChain (next.md §1.5).
        const std::string tool =
            options_.tool_name ? detail::format("'{}' tool", *options_.tool_name) : std::string("Tool");
        std::string parts;
        if (options_.thread_limit && thread_count > *options_.thread_limit)
            parts +=
                detail::format("thread limit exceeded ({}/{} calls)", thread_count, *options_.thread_limit);
        if (options_.run_limit && run_count > *options_.run_limit)
            parts += detail::format("{}run limit exceeded ({}/{} calls)", parts.empty() ? "" : " and ",
                                    run_count, *options_.run_limit);
        return detail::format("{} call limit reached: {}.", tool, parts);
    }

    template <class State>
    void before_agent(State& state, runtime&) {
        get<run_tool_call_count>(state).erase(key_);
    }

    template <class State>
    hook_result after_model(State& state, runtime&) {
        auto& messages = state.messages;
        std::size_t ai = messages.size();
        while (ai > 0 && !messages[ai - 1].is_ai())
            --ai;
        if (ai == 0 || messages[ai - 1].tool_calls.empty()) return std::nullopt;
        --ai;

        auto& thread_counts = get<thread_tool_call_count>(state);
        auto& run_counts = get<run_tool_call_count>(state);
        std::size_t thread_count = thread_counts[key_];
        std::size_t run_count = run_counts[key_];
        std::vector<const tool_call*> blocked;
        std::set<std::string, std::less<>> others;
        for (const tool_call& c : messages[ai].tool_calls) {
            if (options_.tool_name && c.name != *options_.tool_name) {
                others.insert(c.name);
                continue;
            }
            const bool over = (options_.thread_limit && thread_count + 1 > *options_.thread_limit) ||
                              (options_.run_limit && run_count + 1 > *options_.run_limit);
            if (over) {
                blocked.push_back(&c);
            } else {
                ++thread_count;
                ++run_count;
            }
        }
        thread_counts[key_] = thread_count;
        run_counts[key_] = run_count;
        if (blocked.empty()) return std::nullopt;

        // The counts had the blocked calls run.
        const std::size_t would_thread = thread_count + blocked.size();
        const std::size_t would_run = run_count + blocked.size();
        if (options_.exit == exit_behavior::error)
            throw tool_call_limit_exceeded(final_text(would_thread, would_run));
        if (options_.exit == exit_behavior::end && !others.empty()) {
            std::string names;
            for (const auto& n : others)
                names += (names.empty() ? "" : ", ") + n;
            // Text kept for parity with LangChain (next.md §1.5).
            throw tool_call_limit_exceeded(
                detail::format("Cannot end execution with other tool calls pending. Found "
                               "calls to: {}. Use 'continue' or 'error' behavior instead.",
                               names),
                true);
        }
        std::vector<message> answers;
        answers.reserve(blocked.size() + 1);
        for (const tool_call* c : blocked)
            answers.push_back(tool_message(c->id, c->name, blocked_text(), tool_status::error));
        if (options_.exit == exit_behavior::end)
            answers.push_back(ai_message(final_text(would_thread, would_run)));
        for (auto& m : answers) {
            m.id = make_message_id();
            messages.push_back(std::move(m));
        }
        if (options_.exit == exit_behavior::end) {
            return jump_to::end;
        }
        // Every call answered: nothing for the tools to run, so the model
        // reads the answers next (LangChain routes back to the model too).
        for (const tool_call& c : messages[ai].tool_calls)
            if (!answered(messages, ai, c.id)) return std::nullopt;
        return jump_to::model;
    }

private:
    static bool answered(const std::vector<message>& messages, std::size_t ai, std::string_view id) {
        for (std::size_t i = ai + 1; i < messages.size(); ++i)
            if (messages[i].is_tool() && messages[i].tool_call_id() == id) return true;
        return false;
    }

    tool_call_limit_options options_;
    std::string key_ = options_.tool_name.value_or(std::string(all_tools_key));
};

/// The usual single limit; `basic_tool_call_limit<Tag>` for more in one pipeline.
using tool_call_limit = basic_tool_call_limit<>;

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                       const tool_call_limit_options& o) {
    auto opt = [](const std::optional<std::size_t>& v) {
        return v ? boost::json::value(*v) : boost::json::value(nullptr);
    };
    jv = boost::json::object{
        {"tool_name", o.tool_name ? boost::json::value(*o.tool_name) : boost::json::value(nullptr)},
        {"thread_limit", opt(o.thread_limit)},
        {"run_limit", opt(o.run_limit)},
        {"exit_behavior", to_string(o.exit)}};
}

/// Reads LangChain's parameter names (`tool_name`, `thread_limit`, `run_limit`, `exit_behavior`).
inline tool_call_limit_options tag_invoke(boost::json::value_to_tag<tool_call_limit_options>,
                                          const boost::json::value& jv) {
    json_reader r(jv, std::string(tool_call_limit_options::config_section));
    tool_call_limit_options o;
    r.read("tool_name", o.tool_name).read("thread_limit", o.thread_limit).read("run_limit", o.run_limit);
    detail::read_exit_behavior(r, "exit_behavior", o.exit,
                               {exit_behavior::continue_, exit_behavior::error, exit_behavior::end});
    r.reject_unknown_keys();
    r.validate(o);
    return o;
}

} // namespace agentware

#endif
