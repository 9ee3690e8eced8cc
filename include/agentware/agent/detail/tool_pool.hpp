#ifndef AGENTWARE_AGENT_DETAIL_TOOL_POOL_HPP
#define AGENTWARE_AGENT_DETAIL_TOOL_POOL_HPP

// The threads that run a round's tool calls in the blocking loop.

#include <agentware/detail/config.hpp>

#include <cstddef>
#include <memory>
#include <mutex>

namespace boost::asio {
class thread_pool;
}

namespace agentware::detail {

/// A bounded pool for the tool calls of a round, made when first needed (an
/// agent that never runs two tools at once starts no thread). Not a member of
/// the agent template, and Asio's pool is only named here, so that the pool's
/// code and headers are compiled once per program with
/// AGENTWARE_SEPARATE_COMPILATION rather than in every file that makes an agent.
class tool_pool {
public:
    AGENTWARE_DECL explicit tool_pool(std::size_t threads);
    AGENTWARE_DECL ~tool_pool();

    /// The pool (the coroutine loop runs blocking tools on it; include
    /// <boost/asio/thread_pool.hpp> to use it).
    AGENTWARE_DECL boost::asio::thread_pool& get();

    /// Calls `run_one(i)` for every i below `count`: 0 on this thread, the
    /// others on the pool, side by side; returns when all have returned.
    /// `run_one` must not throw.
    template <class F>
    void run_side_by_side(std::size_t count, F& run_one) {
        run_erased(count, &run_one, [](void* f, std::size_t i) { (*static_cast<F*>(f))(i); });
    }

private:
    AGENTWARE_DECL void run_erased(std::size_t count, void* run_one, void (*call)(void*, std::size_t));

    std::size_t threads_;
    std::once_flag once_;
    std::unique_ptr<boost::asio::thread_pool> pool_;
};

} // namespace agentware::detail

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/agent/detail/impl/tool_pool.ipp>
#endif

#endif
