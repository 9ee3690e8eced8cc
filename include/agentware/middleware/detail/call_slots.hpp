#ifndef AGENTWARE_MIDDLEWARE_DETAIL_CALL_SLOTS_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_CALL_SLOTS_HPP

// A counting semaphore that both kinds of caller can wait on: a blocking
// caller waits on a condition variable, a coroutine is suspended (its thread
// goes on running other work) and resumed on its own executor when a slot is
// handed to it. Waiters are served first come, first served, whichever kind
// they are; a released slot goes straight to the oldest waiter, so a late
// caller cannot overtake one that waits.

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <variant>

namespace agentware::detail {

class call_slots {
public:
    explicit call_slots(int slots) : free_(slots) {
        if (slots < 1) throw std::invalid_argument("call_slots: at least one slot");
    }
    call_slots(const call_slots&) = delete;
    call_slots& operator=(const call_slots&) = delete;

    /// Blocks the calling thread until a slot is free, and takes it.
    void acquire() {
        std::unique_lock lock(mutex_);
        if (free_ > 0 && queue_.empty()) {
            --free_;
            return;
        }
        blocking_waiter me;
        queue_.emplace_back(&me);
        granted_.wait(lock, [&] { return me.granted; });
    }

    /// Completes (`void()`) once a slot is this caller's; the thread is not held meanwhile.
    template <class CompletionToken>
    auto async_acquire(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void()>(
            [this](auto handler) {
                boost::asio::any_io_executor executor = boost::asio::get_associated_executor(handler);
                std::unique_lock lock(mutex_);
                if (free_ > 0 && queue_.empty()) {
                    --free_;
                    lock.unlock();
                    resume(executor, std::move(handler));
                    return;
                }
                queue_.emplace_back(async_waiter{std::move(executor), std::move(handler)});
            },
            token);
    }

    /// Gives a slot back: to the oldest waiter if there is one.
    void release() {
        std::unique_lock lock(mutex_);
        if (queue_.empty()) {
            ++free_;
            return;
        }
        waiter next = std::move(queue_.front());
        queue_.pop_front();
        if (auto* b = std::get_if<blocking_waiter*>(&next)) {
            (*b)->granted = true;
            lock.unlock();
            granted_.notify_all();
        } else {
            lock.unlock();
            auto& w = std::get<async_waiter>(next);
            resume(w.executor, std::move(w.handler));
        }
    }

    /// Callers waiting for a slot now.
    std::size_t waiting() const {
        std::lock_guard lock(mutex_);
        return queue_.size();
    }

private:
    struct blocking_waiter {
        bool granted = false;
    };
    struct async_waiter {
        boost::asio::any_io_executor executor; // the waiting coroutine's
        boost::asio::any_completion_handler<void()> handler;
    };
    using waiter = std::variant<blocking_waiter*, async_waiter>;

    // Resumes a waiting coroutine on its own executor, never inside release().
    template <class Handler>
    static void resume(const boost::asio::any_io_executor& executor, Handler handler) {
        boost::asio::post(executor, [h = std::move(handler)]() mutable { std::move(h)(); });
    }

    mutable std::mutex mutex_;
    std::condition_variable granted_;
    int free_;
    std::deque<waiter> queue_;
};

/// Holds one slot for its lifetime.
class call_slot_guard {
public:
    explicit call_slot_guard(call_slots* slots) noexcept : slots_(slots) {}
    call_slot_guard(const call_slot_guard&) = delete;
    call_slot_guard& operator=(const call_slot_guard&) = delete;
    ~call_slot_guard() {
        if (slots_) slots_->release();
    }

private:
    call_slots* slots_;
};

} // namespace agentware::detail

#endif
