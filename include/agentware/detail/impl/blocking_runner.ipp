#ifndef AGENTWARE_DETAIL_IMPL_BLOCKING_RUNNER_IPP
#define AGENTWARE_DETAIL_IMPL_BLOCKING_RUNNER_IPP

#include <agentware/detail/blocking_runner.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <future>

namespace agentware::detail {

blocking_runner::blocking_runner() = default;
blocking_runner::~blocking_runner() = default;

AGENTWARE_CORO_DEF void blocking_runner::run_to_end(boost::asio::awaitable<void> call) {
    std::unique_ptr<boost::asio::io_context> io;
    {
        std::lock_guard lock(mutex_);
        if (!contexts_.empty()) {
            io = std::move(contexts_.back());
            contexts_.pop_back();
        }
    }
    if (!io) io = std::make_unique<boost::asio::io_context>(1);
    io->restart();
    std::exception_ptr failure;
    bool ended = false;
    boost::asio::co_spawn(*io, std::move(call), [&](std::exception_ptr e) {
        failure = e;
        ended = true;
    });
    io->run();
    if (!ended) {
        // It waits on nothing its context tracks, or its context was stopped: it goes
        // with its context, so that it never calls back into this finished call, and is
        // reported as a std::future would report it.
        io.reset();
        throw std::future_error(std::future_errc::broken_promise);
    }
    {
        std::lock_guard lock(mutex_);
        contexts_.push_back(std::move(io));
    }
    if (failure) std::rethrow_exception(failure); // what the call threw
}

} // namespace agentware::detail

#endif
