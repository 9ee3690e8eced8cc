#ifndef AGENTWARE_SERVER_DETAIL_POSTGRES_CALLS_HPP
#define AGENTWARE_SERVER_DETAIL_POSTGRES_CALLS_HPP

// What the server's PostgreSQL parts (store, run queue, event bus) share: a
// pool belongs to one thread, so each call runs its statements on the pool's
// executor and resumes its caller on the caller's; and announcements heard on
// a LISTEN connection of their own, whose callbacks stop for good at stop().

#include <agentware/postgres/listener.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace agentware::server::detail {

/// Runs `body` on `pool_executor` (none: on the caller's own).
template <class T>
boost::asio::awaitable<T> on_pool(const boost::asio::any_io_executor& pool_executor,
                                  boost::asio::awaitable<T> body) {
    if (!pool_executor) return body;
    return boost::asio::co_spawn(pool_executor, std::move(body), boost::asio::use_awaitable);
}

/// LISTEN on channels (a postgres::listener on `executor`) with a callback
/// that no longer runs once stop() returned (a call in progress is waited for).
class announcements {
public:
    using callback = std::function<void(const postgres::notification&)>;

    ~announcements() { stop(); }

    /// `on_listening` runs after each (re)connection: what was announced meanwhile is unknown.
    void start(std::string conninfo, std::vector<std::string> channels, boost::asio::any_io_executor executor,
               callback on_notification, std::function<void()> on_listening) {
        stop();
        auto told = std::make_shared<calls>();
        told->on_notification = std::move(on_notification);
        told->on_listening = std::move(on_listening);
        calls_ = told;
        postgres::listener_options lo;
        lo.conninfo = std::move(conninfo);
        lo.channels = std::move(channels);
        lo.on_notification = [told](const postgres::notification& n) {
            std::lock_guard lock(told->mutex);
            if (told->on_notification) told->on_notification(n);
        };
        lo.on_listening = [told] {
            std::lock_guard lock(told->mutex);
            if (told->on_listening) told->on_listening();
        };
        executor_ = std::move(executor);
        listener_ = std::make_shared<postgres::listener>(std::move(lo));
        listener_->start(executor_);
    }

    void stop() {
        if (calls_) {
            std::lock_guard lock(calls_->mutex);
            calls_->on_notification = nullptr;
            calls_->on_listening = nullptr;
        }
        calls_.reset();
        if (!listener_) return;
        // Stopped and destroyed on its own executor: its coroutine lives there.
        boost::asio::post(executor_, [l = std::move(listener_)] { l->stop(); });
        listener_.reset();
    }

private:
    struct calls {
        std::mutex mutex;
        callback on_notification;
        std::function<void()> on_listening;
    };
    std::shared_ptr<calls> calls_;
    boost::asio::any_io_executor executor_;
    std::shared_ptr<postgres::listener> listener_;
};

} // namespace agentware::server::detail

#endif
