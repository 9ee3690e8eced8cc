// The run queue on PostgreSQL (server/postgres_run_queue.hpp) against a
// server the tests start: migrations made once by processes starting
// together, each run claimed by exactly one of several workers, a thread's
// runs one at a time and in order, the multitask strategies, idempotency
// keys, leases that lapse and fence their old owner, and cancels from
// another process.

#include "../support/coroutine_test.hpp"
#include "../support/postgres_server.hpp"

#include <agentware/server/postgres_run_queue.hpp>
#include <agentware/server/postgres_schema.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

// co_await never sits inside a CHECK or REQUIRE: g++ 12 miscompiles an
// awaited call inside Catch's expression templates (its arguments arrive
// wrong), so each result is awaited into a variable first.

namespace postgres_queue_test {

namespace asio = boost::asio;
namespace pg = agentware::postgres;
namespace srv = agentware::server;
using agentware::test::postgres_server;

using agentware::test::sleep_for;
constexpr auto run = agentware::test::run_coroutine;

// A database of the test's own on the shared server, migrated.
asio::awaitable<std::string> fresh_database(bool migrated = true) {
    static int n = 0;
    auto& server = postgres_server::shared();
    const std::string name = "queue_" + std::to_string(::getpid()) + "_" + std::to_string(++n);
    auto admin = co_await pg::connection::connect(server.conninfo());
    co_await admin.query("CREATE DATABASE " + name);
    const auto conninfo = server.conninfo(name);
    if (migrated) {
        pg::pool db({.conninfo = conninfo, .size = 1});
        co_await srv::postgres_schema::migrate(db);
    }
    co_return conninfo;
}

boost::json::object record_of(const std::string& run_id) {
    return {{"run_id", run_id}, {"kwargs", {{"n", 1}}}};
}

TEST_CASE("postgres run queue: processes starting together make the schema once", "[postgres][queue]") {
    run([]() -> asio::awaitable<void> {
        const auto conninfo = co_await fresh_database(false);
        std::vector<std::unique_ptr<pg::pool>> pools;
        int applied = 0;
        for (int i = 0; i < 3; ++i)
            pools.push_back(std::make_unique<pg::pool>(pg::pool_options{.conninfo = conninfo, .size = 1}));
        co_await agentware::test::side_by_side(3, [&](int i) -> asio::awaitable<void> {
            applied += co_await srv::postgres_schema::migrate(*pools[i]);
        });
        CHECK(applied == static_cast<int>(srv::postgres_schema::migrations.size()));
        auto versions =
            co_await pools[0]->query("SELECT count(*) AS n, max(version) AS v FROM agentware_migrations");
        CHECK(versions.as<int>(0, "n") == static_cast<int>(srv::postgres_schema::migrations.size()));
        const int again = co_await srv::postgres_schema::migrate(*pools[1]);
        CHECK(again == 0);
    });
}

TEST_CASE("postgres run queue: each run goes to one worker, a thread's runs one at a time and in order",
          "[postgres][queue]") {
    run([]() -> asio::awaitable<void> {
        const auto conninfo = co_await fresh_database();
        pg::pool front({.conninfo = conninfo, .size = 2});
        srv::postgres_run_queue creator(front, {.worker_id = "api"});
        constexpr int threads = 12, per_thread = 8;
        std::vector<std::string> created; // in creation order
        for (int k = 0; k < per_thread; ++k)
            for (int t = 0; t < threads; ++t) {
                const auto id = "run-" + std::to_string(t) + "-" + std::to_string(k);
                co_await creator.create(id, "thread-" + std::to_string(t), "agent", record_of(id), "enqueue");
                created.push_back(id);
            }

        std::set<std::string> running_threads;
        std::map<std::string, std::vector<std::string>> finished_by_thread;
        std::map<std::string, int> claims;
        bool overlap = false;
        std::vector<std::unique_ptr<pg::pool>> pools;
        std::vector<std::unique_ptr<srv::postgres_run_queue>> queues;
        for (int w = 0; w < 4; ++w) {
            pools.push_back(std::make_unique<pg::pool>(pg::pool_options{.conninfo = conninfo, .size = 1}));
            queues.push_back(std::make_unique<srv::postgres_run_queue>(
                *pools.back(), srv::postgres_run_queue_options{.worker_id = "worker-" + std::to_string(w)}));
        }
        co_await agentware::test::side_by_side(4, [&](int w) -> asio::awaitable<void> {
            auto& q = *queues[static_cast<std::size_t>(w)];
            for (int idle = 0; idle < 20;) {
                auto r = co_await q.claim();
                if (!r) {
                    ++idle;
                    co_await sleep_for(std::chrono::milliseconds(5));
                    continue;
                }
                idle = 0;
                ++claims[r->run_id];
                overlap = overlap || !running_threads.insert(r->thread_id).second;
                co_await sleep_for(std::chrono::milliseconds(2));
                running_threads.erase(r->thread_id);
                finished_by_thread[r->thread_id].push_back(r->run_id);
                const bool ended = co_await q.finish(r->run_id, "success", r->record);
                REQUIRE(ended);
            }
        });

        CHECK_FALSE(overlap);
        REQUIRE(claims.size() == created.size());
        for (const auto& [id, n] : claims)
            CHECK(n == 1);
        for (int t = 0; t < threads; ++t) {
            std::vector<std::string> expected;
            for (int k = 0; k < per_thread; ++k)
                expected.push_back("run-" + std::to_string(t) + "-" + std::to_string(k));
            CHECK(finished_by_thread["thread-" + std::to_string(t)] == expected);
        }
        auto statuses = co_await front.query(
            "SELECT count(*) FILTER (WHERE status = 'success') AS ok, count(*) AS n, max(attempt) AS a "
            "FROM agentware_runs");
        CHECK(statuses.as<int>(0, "ok") == threads * per_thread);
        CHECK(statuses.as<int>(0, "a") == 1);
    });
}

TEST_CASE("postgres run queue: multitask strategies and idempotency keys", "[postgres][queue]") {
    run([]() -> asio::awaitable<void> {
        const auto conninfo = co_await fresh_database();
        pg::pool db({.conninfo = conninfo, .size = 2});
        srv::postgres_run_queue q(db, {.worker_id = "w"});

        auto a = co_await q.create("a", "t", "agent", record_of("a"), "reject");
        CHECK(a.status == "pending");
        try {
            co_await q.create("b", "t", "agent", record_of("b"), "reject");
            FAIL("a busy thread took a second run");
        } catch (const srv::thread_busy& e) {
            CHECK(std::string(e.what()) == "Thread t is busy with another run");
        }
        auto rejected = co_await q.run("b");
        CHECK_FALSE(rejected);

        // The same key twice: one run.
        auto c1 = co_await q.create("c", "t", "agent", record_of("c"), "enqueue", std::string("key-1"));
        auto c2 =
            co_await q.create("c-retry", "t", "agent", record_of("c-retry"), "enqueue", std::string("key-1"));
        CHECK(c2.run_id == "c");
        CHECK(c1.run_id == "c");
        auto retried = co_await q.run("c-retry");
        CHECK_FALSE(retried);

        // "interrupt": the running run is asked to stop, the pending one ends.
        auto claimed = co_await q.claim();
        REQUIRE(claimed);
        CHECK(claimed->run_id == "a");
        CHECK(claimed->attempt == 1);
        auto d = co_await q.create("d", "t", "agent", record_of("d"), "interrupt");
        CHECK(d.status == "pending");
        auto c_after = co_await q.run("c");
        CHECK(c_after->status == "interrupted");
        auto lease = co_await q.renew("a");
        CHECK(lease.owned);
        CHECK(lease.cancel_action == std::optional<std::string>("interrupt"));
        auto too_early = co_await q.claim();
        CHECK_FALSE(too_early); // d waits for a
        const bool a_ended = co_await q.finish("a", "interrupted", claimed->record);
        REQUIRE(a_ended);
        auto next = co_await q.claim();
        REQUIRE(next);
        CHECK(next->run_id == "d");
        CHECK_FALSE(next->cancel_action);
    });
}

TEST_CASE(
    "postgres run queue: a lapsed lease returns the run, fences its old owner, and attempts are bounded",
    "[postgres][queue]") {
    run([]() -> asio::awaitable<void> {
        const auto conninfo = co_await fresh_database();
        pg::pool db_a({.conninfo = conninfo, .size = 1}), db_b({.conninfo = conninfo, .size = 1});
        const srv::postgres_run_queue_options timing{.worker_id = {},
                                                     .lease = std::chrono::milliseconds(100),
                                                     .grace = std::chrono::milliseconds(0),
                                                     .max_attempts = 2};
        auto oa = timing, ob = timing;
        oa.worker_id = "a";
        ob.worker_id = "b";
        srv::postgres_run_queue a(db_a, oa), b(db_b, ob);
        co_await a.create("r", "t", "agent", record_of("r"), "reject");

        auto first = co_await a.claim();
        REQUIRE(first);
        CHECK(first->attempt == 1);
        auto none_lapsed = co_await b.reap();
        CHECK(none_lapsed.empty()); // the lease holds
        co_await sleep_for(std::chrono::milliseconds(250));
        auto reaped = co_await b.reap();
        REQUIRE(reaped.size() == 1);
        CHECK(reaped[0] == std::pair<std::string, std::string>("r", "pending"));

        auto second = co_await b.claim();
        REQUIRE(second);
        CHECK(second->attempt == 2);
        auto stale = co_await a.renew("r");
        CHECK_FALSE(stale.owned); // a stalled and came back: fenced
        const boost::json::object busy{{"status", "busy"}};
        const bool stale_thread = co_await a.update_thread("r", busy);
        CHECK_FALSE(stale_thread); // nor does it write the run's thread
        const bool owner_thread = co_await b.update_thread("r", busy);
        CHECK(owner_thread);
        const bool stale_finish = co_await a.finish("r", "success", first->record);
        CHECK_FALSE(stale_finish);
        auto still = co_await a.run("r");
        CHECK(still->status == "running");

        co_await sleep_for(std::chrono::milliseconds(250));
        reaped = co_await a.reap();
        REQUIRE(reaped.size() == 1);
        CHECK(reaped[0].second == "error"); // its last attempt lapsed
        const bool late_finish = co_await b.finish("r", "success", second->record);
        CHECK_FALSE(late_finish);
        auto last = co_await a.run("r");
        CHECK(last->status == "error");

        // A run drained at shutdown goes back without spending an attempt.
        co_await a.create("s", "t2", "agent", record_of("s"), "reject");
        auto s = co_await a.claim();
        REQUIRE(s);
        const bool released = co_await a.release("s");
        CHECK(released);
        auto again = co_await b.claim();
        REQUIRE(again);
        CHECK(again->run_id == "s");
        CHECK(again->attempt == 1);

        // A thread's status is its last started run's: the process that ended
        // an earlier run writes it until the next run starts, then no more.
        co_await a.create("u1", "t3", "agent", record_of("u1"), "enqueue");
        auto u1 = co_await a.claim();
        REQUIRE(u1);
        CHECK(u1->run_id == "u1");
        const bool u1_done = co_await a.finish("u1", "success", u1->record);
        CHECK(u1_done);
        co_await a.create("u2", "t3", "agent", record_of("u2"), "enqueue");
        const bool before_next = co_await a.update_thread("u1", busy);
        CHECK(before_next);
        auto u2 = co_await b.claim();
        REQUIRE(u2);
        CHECK(u2->run_id == "u2");
        const bool after_next = co_await a.update_thread("u1", busy);
        CHECK_FALSE(after_next);
        const bool by_next = co_await b.update_thread("u2", busy);
        CHECK(by_next);
    });
}

TEST_CASE("postgres run queue: creates wake the workers, cancels reach the owner from another process",
          "[postgres][queue]") {
    run([]() -> asio::awaitable<void> {
        const auto conninfo = co_await fresh_database();
        auto listener = co_await pg::connection::connect(conninfo);
        co_await listener.query("LISTEN agentware_runs");
        co_await listener.query("LISTEN agentware_cancel");
        pg::pool api_db({.conninfo = conninfo, .size = 1}), worker_db({.conninfo = conninfo, .size = 1});
        srv::postgres_run_queue api(api_db, {.worker_id = "api"}), worker(worker_db, {.worker_id = "worker"});

        co_await api.create("r", "t", "agent", record_of("r"), "reject");
        auto woke = co_await listener.next_notification();
        CHECK(woke.channel == "agentware_runs");
        CHECK(woke.payload == "r");

        auto claimed = co_await worker.claim();
        REQUIRE(claimed);
        auto asked = co_await api.cancel("r", "rollback");
        CHECK(asked == std::optional<std::string>("running"));
        auto told = co_await listener.next_notification();
        CHECK(told.channel == "agentware_cancel");
        CHECK(told.payload == "r");
        auto renewed = co_await worker.renew("r");
        CHECK(renewed.cancel_action == std::optional<std::string>("rollback"));
        // The first action asked for stays.
        asked = co_await api.cancel("r", "interrupt");
        CHECK(asked == std::optional<std::string>("running"));
        renewed = co_await worker.renew("r");
        CHECK(renewed.cancel_action == std::optional<std::string>("rollback"));
        const bool ended = co_await worker.finish("r", "interrupted", record_of("r"));
        REQUIRE(ended);
        asked = co_await api.cancel("r", "interrupt");
        CHECK_FALSE(asked); // over

        co_await api.create("p", "t", "agent", record_of("p"), "reject");
        asked = co_await api.cancel("p", "interrupt");
        CHECK(asked == std::optional<std::string>("interrupted"));
        claimed = co_await worker.claim();
        CHECK_FALSE(claimed);
        asked = co_await api.cancel("nothing", "interrupt");
        CHECK_FALSE(asked);
    });
}

} // namespace postgres_queue_test
