#ifndef AGENTWARE_AGENT_REQUESTS_HPP
#define AGENTWARE_AGENT_REQUESTS_HPP

// What the agent hands to the wrap hooks: a model request or a tool request,
// each with access to the state and the run.

#include <agentware/agent/runtime.hpp>
#include <agentware/core/cow.hpp>
#include <agentware/message/message.hpp>
#include <agentware/model/chat_model.hpp>
#include <agentware/state/update.hpp>
#include <agentware/tool/tool.hpp>
#include <agentware/tool/tool_set.hpp>

namespace agentware {

/// A model call as `wrap_model_call` sees it: the chat request the model will
/// receive (change it freely: it is this call's copy; the stored messages are
/// not touched) plus the agent's state and runtime.
template <class State>
struct model_request : chat_request {
    State* state = nullptr;
    runtime* rt = nullptr;
};

/// One tool call as `wrap_tool_call` sees it. `tool` is null when the model
/// named a tool that does not exist. Calls of one round run concurrently, so
/// the state and runtime are read-only here.
///
/// `call` borrows the call stored in the ai message (read it as `req.call->args`);
/// a hook that changes what the tool receives calls `req.call.edit()`, which
/// copies it once for this request, and leaves the history as the model wrote it.
template <class State>
struct tool_request {
    cow<tool_call> call;
    tool_interface* tool = nullptr;
    const State* state = nullptr;
    const runtime* rt = nullptr;
    const tool_set* tools = nullptr; ///< the tools offered in this round (the agent's and its middlewares')
};

/// Pauses the run from a wrap_tool_call hook, for this call (as a tool does
/// with `tool_runtime::interrupt`): throws agentware::interrupt with `payload`
/// the first time; when the run is resumed, the call goes through the chain
/// again and this returns the resume value. One interrupt per call: a hook and
/// the tool it wraps do not both interrupt the same call.
template <class State>
boost::json::value interrupt_call(const tool_request<State>& req, boost::json::value payload) {
    detail::resume_cursor cursor;
    if (req.rt != nullptr && req.rt->tool_resumes != nullptr)
        if (const auto* answers = req.rt->tool_resumes->if_contains(req.call->id))
            cursor.values = answers->if_array();
    return cursor.take(std::move(payload));
}

/// What one tool call produced: the tool message answering it, changes to the
/// state, and whether the run ends after this round.
/// What a tool call gives back. Every member has a default, so
/// `tool_response{msg}` compiles cleanly under -Wextra (no missing initializer).
struct tool_response {
    message msg{};
    state_update update{};
    bool end_run = false;
};

} // namespace agentware

#endif
