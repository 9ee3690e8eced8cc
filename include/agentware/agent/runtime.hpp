#ifndef AGENTWARE_AGENT_RUNTIME_HPP
#define AGENTWARE_AGENT_RUNTIME_HPP

#include <agentware/model/event_sink.hpp>
#include <agentware/model/model_ref.hpp>
#include <agentware/tool/interrupt.hpp>

#include <boost/json/object.hpp>

#include <cstddef>
#include <stop_token>
#include <string>
#include <vector>

namespace agentware {

/// What the hooks of one run share: which thread and run this is, and the
/// run's context, a JSON object that middlewares and the caller read and write
/// (DeerFlow's `runtime.context`: `thread_id`, `user_id`, `sandbox_id`, ...).
struct runtime {
    std::string thread_id;
    std::string run_id;
    boost::json::object context;
    std::size_t round = 0; ///< model calls made so far in this run
    /// The run's model, lent for the run (not copied): what a middleware that
    /// needs a model and has none of its own configured calls (DeerFlow's
    /// summarization and title fall back to the agent's model). Empty when the
    /// runtime was not made by an agent.
    model_ref model{};
    /// The run's custom-event channel (`run_config::stream.on_event`): any hook
    /// may emit here, and tools through their `tool_runtime::events`.
    event_sink events{};
    /// Set when the caller asked the run to stop (`run_config::stop`): the loop
    /// checks it before each model call; long hooks and tools (the task tool's
    /// subagents) watch it to stop early.
    std::stop_token stop{};

    /// Pauses the run for a human (node hooks): throws agentware::interrupt
    /// with `payload`; the run stops with stop_reason::interrupted and the
    /// checkpointer keeps its state. When the thread is resumed
    /// (`invoke(resume{value}, config)`), the interrupted hook chain runs again
    /// and this call returns `value` instead. `held_calls` (after_model only):
    /// the calls of the last ai message that wait for the answer; the others
    /// run before the run pauses.
    boost::json::value interrupt(boost::json::value payload, std::vector<std::string> held_calls = {}) {
        return resumes.take(std::move(payload), std::move(held_calls));
    }

    /// Set by the agent on a resumed run, for the step that was interrupted:
    /// the answers for its hooks, and for its tool calls by call id.
    detail::resume_cursor resumes{};
    const boost::json::object* tool_resumes = nullptr;
    /// Set by `invoke` when the checkpointer keeps tool results one by one
    /// (result_checkpointer): each tool round saves the state first, then each
    /// result as its call completes.
    bool checkpoint_results = false;
};

} // namespace agentware

#endif
