#ifndef AGENTWARE_AGENT_DETAIL_IMPL_TOOL_POOL_IPP
#define AGENTWARE_AGENT_DETAIL_IMPL_TOOL_POOL_IPP

#include <agentware/agent/detail/tool_pool.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include <latch>

namespace agentware::detail {

tool_pool::tool_pool(std::size_t threads) : threads_(threads > 0 ? threads : 1) {}

tool_pool::~tool_pool() = default;

boost::asio::thread_pool& tool_pool::get() {
    std::call_once(once_, [this] { pool_ = std::make_unique<boost::asio::thread_pool>(threads_); });
    return *pool_;
}

void tool_pool::run_erased(std::size_t count, void* run_one, void (*call)(void*, std::size_t)) {
    if (count == 0) return;
    std::latch done(static_cast<std::ptrdiff_t>(count - 1));
    for (std::size_t i = 1; i < count; ++i)
        boost::asio::post(get(), [&done, run_one, call, i] {
            call(run_one, i);
            done.count_down();
        });
    call(run_one, 0);
    done.wait();
}

} // namespace agentware::detail

#endif
