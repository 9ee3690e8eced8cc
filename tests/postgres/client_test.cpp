// The PostgreSQL client against a real server (tests/support/postgres_server.hpp):
// statements with parameters, errors and their SQLSTATEs, the server's
// statement timeout, LISTEN/NOTIFY, the pool's bound and its reconnection
// after a restart, and connection strings that never show a password.

#include "../support/coroutine_test.hpp"
#include "../support/postgres_server.hpp"

#include <agentware/postgres/connection.hpp>
#include <agentware/postgres/conninfo.hpp>
#include <agentware/postgres/listener.hpp>
#include <agentware/postgres/pool.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <set>
#include <string>

// co_await never sits inside a CHECK or REQUIRE: g++ 12 miscompiles an
// awaited call inside Catch's expression templates.

namespace postgres_client_test {

namespace asio = boost::asio;
namespace pg = agentware::postgres;
using agentware::test::postgres_server;

using agentware::test::sleep_for;
constexpr auto run = agentware::test::run_coroutine;

// A table of the test's own, so tests share one server without sharing rows.
std::string fresh_table(const char* prefix) {
    static int n = 0;
    return std::string(prefix) + "_" + std::to_string(::getpid()) + "_" + std::to_string(++n);
}

TEST_CASE("postgres: a statement with parameters returns typed values and NULL", "[postgres]") {
    auto& server = postgres_server::shared();
    run([&]() -> asio::awaitable<void> {
        auto c = co_await pg::connection::connect(server.conninfo());
        auto r = co_await c.query("SELECT $1::int + 1 AS n, $2::text AS s, $3::bool AS b, $4::float8 AS f, "
                                  "$5::text AS nothing, $6::text AS quoted",
                                  41, "héllo", true, 2.5, nullptr, "'; DROP TABLE x; --");
        REQUIRE(r.size() == 1);
        REQUIRE(r.columns() == 6);
        CHECK(r.as<int>(0, "n") == 42);
        CHECK(r.as<std::string>(0, "s") == "héllo");
        CHECK(r.as<bool>(0, "b"));
        CHECK(r.as<double>(0, "f") == 2.5);
        CHECK(r.is_null(0, r.column("nothing")));
        CHECK_FALSE(r.text(0, "nothing"));
        CHECK(r.as<std::string>(0, "quoted") == "'; DROP TABLE x; --");
        CHECK_THROWS_WITH(r.as<int>(0, "nothing"), "postgres: column \"nothing\" of row 0 is NULL");
        CHECK_THROWS_WITH(r.as<int>(0, "s"),
                          "postgres: column \"s\" is not a number of the asked type: \"héllo\"");
        CHECK_THROWS_WITH(r.column("missing"), "postgres: the result has no column \"missing\"");

        // A script of several statements in one round trip; a command's count.
        const auto table = fresh_table("items");
        co_await c.execute("CREATE TABLE " + table + " (id int PRIMARY KEY, body jsonb);" + "INSERT INTO " +
                           table + " VALUES (1, '{\"a\": 1}'), (2, '[]');");
        auto updated = co_await c.query("UPDATE " + table + " SET body = $1::jsonb WHERE id >= $2",
                                        std::string(R"({"b": [true, null]})"), 1);
        CHECK(updated.affected() == 2);
        auto rows = co_await c.query("SELECT id, body FROM " + table + " ORDER BY id");
        REQUIRE(rows.size() == 2);
        CHECK(rows.as<std::string>(1, "body") == R"({"b": [true, null]})");
        CHECK(c.usable());
    });
}

TEST_CASE("postgres: a failed statement carries its SQLSTATE and leaves the connection usable",
          "[postgres]") {
    auto& server = postgres_server::shared();
    run([&]() -> asio::awaitable<void> {
        auto c = co_await pg::connection::connect(server.conninfo());
        try {
            co_await c.query("SELECT * FROM no_such_table");
            FAIL("the statement succeeded");
        } catch (const pg::error& e) {
            CHECK(e.sqlstate() == pg::sqlstate::undefined_table);
            CHECK_FALSE(e.connection_lost());
            CHECK(std::string(e.what()) ==
                  "postgres: relation \"no_such_table\" does not exist (SQLSTATE 42P01)");
        }
        const auto table = fresh_table("unique");
        co_await c.query("CREATE TABLE " + table + " (k text PRIMARY KEY)");
        co_await c.query("INSERT INTO " + table + " VALUES ($1)", "a");
        try {
            co_await c.query("INSERT INTO " + table + " VALUES ($1)", "a");
            FAIL("the duplicate was inserted");
        } catch (const pg::error& e) {
            CHECK(e.sqlstate() == pg::sqlstate::unique_violation);
        }
        // An error inside a transaction: the transaction is the caller's to end.
        co_await c.query("BEGIN");
        std::string division;
        try {
            co_await c.query("SELECT 1/0");
        } catch (const pg::error& e) {
            division = e.sqlstate();
        }
        CHECK(division == "22012");
        CHECK_FALSE(c.usable()); // a transaction is open (and failed)
        co_await c.query("ROLLBACK");
        CHECK(c.usable());
        auto one = co_await c.query("SELECT 1 AS one");
        CHECK(one.as<int>(0, "one") == 1);
    });
}

TEST_CASE("postgres: the pool's statement_timeout has the server cancel a long statement", "[postgres]") {
    auto& server = postgres_server::shared();
    run([&]() -> asio::awaitable<void> {
        pg::pool p(
            {.conninfo = server.conninfo(), .size = 2, .statement_timeout = std::chrono::milliseconds(200)});
        const auto start = std::chrono::steady_clock::now();
        try {
            co_await p.query("SELECT pg_sleep(20)");
            FAIL("the statement ran to its end");
        } catch (const pg::error& e) {
            CHECK(e.sqlstate() == pg::sqlstate::query_canceled);
            CHECK_FALSE(e.connection_lost());
        }
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
        // The same connection serves the next statement.
        auto r = co_await p.query("SELECT current_setting('statement_timeout') AS t");
        CHECK(r.as<std::string>(0, "t") == "200ms");
        CHECK(p.open() == 1);
        CHECK(p.idle() == 1);
    });
}

TEST_CASE("postgres: a notification reaches the listening connection when its sender commits", "[postgres]") {
    auto& server = postgres_server::shared();
    run([&]() -> asio::awaitable<void> {
        auto listener = co_await pg::connection::connect(server.conninfo());
        auto sender = co_await pg::connection::connect(server.conninfo());
        co_await listener.query("LISTEN agentware_test");

        std::optional<pg::notification> received;
        bool done = false;
        asio::co_spawn(
            co_await asio::this_coro::executor,
            [&]() -> asio::awaitable<void> { received = co_await listener.next_notification(); },
            [&](std::exception_ptr) { done = true; });

        co_await sender.query("BEGIN");
        co_await sender.query("SELECT pg_notify('agentware_test', $1)", "run-1");
        co_await sleep_for(std::chrono::milliseconds(150));
        CHECK_FALSE(received); // not before the commit
        co_await sender.query("COMMIT");
        for (int i = 0; i < 200 && !done; ++i)
            co_await sleep_for(std::chrono::milliseconds(10));
        REQUIRE(received);
        CHECK(received->channel == "agentware_test");
        CHECK(received->payload == "run-1");
        CHECK(received->sender_pid == sender.backend_pid());

        // A wait cancelled by its owner: an error, and the connection still serves.
        std::string cancelled;
        done = false;
        asio::co_spawn(
            co_await asio::this_coro::executor,
            [&]() -> asio::awaitable<void> { co_await listener.next_notification(); },
            [&](std::exception_ptr e) {
                try {
                    if (e) std::rethrow_exception(e);
                } catch (const pg::error& err) {
                    cancelled = err.what();
                    CHECK_FALSE(err.connection_lost());
                }
                done = true;
            });
        co_await sleep_for(std::chrono::milliseconds(20));
        listener.cancel();
        for (int i = 0; i < 200 && !done; ++i)
            co_await sleep_for(std::chrono::milliseconds(10));
        CHECK(cancelled == "postgres: the wait for a notification was cancelled");
        CHECK(listener.usable());
        co_await sender.query("NOTIFY agentware_test, 'run-2'");
        auto second = co_await listener.next_notification();
        CHECK(second.payload == "run-2");
    });
}

TEST_CASE("postgres: a pool runs many statements at once on at most its size", "[postgres]") {
    auto& server = postgres_server::shared();
    run([&]() -> asio::awaitable<void> {
        pg::pool p({.conninfo = server.conninfo(), .size = 3});
        const auto table = fresh_table("pooled");
        co_await p.query("CREATE TABLE " + table + " (n int, pid int)");
        std::size_t most_open = 0;
        co_await agentware::test::side_by_side(30, [&](int i) -> asio::awaitable<void> {
            auto c = co_await p.acquire();
            most_open = std::max(most_open, p.open());
            co_await c->query("INSERT INTO " + table + " VALUES ($1, pg_backend_pid())", i);
            co_await c->query("SELECT pg_sleep(0.01)");
        });
        CHECK(most_open == 3);
        CHECK(p.open() == 3);
        CHECK(p.idle() == 3);
        auto r = co_await p.query(
            "SELECT count(*) AS n, count(DISTINCT n) AS d, count(DISTINCT pid) AS pids FROM " + table);
        CHECK(r.as<int>(0, "n") == 30);
        CHECK(r.as<int>(0, "d") == 30);
        CHECK(r.as<int>(0, "pids") == 3);
    });
}

TEST_CASE("postgres: after the server restarts, the pool and the listener connect again", "[postgres]") {
    postgres_server server; // its own: this test stops it
    run([&]() -> asio::awaitable<void> {
        pg::pool p({.conninfo = server.conninfo(), .size = 2, .connect_timeout = std::chrono::seconds(5)});
        const auto first = (co_await p.query("SELECT pg_backend_pid() AS pid")).as<int>(0, "pid");

        std::vector<std::string> heard, errors;
        int listening = 0;
        pg::listener listener(
            {.conninfo = server.conninfo(),
             .channels = {"agentware_runs", "with \"quote\""},
             .on_notification = [&](const pg::notification& n) { heard.push_back(n.payload); },
             .on_listening = [&] { ++listening; },
             .on_error = [&](const std::string& e) { errors.push_back(e); },
             .retry_first = std::chrono::milliseconds(50),
             .retry_most = std::chrono::milliseconds(200)});
        listener.start(co_await asio::this_coro::executor);
        while (listening < 1)
            co_await sleep_for(std::chrono::milliseconds(10));
        co_await p.query("SELECT pg_notify('agentware_runs', 'before')");
        co_await p.query("SELECT pg_notify('with \"quote\"', 'quoted')");
        for (int i = 0; i < 200 && heard.size() < 2; ++i)
            co_await sleep_for(std::chrono::milliseconds(10));
        CHECK(heard == std::vector<std::string>{"before", "quoted"});

        // A statement in flight when the server goes away fails as a lost connection.
        bool stopped = false;
        asio::co_spawn(
            co_await asio::this_coro::executor,
            [&]() -> asio::awaitable<void> {
                co_await sleep_for(std::chrono::milliseconds(200));
                server.stop();
                stopped = true;
            },
            asio::detached);
        try {
            co_await p.query("SELECT pg_sleep(30)");
            FAIL("the statement outlived its server");
        } catch (const pg::error& e) {
            CHECK(e.connection_lost());
        }
        while (!stopped)
            co_await sleep_for(std::chrono::milliseconds(10));
        CHECK(p.open() == 0); // the broken connections were closed
        bool refused = false;
        try {
            co_await p.query("SELECT 1");
        } catch (const pg::error& e) {
            refused = e.connection_lost(); // no server to connect to
        }
        CHECK(refused);

        server.start();
        const auto again = (co_await p.query("SELECT pg_backend_pid() AS pid")).as<int>(0, "pid");
        CHECK(again != first);
        CHECK(p.open() == 1);

        // The listener came back by itself and LISTENs again.
        for (int i = 0; i < 500 && listening < 2; ++i)
            co_await sleep_for(std::chrono::milliseconds(10));
        CHECK(listening == 2);
        CHECK(listener.sessions() == 2);
        REQUIRE_FALSE(errors.empty());
        CHECK(errors.front().starts_with("postgres: "));
        co_await p.query("SELECT pg_notify('agentware_runs', 'after')");
        for (int i = 0; i < 200 && heard.size() < 3; ++i)
            co_await sleep_for(std::chrono::milliseconds(10));
        CHECK(heard.back() == "after");
        listener.stop();
    });
}

TEST_CASE("postgres: a connection error names the server without its password", "[postgres]") {
    run([&]() -> asio::awaitable<void> {
        try {
            co_await pg::connection::connect("host=/nonexistent-agentware user=u password=hunter2 dbname=d");
            FAIL("connected to nothing");
        } catch (const pg::error& e) {
            const std::string what = e.what();
            CHECK(what.starts_with("postgres: cannot connect to \"host=/nonexistent-agentware user=u "
                                   "password=*** dbname=d\": "));
            CHECK(what.find("hunter2") == std::string::npos);
            CHECK(e.connection_lost());
        }

        // A server that accepts and never answers: the connect's own time limit.
        asio::ip::tcp::acceptor silent(co_await asio::this_coro::executor,
                                       {asio::ip::make_address("127.0.0.1"), 0});
        asio::ip::tcp::socket held(silent.get_executor());
        silent.async_accept(held, [](boost::system::error_code) {});
        const auto port = silent.local_endpoint().port();
        try {
            co_await pg::connection::connect("postgresql://u:hunter2@127.0.0.1:" + std::to_string(port) +
                                                 "/d?sslmode=disable",
                                             std::chrono::milliseconds(300));
            FAIL("connected to a silent server");
        } catch (const pg::error& e) {
            CHECK(std::string(e.what()) ==
                  "postgres: cannot connect to \"postgresql://u:***@127.0.0.1:" + std::to_string(port) +
                      "/d?sslmode=disable\": no answer within 300 ms");
        }
    });
}

TEST_CASE("postgres: redact hides the password of either form of connection string", "[postgres]") {
    CHECK(pg::redact("host=/run/pg password=secret dbname=app") == "host=/run/pg password=*** dbname=app");
    CHECK(pg::redact("password = 'a b\\' c' user=u") == "password = *** user=u");
    CHECK(pg::redact("postgresql://user:secret@db.example:5432/app?sslmode=require&password=x") ==
          "postgresql://user:***@db.example:5432/app?sslmode=require&password=***");
    CHECK(pg::redact("postgres://db.example/app") == "postgres://db.example/app");
    CHECK(pg::redact("postgresql://user@db.example/app") == "postgresql://user@db.example/app");
    // The passphrase of the client's TLS key is a secret too.
    CHECK(pg::redact("host=db sslkey=/k sslpassword=pass") == "host=db sslkey=/k sslpassword=***");
    CHECK(pg::redact("postgresql://db/app?sslpassword=pass&sslmode=verify-full") ==
          "postgresql://db/app?sslpassword=***&sslmode=verify-full");
}

} // namespace postgres_client_test
