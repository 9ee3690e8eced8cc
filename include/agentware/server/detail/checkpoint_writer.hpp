#ifndef AGENTWARE_SERVER_DETAIL_CHECKPOINT_WRITER_HPP
#define AGENTWARE_SERVER_DETAIL_CHECKPOINT_WRITER_HPP

// A run's checkpoints on their way to the store. The agent saves its state
// from inside its loop, where it cannot wait for a database; the writer takes
// each checkpoint at once and writes them in order from the event loop while
// the run goes on (LangGraph's `async` durability: the step after a save runs
// while the save is written). The run flushes it before it reads the store
// again or ends, so every read after the run sees every checkpoint.

#include <agentware/server/store.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>

namespace agentware::server::detail {

class checkpoint_writer : public std::enable_shared_from_this<checkpoint_writer> {
public:
    checkpoint_writer(store& s, boost::asio::any_io_executor ex) : store_(s), ex_(std::move(ex)) {}

    /// Queues a checkpoint; callable from any thread (a blocking agent saves from the pool).
    void push(checkpoint_record c) {
        {
            std::lock_guard lock(mutex_);
            queue_.push_back(std::move(c));
            if (writing_) return;
            writing_ = true;
        }
        // Outside the lock: co_spawn may start the writer here and now.
        boost::asio::co_spawn(ex_, drain(shared_from_this()), boost::asio::detached);
    }

    /// Waits until every queued checkpoint is in the store; rethrows the first
    /// write that failed (after which nothing more was written) when `rethrow`.
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
    static boost::asio::awaitable<void> drain(std::shared_ptr<checkpoint_writer> self) {
        for (;;) {
            checkpoint_record next;
            {
                std::lock_guard lock(self->mutex_);
                if (self->queue_.empty() || self->failure_) {
                    self->queue_.clear();
                    self->writing_ = false;
                    co_return;
                }
                next = std::move(self->queue_.front());
                self->queue_.pop_front();
            }
            try {
                co_await self->store_.add_checkpoint(std::move(next));
            } catch (...) {
                std::lock_guard lock(self->mutex_);
                self->failure_ = std::current_exception();
            }
        }
    }

    store& store_;
    boost::asio::any_io_executor ex_;
    std::mutex mutex_;
    std::deque<checkpoint_record> queue_;
    bool writing_ = false;
    std::exception_ptr failure_;
};

} // namespace agentware::server::detail

#endif
