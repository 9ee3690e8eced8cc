#ifndef AGENTWARE_AGENT_DETAIL_IMPL_TOOL_POOL_IPP
#define AGENTWARE_AGENT_DETAIL_IMPL_TOOL_POOL_IPP

#include <agentware/agent/detail/tool_pool.hpp>

#include <mutex>

namespace agentware::detail {

boost::asio::thread_pool& tool_pool::get() {
    std::call_once(once_, [this] { pool_.emplace(threads_); });
    return *pool_;
}

} // namespace agentware::detail

#endif
