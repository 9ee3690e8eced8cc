#ifndef AGENTWARE_MIDDLEWARE_MODEL_CALL_LIMIT_HPP
#define AGENTWARE_MIDDLEWARE_MODEL_CALL_LIMIT_HPP

// model_call_limit: stops an agent that calls the model too often, per thread
// (across runs) and per run (LangChain's ModelCallLimitMiddleware, Python's
// design). The counts are state fields: `thread_model_call_count` is kept
// with the thread; `run_model_call_count` starts at 0 in every run.
//   before_model: a count that has reached its limit ends the run, with an ai
//                 message that says which limit (`end`), or throws (`error`);
//   after_model:  counts the call.

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
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace agentware {

/// Model calls made in the thread, all runs together.
struct thread_model_call_count {
    static constexpr std::string_view name = "thread_model_call_count";
    using value_type = std::size_t;
};
/// Model calls made in the current run; reset when a run starts.
struct run_model_call_count {
    static constexpr std::string_view name = "run_model_call_count";
    using value_type = std::size_t;
};

struct model_call_limit_options {
    std::optional<std::size_t> thread_limit; ///< none: no limit per thread
    std::optional<std::size_t> run_limit;    ///< none: no limit per run
    exit_behavior exit = exit_behavior::end; ///< `end` or `error`

    /// Throws std::invalid_argument when no limit is set or the exit behaviour is `continue`.
    void validate() const {
        if (!thread_limit && !run_limit)
            throw std::invalid_argument("At least one limit must be specified (thread_limit or run_limit)");
        if (exit == exit_behavior::continue_)
            throw std::invalid_argument("Invalid exit_behavior: 'continue'. Must be 'end' or 'error'");
    }

    static constexpr std::string_view config_section = "model_call_limit";
    friend bool operator==(const model_call_limit_options&, const model_call_limit_options&) = default;
};

/// Thrown by model_call_limit with `exit_behavior::error`.
class model_call_limit_exceeded : public std::runtime_error {
public:
    model_call_limit_exceeded(std::string what, std::size_t thread_count, std::size_t run_count)
        : std::runtime_error(std::move(what)), thread_count(thread_count), run_count(run_count) {}
    std::size_t thread_count;
    std::size_t run_count;
};

struct model_call_limit {
    using state_fields = fields<thread_model_call_count, run_model_call_count>;

    explicit model_call_limit(model_call_limit_options o) : options_(std::move(o)) { options_.validate(); }

    const model_call_limit_options& options() const noexcept { return options_; }

    /// "Model call limits exceeded: thread limit (t/T), run limit (r/R)", only the parts exceeded.
    static std::string limit_text(std::size_t thread_count, std::size_t run_count,
                                  std::optional<std::size_t> thread_limit,
                                  std::optional<std::size_t> run_limit) {
        // Text kept for parity with LangChain (next.md §1.4, Python model_call_limit.py).
        std::string parts;
        if (thread_limit && thread_count >= *thread_limit)
            parts += detail::format("thread limit ({}/{})", thread_count, *thread_limit);
        if (run_limit && run_count >= *run_limit)
            parts += detail::format("{}run limit ({}/{})", parts.empty() ? "" : ", ", run_count, *run_limit);
        return "Model call limits exceeded: " + parts;
    }

    template <class State>
    void before_agent(State& state, runtime&) {
        get<run_model_call_count>(state) = 0;
    }

    template <class State>
    hook_result before_model(State& state, runtime&) {
        const std::size_t t = get<thread_model_call_count>(state);
        const std::size_t r = get<run_model_call_count>(state);
        const bool over = (options_.thread_limit && t >= *options_.thread_limit) ||
                          (options_.run_limit && r >= *options_.run_limit);
        if (!over) return std::nullopt;
        std::string text = limit_text(t, r, options_.thread_limit, options_.run_limit);
        if (options_.exit == exit_behavior::error) throw model_call_limit_exceeded(std::move(text), t, r);
        message m = ai_message(std::move(text));
        m.id = make_message_id();
        state.messages.push_back(std::move(m));
        return jump_to::end;
    }

    template <class State>
    void after_model(State& state, runtime&) {
        ++get<thread_model_call_count>(state);
        ++get<run_model_call_count>(state);
    }

private:
    model_call_limit_options options_;
};

namespace detail {
inline boost::json::value optional_count(const std::optional<std::size_t>& v) {
    return v ? boost::json::value(*v) : boost::json::value(nullptr);
}
} // namespace detail

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                       const model_call_limit_options& o) {
    jv = boost::json::object{{"thread_limit", detail::optional_count(o.thread_limit)},
                             {"run_limit", detail::optional_count(o.run_limit)},
                             {"exit_behavior", to_string(o.exit)}};
}

/// Reads LangChain's parameter names (`thread_limit`, `run_limit`, `exit_behavior`).
inline model_call_limit_options tag_invoke(boost::json::value_to_tag<model_call_limit_options>,
                                           const boost::json::value& jv) {
    json_reader r(jv, std::string(model_call_limit_options::config_section));
    model_call_limit_options o;
    r.read("thread_limit", o.thread_limit).read("run_limit", o.run_limit);
    detail::read_exit_behavior(r, "exit_behavior", o.exit, {exit_behavior::end, exit_behavior::error});
    r.reject_unknown_keys();
    r.validate(o);
    return o;
}

} // namespace agentware

#endif
