#ifndef AGENTWARE_TOOL_TOOL_HPP
#define AGENTWARE_TOOL_TOOL_HPP

// What a tool is: a schema the model sees, and a call with JSON arguments and
// a runtime, returning content and optionally a state update or an end of the run.

#include <agentware/core/fields.hpp>
#include <agentware/detail/config.hpp>
#include <agentware/message/content.hpp>
#include <agentware/message/message.hpp>
#include <agentware/model/chat_model.hpp>
#include <agentware/model/event_sink.hpp>
#include <agentware/model/model_ref.hpp>
#include <agentware/state/update.hpp>
#include <agentware/tool/interrupt.hpp>

#include <agentware/detail/awaitable_fwd.hpp>
#include <boost/json/object.hpp>

#include <concepts>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

namespace agentware {

/// What a tool call produced.
struct tool_output {
    std::vector<content_block> content; ///< usually one text block
    tool_status status = tool_status::ok;
    state_update update;          ///< changes to other state fields (and extra messages)
    bool end_run = false;         ///< stop the run after this round (the result is still recorded)
    boost::json::object metadata; ///< the tool message's metadata (DeerFlow's additional_kwargs)

    tool_output() = default;
    // Implicit on purpose, so a tool may return its text. The block is made in
    // place and the text moved in once: this is on every tool call's path.
    tool_output(std::string&& text) { content.emplace_back().text = std::move(text); } // NOLINT
    tool_output(const std::string& text) : tool_output(std::string(text)) {}           // NOLINT
    tool_output(const char* text) : tool_output(std::string(text)) {}                  // NOLINT

    /// An error the model should read and react to (status error).
    static tool_output error(std::string text) {
        tool_output out(std::move(text));
        out.status = tool_status::error;
        return out;
    }
    std::string text() const {
        std::string out;
        for (const auto& b : content)
            if (b.is_text()) out += b.text;
        return out;
    }
};

/// What a tool may know of the run that calls it. Read-only: a tool changes
/// the state only through the update it returns.
class tool_runtime {
public:
    std::string_view thread_id;
    std::string_view run_id;
    std::string_view tool_call_id;
    const boost::json::object* context = nullptr; ///< the run's context (never null inside a run)
    const std::vector<message>* messages = nullptr;
    event_sink events;    ///< the run's custom-event channel (empty when nobody listens)
    std::stop_token stop; ///< requested when the run is asked to stop
    model_ref model;      ///< the run's model, lent for the call (empty outside an agent)
    /// On a resumed run, the answers to this call's earlier interrupts (set by the agent).
    detail::resume_cursor resumes;

    /// Pauses the run for a human: throws agentware::interrupt with `payload`
    /// (the run stops with stop_reason::interrupted, the round's other calls
    /// complete and are kept). When the run is resumed, this call runs again
    /// and `interrupt` returns the resume value instead.
    boost::json::value interrupt(boost::json::value payload) const {
        return resumes.take(std::move(payload));
    }

    /// The state field `F`, or nullptr when the agent's state has no such field.
    template <state_field F>
    const typename F::value_type* field() const noexcept {
        if (!find_field_) return nullptr;
        return static_cast<const typename F::value_type*>(find_field_(state_, &detail::field_tag<F>));
    }

    /// Binds the type-erased state (done by the agent).
    template <class State>
    void bind_state(const State& s) noexcept {
        state_ = &s;
        find_field_ = &State::find_field;
        messages = &s.messages;
    }

private:
    const void* state_ = nullptr;
    const void* (*find_field_)(const void*, const void*) noexcept = nullptr;
};

/// A tool that runs by blocking its thread: `schema()` names it and describes
/// its arguments; `call(args, runtime)` runs it. Anything it throws is the
/// wrap_tool_call chain's to handle (the tool_error_handling middleware turns
/// it into an error message).
template <class T>
concept blocking_tool = requires(T& t, const T& ct, const boost::json::object& args, const tool_runtime& rt) {
    { ct.schema() } -> std::convertible_to<const tool_schema&>;
    { t.call(args, rt) } -> std::convertible_to<tool_output>;
};

/// A tool whose call is a coroutine: `async_call(args, runtime)` is awaited on
/// the caller's executor, so a tool that waits on the network holds no thread.
/// `args` and `runtime` stay alive until the await completes.
template <class T>
concept async_tool = requires(T& t, const T& ct, const boost::json::object& args, const tool_runtime& rt) {
    { ct.schema() } -> std::convertible_to<const tool_schema&>;
    { t.async_call(args, rt) } -> std::same_as<detail::awaitable<tool_output>>;
};

/// A tool is either (a tool with both is taken as asynchronous in the
/// asynchronous loop, and as blocking in the blocking one).
template <class T>
concept tool = blocking_tool<T> || async_tool<T>;

class tool_interface;

namespace detail {
/// A blocking tool's call as an awaitable (it runs on the awaiting thread).
/// Only ever over `tool_interface`, not a user's type (a coroutine frame over
/// a type in an unnamed namespace draws a warning from GCC), but a template:
/// g++ 12 emits a non-template inline coroutine in every file that includes
/// its header, and a template only where a tool is made.
template <class Tool, class Output = tool_output> // a parameter: see model_ref::async_invoke_as
detail::awaitable<Output> call_as_awaitable(Tool& t, const boost::json::object& args,
                                            const tool_runtime& rt) {
    co_return t.call(args, rt);
}
} // namespace detail

/// The type-erased form the agent stores. Both calls work for every tool made
/// into one by `share_tool` (or a tool set): a blocking tool's `async_call`
/// runs `call` on the awaiting thread, and an asynchronous tool's `call` runs
/// `async_call` on an io_context of the tool's own. The asynchronous loop
/// awaits `async_call` when `is_async()`, and otherwise runs `call` on the
/// agent's pool, so that no blocking call holds its executor. A class derived
/// from this one directly is blocking unless it overrides the last two.
class tool_interface {
public:
    virtual ~tool_interface() = default;
    virtual const tool_schema& schema() const = 0;
    virtual tool_output call(const boost::json::object& args, const tool_runtime& rt) = 0;
    virtual bool is_async() const noexcept { return false; }
    /// True for a tool of an MCP server (DeerFlow's `deerflow_mcp` tag): its
    /// results come from elsewhere, as a web tool's (pii_redaction reads it).
    virtual bool is_mcp() const noexcept { return false; }
    AGENTWARE_DECL virtual detail::awaitable<tool_output> async_call(const boost::json::object& args,
                                                                     const tool_runtime& rt);
};

} // namespace agentware

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/tool/impl/tool.ipp>
#endif

#endif
