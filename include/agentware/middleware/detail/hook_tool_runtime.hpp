#ifndef AGENTWARE_MIDDLEWARE_DETAIL_HOOK_TOOL_RUNTIME_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_HOOK_TOOL_RUNTIME_HPP

// A tool runtime for a hook: hooks have the state and the run, not a tool's
// runtime, yet call what takes one (a filesystem backend_factory).

#include <agentware/agent/runtime.hpp>
#include <agentware/tool/tool.hpp>

#include <string_view>

namespace agentware::detail {

/// The run's ids, context, events, stop token and model, and read access to
/// `state` (when its type offers it, as basic_state does).
template <class State>
tool_runtime hook_tool_runtime(const State& state, const runtime* rt, std::string_view tool_call_id = {}) {
    tool_runtime trt;
    if (rt) {
        trt.thread_id = rt->thread_id;
        trt.run_id = rt->run_id;
        trt.context = &rt->context;
        trt.events = rt->events;
        trt.stop = rt->stop;
        trt.model = rt->model;
    }
    trt.tool_call_id = tool_call_id;
    if constexpr (requires { &State::find_field; }) trt.bind_state(state);
    return trt;
}

} // namespace agentware::detail

#endif
