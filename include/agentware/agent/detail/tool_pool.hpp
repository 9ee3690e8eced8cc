#ifndef AGENTWARE_AGENT_DETAIL_TOOL_POOL_HPP
#define AGENTWARE_AGENT_DETAIL_TOOL_POOL_HPP

// The threads that run a round's tool calls in the blocking loop.

#include <agentware/detail/config.hpp>

#include <boost/asio/thread_pool.hpp>

#include <cstddef>
#include <mutex>
#include <optional>

namespace agentware::detail {

/// A bounded pool for the tool calls of a round, made when first needed (an
/// agent that never runs two tools at once starts no thread). Not a member of
/// the agent template, so that the pool's code is compiled once per program
/// with AGENTWARE_SEPARATE_COMPILATION rather than once per agent type.
class tool_pool {
public:
    explicit tool_pool(std::size_t threads) : threads_(threads > 0 ? threads : 1) {}
    AGENTWARE_DECL boost::asio::thread_pool& get();

private:
    std::size_t threads_;
    std::once_flag once_;
    std::optional<boost::asio::thread_pool> pool_;
};

} // namespace agentware::detail

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/agent/detail/impl/tool_pool.ipp>
#endif

#endif
