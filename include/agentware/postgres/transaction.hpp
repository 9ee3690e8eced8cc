#ifndef AGENTWARE_POSTGRES_TRANSACTION_HPP
#define AGENTWARE_POSTGRES_TRANSACTION_HPP

// A transaction on a pooled connection: BEGIN, the caller's statements,
// COMMIT; ROLLBACK when they throw, so the connection goes back to the pool
// clean (and is closed when even the rollback fails). When the connection is
// lost, the whole transaction runs again as the pool's retry_lost_for allows:
// `body` may be called more than once.

#include <agentware/postgres/pool.hpp>

#include <boost/asio/awaitable.hpp>

#include <exception>
#include <optional>
#include <type_traits>

namespace agentware::postgres {

namespace detail {

template <class Awaitable, class F>
Awaitable one_transaction(pool& db, F& body) {
    using value = typename Awaitable::value_type;
    auto c = co_await db.acquire();
    co_await c->query("BEGIN");
    std::exception_ptr failure;
    std::conditional_t<std::is_void_v<value>, bool, std::optional<value>> out{};
    try {
        if constexpr (std::is_void_v<value>)
            co_await body(*c);
        else
            out.emplace(co_await body(*c));
    } catch (...) {
        failure = std::current_exception();
    }
    if (failure) {
        try {
            co_await c->query("ROLLBACK");
        } catch (const error&) {
            c->close();
        }
        std::rethrow_exception(failure);
    }
    co_await c->query("COMMIT");
    if constexpr (!std::is_void_v<value>) co_return std::move(*out);
}

} // namespace detail

/// Runs `body(connection&)`, a coroutine, inside a transaction and returns what it returns.
template <class F, class Awaitable = std::invoke_result_t<F&, connection&>>
Awaitable in_transaction(pool& db, F body) {
    return db.retrying(
        [&db, body = std::move(body)]() mutable { return detail::one_transaction<Awaitable>(db, body); });
}

} // namespace agentware::postgres

#endif
