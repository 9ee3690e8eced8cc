#ifndef AGENTWARE_AGENT_COROUTINE_HOOKS_HPP
#define AGENTWARE_AGENT_COROUTINE_HOOKS_HPP

// How the blocking loop (agent::run, agent::invoke) runs a node hook that is a
// coroutine: to its end, on the calling thread, the way it runs an
// asynchronous tool. Included by the headers of middlewares that have such a
// hook, and by agent/async_loop.hpp; an agent whose hooks are all plain never
// needs it.

#include <agentware/agent/agent.hpp>
#include <agentware/detail/blocking_runner.hpp>

#include <boost/asio/awaitable.hpp>

#include <utility>

namespace agentware::detail {

/// The contexts that coroutine hooks of blocking runs borrow (one per
/// concurrent call, kept for the next: see blocking_runner).
inline blocking_runner& hook_runner() {
    static blocking_runner runner;
    return runner;
}

template <chat_model Model, class Pipeline>
struct hook_awaiter<agent<Model, Pipeline>> {
    template <class T>
    T operator()(boost::asio::awaitable<T> hook) const {
        return hook_runner().run(std::move(hook));
    }
};

} // namespace agentware::detail

#endif
