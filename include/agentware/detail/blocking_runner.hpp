#ifndef AGENTWARE_DETAIL_BLOCKING_RUNNER_HPP
#define AGENTWARE_DETAIL_BLOCKING_RUNNER_HPP

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
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
        // The call ends on this thread, inside run(): its value and what it threw are
        // kept here (a std::future's shared state and its once-only setting cost an
        // allocation and a few hundred instructions per call).
        std::exception_ptr failure;
        bool ended = false;
        if constexpr (std::is_void_v<T>) {
            boost::asio::co_spawn(*io, std::move(call), [&](std::exception_ptr e) {
                failure = std::move(e);
                ended = true;
            });
            io->run();
            finish(std::move(io), ended, failure);
        } else {
            std::optional<T> value;
            boost::asio::co_spawn(*io, std::move(call), [&](std::exception_ptr e, T v) {
                failure = std::move(e);
                if (!failure) value.emplace(std::move(v));
                ended = true;
            });
            io->run();
            finish(std::move(io), ended, failure);
            return std::move(*value);
        }
    }

private:
    // Gives the context back for the next call and throws what the call threw. A call
    // that did not end (its context was stopped, or it waits on nothing the context
    // tracks) goes with its context, so that it never calls back into the finished
    // run(), and is reported as a broken promise (a std::future waited for it forever).
    void finish(std::unique_ptr<boost::asio::io_context> io, bool ended, const std::exception_ptr& failure) {
        if (!ended) {
            io.reset();
            throw std::future_error(std::future_errc::broken_promise);
        }
        give(std::move(io));
        if (failure) std::rethrow_exception(failure);
    }

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
