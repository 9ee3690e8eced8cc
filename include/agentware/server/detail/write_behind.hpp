#ifndef AGENTWARE_SERVER_DETAIL_WRITE_BEHIND_HPP
#define AGENTWARE_SERVER_DETAIL_WRITE_BEHIND_HPP

// What a run writes while it goes on: its checkpoints to the store, its events
// to the event bus. The agent saves its state and publishes its events from
// inside its loop, where it cannot wait for a database; the writer takes each
// item at once and writes them in order, what has gathered in one call, from
// the event loop while the run goes on (LangGraph's `async` durability: the
// step after a save runs while the save is written). The run flushes it before
// it reads the store again or ends, so every read after the run sees every item.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace agentware::server::detail {

template <class T>
class write_behind : public std::enable_shared_from_this<write_behind<T>> {
public:
    /// Writes the items gathered since the last call, in order.
    using write_function = std::function<boost::asio::awaitable<void>(std::vector<T>)>;

    write_behind(write_function write, boost::asio::any_io_executor ex)
        : write_(std::move(write)), ex_(std::move(ex)) {}

    /// Queues an item; callable from any thread (a blocking agent saves from the pool).
    void push(T item) {
        {
            std::lock_guard lock(mutex_);
            queue_.push_back(std::move(item));
            if (writing_) return;
            writing_ = true;
        }
        // Outside the lock: co_spawn may start the writer here and now.
        boost::asio::co_spawn(ex_, drain(this->shared_from_this()), boost::asio::detached);
    }

    /// Waits until every queued item is written; rethrows the first write
    /// that failed (after which nothing more was written) when `rethrow`.
    /// It looks every millisecond: a run waits for its last writes once, at its
    /// end, and no timer is shared between threads.
    boost::asio::awaitable<void> flush(bool rethrow = true) {
        boost::asio::steady_timer tick(co_await boost::asio::this_coro::executor);
        for (;;) {
            {
                std::lock_guard lock(mutex_);
                if (!writing_) {
                    if (rethrow && failure_) std::rethrow_exception(failure_);
                    co_return;
                }
            }
            tick.expires_after(std::chrono::milliseconds(1));
            co_await tick.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
        }
    }

private:
    static boost::asio::awaitable<void> drain(std::shared_ptr<write_behind> self) {
        for (;;) {
            std::vector<T> batch;
            {
                std::lock_guard lock(self->mutex_);
                if (self->queue_.empty() || self->failure_) {
                    self->queue_.clear();
                    self->writing_ = false;
                    co_return;
                }
                batch.swap(self->queue_);
            }
            try {
                co_await self->write_(std::move(batch));
            } catch (...) {
                std::lock_guard lock(self->mutex_);
                self->failure_ = std::current_exception();
            }
        }
    }

    write_function write_;
    boost::asio::any_io_executor ex_;
    std::mutex mutex_;
    std::vector<T> queue_;
    bool writing_ = false;
    std::exception_ptr failure_;
};

} // namespace agentware::server::detail

#endif
