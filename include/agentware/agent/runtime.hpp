#ifndef AGENTWARE_AGENT_RUNTIME_HPP
#define AGENTWARE_AGENT_RUNTIME_HPP

#include <agentware/model/model_ref.hpp>

#include <boost/json/object.hpp>

#include <cstddef>
#include <functional>
#include <string>

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
    /// The run's event channel: what a hook reports while the run is under
    /// way (`{"type": "safety_termination", ...}`), DeerFlow's custom stream
    /// events. The agent sets it from `run_config::stream.on_event`, so the
    /// caller receives these beside the model calls' own events (`llm_retry`).
    /// Empty when nobody listens; call it through `detail::emit_event`.
    std::function<void(const boost::json::object&)> on_event{};
};

} // namespace agentware

#endif
