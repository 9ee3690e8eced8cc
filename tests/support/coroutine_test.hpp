// A test's body as a coroutine on an event loop of its own.
#ifndef AGENTWARE_TESTS_SUPPORT_COROUTINE_TEST_HPP
#define AGENTWARE_TESTS_SUPPORT_COROUTINE_TEST_HPP

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <exception>
#include <functional>

namespace agentware::test {

/// Runs `body()` to its end on a fresh event loop; its exception (a failed
/// REQUIRE among them) is the caller's.
inline void run_coroutine(const std::function<boost::asio::awaitable<void>()>& body) {
    boost::asio::io_context io;
    std::exception_ptr failure;
    boost::asio::co_spawn(io, body(), [&](std::exception_ptr e) { failure = e; });
    io.run();
    if (failure) std::rethrow_exception(failure);
}

inline boost::asio::awaitable<void> sleep_for(std::chrono::milliseconds d) {
    boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, d);
    co_await t.async_wait(boost::asio::use_awaitable);
}

/// Runs `body(0)` to `body(n - 1)` side by side on the caller's event loop
/// and waits for them all; the first failure is rethrown.
inline boost::asio::awaitable<void> side_by_side(int n,
                                                 std::function<boost::asio::awaitable<void>(int)> body) {
    const auto ex = co_await boost::asio::this_coro::executor;
    int finished = 0;
    std::exception_ptr failure;
    for (int i = 0; i < n; ++i)
        boost::asio::co_spawn(ex, body(i), [&](std::exception_ptr e) {
            if (e && !failure) failure = e;
            ++finished;
        });
    while (finished < n)
        co_await sleep_for(std::chrono::milliseconds(5));
    if (failure) std::rethrow_exception(failure);
}

} // namespace agentware::test

#endif
