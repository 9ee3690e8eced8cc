#ifndef AGENTWARE_MIDDLEWARE_DETAIL_ASYNC_GATES_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_ASYNC_GATES_HPP

// One asynchronous lock per key, for the coroutine loop: a coroutine that
// finds its key's gate taken is suspended (its completion handler queued), so
// no thread waits; the holder's release hands the gate to the first waiter
// and posts it to that waiter's executor. A gate exists only while it is held
// or waited for.
//
// `std::mutex` guards only the table, never across a suspension.

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace agentware::detail {

class async_gates {
public:
    /// Holds a gate; releases it when destroyed.
    class holder {
    public:
        holder() = default;
        holder(async_gates& gates, std::string key) : gates_(&gates), key_(std::move(key)) {}
        holder(holder&& o) noexcept : gates_(std::exchange(o.gates_, nullptr)), key_(std::move(o.key_)) {}
        holder& operator=(holder&& o) noexcept {
            if (this != &o) {
                reset();
                gates_ = std::exchange(o.gates_, nullptr);
                key_ = std::move(o.key_);
            }
            return *this;
        }
        holder(const holder&) = delete;
        holder& operator=(const holder&) = delete;
        ~holder() { reset(); }

    private:
        void reset() noexcept {
            if (gates_) std::exchange(gates_, nullptr)->release(key_);
        }
        async_gates* gates_ = nullptr;
        std::string key_;
    };

    /// Takes `key`'s gate if it is free.
    bool try_acquire(const std::string& key) {
        std::lock_guard lock(mutex_);
        return waiters_.try_emplace(key).second;
    }

    /// Completes (signature `void()`) once the caller holds `key`'s gate; the
    /// caller then makes a `holder` for it. For a coroutine:
    /// `co_await gates.async_acquire(key, boost::asio::use_awaitable)`.
    template <class CompletionToken>
    auto async_acquire(std::string key, CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void()>(
            [this](auto handler, std::string k) {
                std::unique_lock lock(mutex_);
                auto [it, free] = waiters_.try_emplace(std::move(k));
                boost::asio::any_io_executor ex = boost::asio::get_associated_executor(handler);
                if (!free) {
                    it->second.push_back({std::move(ex), std::move(handler)});
                    return;
                }
                lock.unlock();
                // Taken at once; completed through the handler's executor, never inside the initiation.
                boost::asio::post(ex, std::move(handler));
            },
            token, std::move(key));
    }

    /// Awaits `key`'s gate and returns its holder (a coroutine on an `Executor`).
    template <class Executor = boost::asio::any_io_executor>
    boost::asio::awaitable<holder, Executor> acquire(std::string key) {
        if (!try_acquire(key)) co_await async_acquire(key, boost::asio::use_awaitable_t<Executor>{});
        co_return holder(*this, std::move(key));
    }

    /// Gates held or waited for (for tests).
    std::size_t size() const {
        std::lock_guard lock(mutex_);
        return waiters_.size();
    }

private:
    void release(const std::string& key) noexcept {
        std::unique_lock lock(mutex_);
        const auto it = waiters_.find(key);
        if (it == waiters_.end()) return;
        if (it->second.empty()) {
            waiters_.erase(it);
            return;
        }
        // Handed over: the gate stays taken, now by the first waiter.
        waiter next = std::move(it->second.front());
        it->second.pop_front();
        lock.unlock();
        boost::asio::post(next.executor, std::move(next.handler));
    }

    // A coroutine waiting for a gate: where it runs and how it is resumed.
    struct waiter {
        boost::asio::any_io_executor executor;
        boost::asio::any_completion_handler<void()> handler;
    };

    mutable std::mutex mutex_;
    // A key present is a gate taken; its queue, the coroutines waiting for it in order.
    std::unordered_map<std::string, std::deque<waiter>> waiters_;
};

} // namespace agentware::detail

#endif
