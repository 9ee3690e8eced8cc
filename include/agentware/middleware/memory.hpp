#ifndef AGENTWARE_MIDDLEWARE_MEMORY_HPP
#define AGENTWARE_MIDDLEWARE_MEMORY_HPP

// memory: hands each finished run's conversation to the memory manager
// (DeerFlow's MemoryMiddleware, reference §5.10). The manager filters it,
// detects signals and queues it; a background worker asks the memory model
// what to remember after the debounce and stores it (include/agentware/memory/).
// The hook only queues: it never waits for the model and never throws into
// the run.

#include <agentware/agent/runtime.hpp>
#include <agentware/memory/manager.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>

#include <boost/json/object.hpp>

#include <memory>
#include <string>
#include <utility>

namespace agentware {

namespace detail {
inline std::string context_agent_name(const boost::json::object& context) {
    if (const auto* v = context.if_contains("agent_name"); v && v->is_string())
        return std::string(v->get_string());
    return {};
}
} // namespace detail

struct memory {
    /// A manager built from the options; give it its model with set_model (or build the manager yourself).
    memory() : memory(memory_options{}) {}
    explicit memory(memory_options options)
        : manager_(std::make_shared<memory_manager>(std::move(options))) {}
    explicit memory(std::shared_ptr<memory_manager> manager) : manager_(std::move(manager)) {}

    const std::shared_ptr<memory_manager>& manager() const noexcept { return manager_; }

    template <class State>
    void after_agent(State& state, runtime& rt) noexcept {
        try {
            const memory_options& o = manager_->options();
            if (!o.enabled || o.mode == "tool" || state.messages.empty()) return;
            const std::string thread = detail::context_thread_id(&rt.context, rt.thread_id);
            if (thread.empty()) return;
            // Who and which trace are taken now, at enqueue time, not when the worker runs.
            manager_->add(thread, state.messages, detail::context_agent_name(rt.context),
                          detail::context_user_id(&rt.context), rt.run_id);
        } catch (...) {
            // Memory never fails a run (a full queue or an unsafe id is simply not remembered).
        }
    }

private:
    std::shared_ptr<memory_manager> manager_; // shared by copies: one agent, one queue
};

} // namespace agentware

#endif
