#ifndef AGENTWARE_POSTGRES_POOL_HPP
#define AGENTWARE_POSTGRES_POOL_HPP

// A few connections shared by many coroutines. A statement takes an idle
// connection, or opens one while fewer than `size` are open, or waits for
// one to come back. A connection that broke (the server restarted, a
// statement was cut short, a transaction was left open) is closed when it
// comes back or is found idle and broken, and the next statement opens a new
// one: reconnection is the pool's ordinary path, not a special case. With
// `retry_lost_for`, a statement or transaction whose connection was lost (the
// server restarting, or out of reach) runs again on a new one until that time
// has passed, so a restart of the server is a pause, not a failure. A pool
// and its leases belong to one thread (the event loop's).

#include <agentware/postgres/connection.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace agentware::postgres {

struct pool_options {
    /// libpq's connection string (keywords or a URI).
    std::string conninfo;
    /// Connections open at most.
    std::size_t size = 4;
    /// How long opening a connection may take.
    std::chrono::milliseconds connect_timeout{10'000};
    /// The server cancels a statement running longer (SQLSTATE 57014); 0 keeps the server's setting.
    std::chrono::milliseconds statement_timeout{0};
    /// How long a statement (or a transaction: in_transaction) that failed
    /// because its connection was lost is tried again, each time on a new
    /// connection after a pause that doubles from 50 ms to a second; 0 fails
    /// at once. A statement runs again only when its connection broke, so its
    /// transaction was rolled back unless the break fell between the server's
    /// commit and its answer: statements retried this way should be idempotent.
    std::chrono::milliseconds retry_lost_for{0};
};

class pool {
    struct shared {
        pool_options options;
        std::deque<connection> idle;
        std::size_t open = 0;
        std::deque<std::weak_ptr<boost::asio::steady_timer>> waiters;

        void wake_one() {
            while (!waiters.empty()) {
                auto w = waiters.front().lock();
                waiters.pop_front();
                if (w) {
                    w->cancel();
                    return;
                }
            }
        }
        void give_back(connection c) {
            if (c.usable())
                idle.push_back(std::move(c));
            else
                --open;
            wake_one();
        }
    };

public:
    /// A connection taken from the pool, given back when the lease ends.
    class lease {
    public:
        lease(lease&& other) noexcept = default;
        lease& operator=(lease&&) = delete;
        lease(const lease&) = delete;
        ~lease() {
            if (owner_ && c_) owner_->give_back(std::move(*c_));
        }
        connection& operator*() noexcept { return *c_; }
        connection* operator->() noexcept { return &*c_; }

    private:
        friend class pool;
        lease(std::shared_ptr<shared> owner, connection c) : owner_(std::move(owner)), c_(std::move(c)) {}
        std::shared_ptr<shared> owner_;
        std::optional<connection> c_;
    };

    explicit pool(pool_options options) : s_(std::make_shared<shared>()) {
        if (options.size == 0) options.size = 1;
        s_->options = std::move(options);
    }

    /// A connection: an idle one, a new one, or the next one given back.
    boost::asio::awaitable<lease> acquire() {
        namespace asio = boost::asio;
        auto s = s_;
        for (;;) {
            while (!s->idle.empty()) {
                connection c = std::move(s->idle.front());
                s->idle.pop_front();
                if (c.usable()) co_return lease(s, std::move(c));
                --s->open;
            }
            if (s->open < s->options.size) {
                ++s->open;
                std::optional<connection> c;
                try {
                    c.emplace(co_await open_one(s->options));
                } catch (...) {
                    --s->open;
                    s->wake_one();
                    throw;
                }
                co_return lease(s, std::move(*c));
            }
            auto waiter = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor,
                                                               asio::steady_timer::time_point::max());
            s->waiters.push_back(waiter);
            co_await waiter->async_wait(asio::as_tuple(asio::use_awaitable));
        }
    }

    /// One statement on a pooled connection (see connection::query).
    template <class... Args>
    boost::asio::awaitable<result> query(std::string_view sql, Args&&... args) {
        return query_with(std::string(sql), params_of(std::forward<Args>(args)...));
    }

    boost::asio::awaitable<result> query_with(std::string sql, std::vector<param> params) {
        return retrying(
            [this, sql = std::move(sql), params = std::move(params)]() -> boost::asio::awaitable<result> {
                auto c = co_await acquire();
                co_return co_await c->query_with(sql, params);
            });
    }

    /// Runs `attempt()` (a coroutine) again while it fails with a lost
    /// connection, for up to options().retry_lost_for.
    template <class F, class Awaitable = std::invoke_result_t<F&>>
    Awaitable retrying(F attempt) {
        namespace asio = boost::asio;
        const auto until = std::chrono::steady_clock::now() + s_->options.retry_lost_for;
        std::chrono::milliseconds pause{50};
        for (;;) {
            bool again = false;
            try {
                co_return co_await attempt();
            } catch (const error& e) {
                if (!e.connection_lost() || std::chrono::steady_clock::now() + pause > until) throw;
                again = true;
            }
            if (again) {
                asio::steady_timer wait(co_await asio::this_coro::executor, pause);
                co_await wait.async_wait(asio::as_tuple(asio::use_awaitable));
                pause = std::min(pause * 2, std::chrono::milliseconds(1'000));
            }
        }
    }

    /// Connections open now (idle or leased).
    std::size_t open() const noexcept { return s_->open; }
    std::size_t idle() const noexcept { return s_->idle.size(); }
    const pool_options& options() const noexcept { return s_->options; }

private:
    static boost::asio::awaitable<connection> open_one(const pool_options& o) {
        auto c = co_await connection::connect(o.conninfo, o.connect_timeout);
        if (o.statement_timeout.count() > 0) {
            co_await c.query("SELECT set_config('statement_timeout', $1, false)",
                             std::to_string(o.statement_timeout.count()));
        }
        co_return c;
    }

    std::shared_ptr<shared> s_;
};

} // namespace agentware::postgres

#endif
