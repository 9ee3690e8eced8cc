#ifndef AGENTWARE_AGENT_RUN_HPP
#define AGENTWARE_AGENT_RUN_HPP

// The inputs and outputs of one agent run.

#include <agentware/detail/config.hpp>
#include <agentware/message/message.hpp>
#include <agentware/model/chat_model.hpp>
#include <agentware/model/event_sink.hpp>
#include <agentware/tool/interrupt.hpp>

#include <boost/json/object.hpp>

#include <cstddef>
#include <exception>
#include <functional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// Why a run stopped.
enum class stop_reason {
    finished,        ///< the model answered without calling a tool
    ended_by_hook,   ///< a hook jumped to the end
    ended_by_tool,   ///< a tool (or a tool wrapper, like clarification) ended the run
    recursion_limit, ///< the run reached its round limit before a final answer
    error,           ///< the model, a tool, a hook or the checkpointer failed
    interrupted,     ///< a hook or a tool paused the run for a human (see `run_result::interrupts`)
};

constexpr std::string_view to_string(stop_reason r) noexcept {
    switch (r) {
    case stop_reason::finished:
        return "finished";
    case stop_reason::ended_by_hook:
        return "ended_by_hook";
    case stop_reason::ended_by_tool:
        return "ended_by_tool";
    case stop_reason::recursion_limit:
        return "recursion_limit";
    case stop_reason::error:
        return "error";
    case stop_reason::interrupted:
        return "interrupted";
    }
    return "unknown";
}

/// A step of a run as it happens: `node` is "model" (the new ai message) or
/// "tools" (the round's tool messages).
struct agent_update {
    std::string_view node;
    std::size_t round = 0;
    std::span<const message> messages;
};

/// Per-run settings.
struct run_config {
    std::string thread_id = "default"; ///< the conversation; its state is kept by the checkpointer
    std::string run_id;                ///< generated when empty
    std::size_t recursion_limit = 100; ///< passes through the loop before the run stops with an error
    boost::json::object context;       ///< starts the runtime's context (user_id, flags, ...)
    std::function<void(const agent_update&)> on_update; ///< each step, as it happens
    stream_handler stream;                              ///< model text deltas, when the model streams
                                                        ///< and `on_event`: the run's custom events
    /// Asks the run to stop: it ends with stop_reason::error before its next
    /// model call, and the subagents it delegated to stop at once.
    std::stop_token stop;
    /// Which delegated subagents' tokens, steps and events reach `stream.on_event`
    /// (all by default; none; or by subagent type). What the model sees is the same.
    subagent_stream_filter subagent_streams;
};

/// What a run did. The state itself (all messages, the new ones included) is
/// the caller's (`run`) or comes with the result (`invoke`).
struct run_result {
    stop_reason reason = stop_reason::finished;
    std::string error;            ///< for error and recursion_limit: what happened, readable
    std::exception_ptr exception; ///< for error: the original exception
    token_usage usage;
    std::size_t rounds = 0;            ///< model calls made
    std::size_t first_new_message = 0; ///< index of this run's first message (its input) in the state
    /// The runtime context as the run left it: what middlewares recorded there
    /// (DeerFlow's `stop_reason` such as "loop_capped", the sandbox id, ...).
    boost::json::object context;
    /// For interrupted: what each pending interrupt asks (the payload of the
    /// hook or tool that paused the run), in the order they were raised.
    /// Continue with `invoke(resume{value}, config)`.
    std::vector<interrupt_info> interrupts;

    bool ok() const noexcept {
        return reason != stop_reason::error && reason != stop_reason::recursion_limit;
    }
};

/// A run's result together with the thread's state after it.
template <class State>
struct invoke_result : run_result {
    State state;

    /// The messages this run added, its input included.
    std::span<const message> new_messages() const noexcept {
        std::size_t first =
            first_new_message <= state.messages.size() ? first_new_message : state.messages.size();
        return std::span<const message>(state.messages).subspan(first);
    }
    /// The text of the last ai message, or "" when there is none.
    std::string answer() const {
        for (auto it = state.messages.rbegin(); it != state.messages.rend(); ++it)
            if (it->is_ai()) return it->text();
        return {};
    }
};

/// What a run starts with: a user's text, a message, or several messages.
struct agent_input {
    std::vector<message> messages;

    agent_input() = default;
    AGENTWARE_DECL agent_input(std::string text);                     // NOLINT: implicit
    AGENTWARE_DECL agent_input(const char* text);                     // NOLINT: implicit
    agent_input(message m) { messages.push_back(std::move(m)); }      // NOLINT
    agent_input(std::vector<message> ms) : messages(std::move(ms)) {} // NOLINT
};

} // namespace agentware

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/agent/impl/run.ipp>
#endif

#endif
