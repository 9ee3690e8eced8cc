#ifndef AGENTWARE_DETAIL_BLOCKING_RUNNER_HPP
#define AGENTWARE_DETAIL_BLOCKING_RUNNER_HPP

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <future>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace agentware::detail {

/// Runs a coroutine to its end on a private io_context, on the calling thread:
/// how asynchronous code (a model client, an asynchronous tool) is called from
/// blocking code.
///
/// A context is kept after its call and lent to the next one (each call has
/// one to itself; calls from several threads take different ones), and lives
/// as long as the runner. So what a call leaves bound to its executor, such as
/// a kept-alive connection in a pool keyed by executor, still works in the
/// next call instead of pointing at a destroyed context.
class blocking_runner {
public:
    blocking_runner() = default;
    blocking_runner(const blocking_runner&) = delete;
    blocking_runner& operator=(const blocking_runner&) = delete;

    template <class T>
    T run(boost::asio::awaitable<T> call) {
        std::unique_ptr<boost::asio::io_context> io = take();
        io->restart();
        std::future<T> result = boost::asio::co_spawn(*io, std::move(call), boost::asio::use_future);
        io->run();
        give(std::move(io));
        return result.get(); // the call's value, or what it threw
    }

private:
    std::unique_ptr<boost::asio::io_context> take() {
        std::lock_guard lock(mutex_);
        if (contexts_.empty()) return std::make_unique<boost::asio::io_context>(1);
        std::unique_ptr<boost::asio::io_context> io = std::move(contexts_.back());
        contexts_.pop_back();
        return io;
    }

    void give(std::unique_ptr<boost::asio::io_context> io) {
        std::lock_guard lock(mutex_);
        contexts_.push_back(std::move(io));
    }

    std::mutex mutex_;
    std::vector<std::unique_ptr<boost::asio::io_context>> contexts_;
};

} // namespace agentware::detail

#endif
