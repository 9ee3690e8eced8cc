// The server's stores against one contract (server/store.hpp): the embedded
// store in memory and on disk, and the PostgreSQL store against a server the
// tests start. Then what only the PostgreSQL store does: checkpoints stored
// as what changed and read back exactly (a long thread, a rewritten history),
// two processes writing one thread, pruning, and the run queue seeing the
// store's runs.

#include "../support/coroutine_test.hpp"
#include "../support/postgres_server.hpp"
#include "../support/redis_server.hpp"

#include <agentware/agent/append_checkpointer.hpp>
#include <agentware/postgres/pool_thread.hpp>
#include <agentware/redis/connection.hpp>
#include <agentware/server/detail/saved_state.hpp>
#include <agentware/server/file_store.hpp>
#include <agentware/server/postgres_event_bus.hpp>
#include <agentware/server/postgres_run_queue.hpp>
#include <agentware/server/postgres_schema.hpp>
#include <agentware/server/postgres_store.hpp>
#include <agentware/server/redis_event_bus.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

// co_await never sits inside a CHECK or REQUIRE, and never around a braced
// list: g++ 12 miscompiles both, so each object is made, and each result
// awaited into a variable, first.

namespace store_test {

namespace asio = boost::asio;
namespace json = boost::json;
namespace pg = agentware::postgres;
namespace srv = agentware::server;
using agentware::test::postgres_server;

constexpr auto run = agentware::test::run_coroutine;

// A database of the test's own on the shared server.
asio::awaitable<std::string> fresh_database() {
    static int n = 0;
    auto& server = postgres_server::shared();
    const std::string name = "store_" + std::to_string(::getpid()) + "_" + std::to_string(++n);
    auto admin = co_await pg::connection::connect(server.conninfo());
    co_await admin.query("CREATE DATABASE " + name);
    co_return server.conninfo(name);
}

// A pool on a thread of its own, as a server's is: the tests call the store
// from their own loop, so every call hops to the pool's thread and back.
class pool_thread : public pg::pool_thread {
public:
    explicit pool_thread(const std::string& conninfo)
        : pg::pool_thread(pg::pool_options{.conninfo = conninfo, .size = 2}) {}
    asio::awaitable<int> migrate() { return there(srv::postgres_schema::migrate(db())); }
};

std::vector<std::string> ids_of(const std::vector<json::object>& records, const char* key) {
    std::vector<std::string> out;
    for (const auto& r : records)
        out.emplace_back(r.at(key).as_string());
    return out;
}

std::set<std::string> id_set(const std::vector<json::object>& records, const char* key) {
    const auto ids = ids_of(records, key);
    return {ids.begin(), ids.end()};
}

json::object checkpoint_of(const std::string& thread_id, int step, json::value values) {
    json::object c;
    c["checkpoint_id"] = thread_id + "-c" + std::to_string(step);
    c["parent_checkpoint_id"] =
        step == 0 ? json::value(nullptr) : json::value(thread_id + "-c" + std::to_string(step - 1));
    c["thread_id"] = thread_id;
    c["run_id"] = "run-1";
    c["created_at"] = "2025-01-01T00:00:00Z";
    c["step"] = step;
    c["source"] = "loop";
    json::object metadata;
    metadata["step"] = step;
    c["metadata"] = std::move(metadata);
    c["values"] = std::move(values);
    return c;
}

// A message of about 200 bytes, different for each `i` (and each `round` of rewriting).
json::object message(std::size_t i, int round = 0) {
    json::object m;
    m["type"] = i % 2 == 0 ? "human" : "ai";
    m["id"] = "m-" + std::to_string(i);
    std::string text = "message " + std::to_string(i) + " round " + std::to_string(round) + ": ";
    while (text.size() < 160)
        text += "lorem ipsum ";
    m["content"] = text;
    return m;
}

// A call that must throw std::invalid_argument (a record without its key).
asio::awaitable<bool> rejects(asio::awaitable<void> call) {
    try {
        co_await std::move(call);
    } catch (const std::invalid_argument&) {
        co_return true;
    }
    co_return false;
}

// Thread t5 of the contract: one whole checkpoint, then records of what
// changed (store.hpp's `changes`), one of them after a parent that is not the
// thread's last. `given` gets the records as handed to the store; the result
// is the records as the store gives them back (whole values).
std::vector<json::object> changes_thread(std::vector<json::object>& given) {
    auto with_changes = [](int step, const std::string& parent, json::object changes) {
        auto c = checkpoint_of("t5", step, nullptr);
        c.erase("values");
        c["parent_checkpoint_id"] = parent;
        c["changes"] = std::move(changes);
        return c;
    };
    auto whole = [](json::object c, json::object values) {
        c.erase("changes");
        c["values"] = std::move(values);
        return c;
    };
    json::object v0{{"messages", json::array{message(0), message(1)}}, {"title", "a"}};
    given.push_back(checkpoint_of("t5", 0, v0));
    std::vector<json::object> out{given.back()};

    json::object c1{{"at", 2}, {"append", json::array{message(2)}}, {"set", json::object{{"title", "b"}}}};
    given.push_back(with_changes(1, "t5-c0", c1));
    json::object v1{{"messages", json::array{message(0), message(1), message(2)}}, {"title", "b"}};
    out.push_back(whole(given.back(), v1));

    // Cut to the first message, another appended, the title removed.
    json::object c2{{"at", 1}, {"append", json::array{message(3, 1)}}, {"unset", json::array{"title"}}};
    given.push_back(with_changes(2, "t5-c1", c2));
    json::object v2{{"messages", json::array{message(0), message(3, 1)}}};
    out.push_back(whole(given.back(), v2));

    // After c1, not the last: the changes apply to c1's values.
    json::object c3{{"at", 3}, {"append", json::array{message(4)}}};
    given.push_back(with_changes(3, "t5-c1", c3));
    json::object v3{{"messages", json::array{message(0), message(1), message(2), message(4)}},
                    {"title", "b"}};
    out.push_back(whole(given.back(), v3));

    // Nothing changed: the values stay the parent's.
    given.push_back(with_changes(4, "t5-c3", json::object{{"at", 4}}));
    out.push_back(whole(given.back(), v3));
    return out;
}

// The contract every store keeps, checked on a store with nothing in it.
asio::awaitable<void> check_contract(srv::store& s) {
    // Threads: put, get, replace, list, erase; unknown ids.
    json::object t1{{"thread_id", "t1"}, {"status", "idle"}, {"metadata", {{"owner", "ann"}}}};
    co_await s.put_thread(t1);
    auto got = co_await s.thread("t1");
    REQUIRE(got);
    CHECK(*got == t1);
    t1["status"] = "busy";
    t1["values_seen"] = 3;
    co_await s.put_thread(t1);
    got = co_await s.thread("t1");
    REQUIRE(got);
    CHECK(*got == t1);
    json::object t2{{"thread_id", "t2"}};
    co_await s.put_thread(t2);
    const auto all = co_await s.threads();
    CHECK(id_set(all, "thread_id") == std::set<std::string>{"t1", "t2"});
    const auto unknown = co_await s.thread("nope");
    CHECK_FALSE(unknown);
    const bool erased_unknown = co_await s.erase_thread("nope");
    CHECK_FALSE(erased_unknown);

    // update_thread: the fields given set, the metadata added to, the rest as stored.
    json::object idle{{"status", "idle"}};
    json::object team{{"team", "red"}};
    json::object nothing;
    bool updated = co_await s.update_thread("t2", idle, team);
    CHECK(updated);
    json::object owner{{"owner", "bob"}};
    updated = co_await s.update_thread("t2", nothing, owner);
    CHECK(updated);
    json::object busy{{"status", "busy"}};
    updated = co_await s.update_thread("t2", busy, nothing);
    CHECK(updated);
    got = co_await s.thread("t2");
    REQUIRE(got);
    json::object both_owners{{"team", "red"}, {"owner", "bob"}};
    json::object t2_updated{{"thread_id", "t2"}, {"status", "busy"}};
    t2_updated["metadata"] = both_owners;
    CHECK(*got == t2_updated);
    updated = co_await s.update_thread("nope", idle, nothing);
    CHECK_FALSE(updated);
    const auto still_unknown = co_await s.thread("nope");
    CHECK_FALSE(still_unknown);

    // Runs: oldest first, replaced in place, erased; a run of an unknown thread makes the thread.
    json::object r1{{"run_id", "r1"}, {"thread_id", "t1"}, {"assistant_id", "agent"}, {"status", "pending"}};
    json::object r2{{"run_id", "r2"}, {"thread_id", "t1"}, {"assistant_id", "agent"}, {"status", "error"}};
    json::object r3{{"run_id", "r3"}, {"thread_id", "t1"}, {"status", "success"}};
    co_await s.put_run(r1);
    co_await s.put_run(r2);
    co_await s.put_run(r3);
    auto runs = co_await s.runs("t1");
    CHECK(ids_of(runs, "run_id") == std::vector<std::string>{"r1", "r2", "r3"});
    r1["status"] = "success";
    r1["kwargs"] = json::object{{"input", "hi"}};
    co_await s.put_run(r1);
    auto run1 = co_await s.run("r1");
    REQUIRE(run1);
    CHECK(*run1 == r1);
    runs = co_await s.runs("t1");
    CHECK(ids_of(runs, "run_id") == std::vector<std::string>{"r1", "r2", "r3"});
    CHECK(runs[0] == r1);
    CHECK(runs[2] == r3);
    bool erased = co_await s.erase_run("r2");
    CHECK(erased);
    erased = co_await s.erase_run("r2");
    CHECK_FALSE(erased);
    const auto run2 = co_await s.run("r2");
    CHECK_FALSE(run2);
    runs = co_await s.runs("t1");
    CHECK(ids_of(runs, "run_id") == std::vector<std::string>{"r1", "r3"});
    const auto no_runs = co_await s.runs("nope");
    CHECK(no_runs.empty());
    json::object r4{{"run_id", "r4"}, {"thread_id", "t3"}, {"status", "pending"}};
    co_await s.put_run(r4);
    const auto t3 = co_await s.thread("t3");
    REQUIRE(t3);
    CHECK(*t3 == json::object{{"thread_id", "t3"}});

    bool refused = false;

    // Checkpoints: oldest first, the last, the count, truncation.
    std::vector<json::object> written;
    json::array messages;
    for (int step = 0; step < 5; ++step) {
        messages.push_back(message(static_cast<std::size_t>(step)));
        json::object values{{"messages", messages}, {"title", "step " + std::to_string(step)}};
        written.push_back(checkpoint_of("t1", step, values));
        co_await s.add_checkpoint(written.back());
    }
    auto checkpoints = co_await s.checkpoints("t1");
    CHECK(checkpoints == written);
    auto last = co_await s.last_checkpoint("t1");
    REQUIRE(last);
    CHECK(*last == written.back());
    auto count = co_await s.checkpoint_count("t1");
    CHECK(count == 5);
    co_await s.truncate_checkpoints("t1", 3);
    count = co_await s.checkpoint_count("t1");
    CHECK(count == 3);
    written.resize(3);
    checkpoints = co_await s.checkpoints("t1");
    CHECK(checkpoints == written);
    last = co_await s.last_checkpoint("t1");
    REQUIRE(last);
    CHECK(*last == written.back());
    co_await s.truncate_checkpoints("t1", 10);
    count = co_await s.checkpoint_count("t1");
    CHECK(count == 3);
    // After a truncation (a rolled back run), the thread goes on from what was kept.
    json::object rewritten_values{{"messages", json::array{message(0), message(1), message(2, 1)}}};
    written.push_back(checkpoint_of("t1", 3, rewritten_values));
    co_await s.add_checkpoint(written.back());
    checkpoints = co_await s.checkpoints("t1");
    CHECK(checkpoints == written);
    last = co_await s.last_checkpoint("t1");
    REQUIRE(last);
    CHECK(*last == written.back());
    const auto none = co_await s.checkpoints("nope");
    CHECK(none.empty());
    const auto no_last = co_await s.last_checkpoint("nope");
    CHECK_FALSE(no_last);
    count = co_await s.checkpoint_count("nope");
    CHECK(count == 0);
    co_await s.truncate_checkpoints("nope", 0);
    // A checkpoint of an unknown thread makes the thread.
    auto orphan = checkpoint_of("t4", 0, json::object{{"messages", json::array{}}});
    co_await s.add_checkpoint(orphan);
    const auto t4 = co_await s.thread("t4");
    REQUIRE(t4);
    CHECK(*t4 == json::object{{"thread_id", "t4"}});

    // A checkpoint given as what changed since its parent is kept whole.
    std::vector<json::object> given;
    const auto expected = changes_thread(given);
    for (const auto& c : given)
        co_await s.add_checkpoint(c);
    auto changed = co_await s.checkpoints("t5");
    CHECK(changed == expected);
    last = co_await s.last_checkpoint("t5");
    REQUIRE(last);
    CHECK(*last == expected.back());
    // Changes that do not apply are refused, and nothing is written.
    auto bad = given.back();
    bad["checkpoint_id"] = "t5-bad";
    bad["parent_checkpoint_id"] = "t5-c4";
    bad["changes"] = json::object{{"at", 99}};
    refused = co_await rejects(s.add_checkpoint(bad));
    CHECK(refused);
    bad["parent_checkpoint_id"] = "no-such-checkpoint";
    bad["changes"] = json::object{{"at", 1}};
    refused = co_await rejects(s.add_checkpoint(bad));
    CHECK(refused);
    bad["parent_checkpoint_id"] = "t5-c4";
    bad["values"] = json::object{{"messages", json::array{}}};
    refused = co_await rejects(s.add_checkpoint(bad));
    CHECK(refused);
    count = co_await s.checkpoint_count("t5");
    CHECK(count == expected.size());

    // Erasing a thread takes its checkpoints and runs.
    erased = co_await s.erase_thread("t1");
    CHECK(erased);
    const auto gone = co_await s.thread("t1");
    CHECK_FALSE(gone);
    runs = co_await s.runs("t1");
    CHECK(runs.empty());
    run1 = co_await s.run("r1");
    CHECK_FALSE(run1);
    checkpoints = co_await s.checkpoints("t1");
    CHECK(checkpoints.empty());
    count = co_await s.checkpoint_count("t1");
    CHECK(count == 0);
    last = co_await s.last_checkpoint("t1");
    CHECK_FALSE(last);
    erased = co_await s.erase_thread("t1");
    CHECK_FALSE(erased);
    const auto others = co_await s.threads();
    CHECK(id_set(others, "thread_id") == std::set<std::string>{"t2", "t3", "t4", "t5"});

    // A record without its key is refused.
    json::object keyless{{"status", "idle"}};
    refused = co_await rejects(s.put_thread(keyless));
    CHECK(refused);
    refused = co_await rejects(s.add_checkpoint(keyless));
    CHECK(refused);
    json::object run_without_id{{"thread_id", "t2"}};
    refused = co_await rejects(s.put_run(run_without_id));
    CHECK(refused);
    json::object run_without_thread{{"run_id", "r9"}};
    refused = co_await rejects(s.put_run(run_without_thread));
    CHECK(refused);
}

TEST_CASE("stores: the embedded store in memory keeps the contract", "[postgres][store]") {
    srv::file_store s;
    run([&]() -> asio::awaitable<void> { co_await check_contract(s); });
}

TEST_CASE("stores: the embedded store on disk keeps the contract", "[postgres][store]") {
    const auto dir =
        std::filesystem::temp_directory_path() / ("agentware-store-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    {
        srv::file_store s(dir);
        run([&]() -> asio::awaitable<void> { co_await check_contract(s); });
    }
    srv::file_store again(dir);
    run([&]() -> asio::awaitable<void> {
        const auto threads = co_await again.threads();
        CHECK(threads.size() == 4);
        const auto count = co_await again.checkpoint_count("t4");
        CHECK(count == 1);
        // What changed is what the file keeps; reading it back makes the values whole.
        std::vector<json::object> given;
        const auto expected = changes_thread(given);
        const auto changed = co_await again.checkpoints("t5");
        CHECK(changed == expected);
    });
    std::ifstream file(dir / "threads" / "t5" / "checkpoints.jsonl");
    std::vector<std::string> lines;
    for (std::string line; std::getline(file, line);)
        lines.push_back(line);
    REQUIRE(lines.size() == 5);
    CHECK(json::parse(lines[0]).as_object().contains("values"));
    for (std::size_t i = 1; i < lines.size(); ++i) {
        const auto record = json::parse(lines[i]).as_object();
        CHECK(record.contains("changes"));
        CHECK_FALSE(record.contains("values"));
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("stores: the PostgreSQL store keeps the contract", "[postgres][store]") {
    run([]() -> asio::awaitable<void> {
        pool_thread pool(co_await fresh_database());
        co_await pool.migrate();
        srv::postgres_store s(pool.db(), pool.executor());
        co_await check_contract(s);
    });
}

TEST_CASE("postgres store: migrating twice applies nothing the second time", "[postgres][store]") {
    run([]() -> asio::awaitable<void> {
        pool_thread pool(co_await fresh_database());
        const int first = co_await pool.migrate();
        CHECK(first == static_cast<int>(srv::postgres_schema::migrations.size()));
        const int second = co_await pool.migrate();
        CHECK(second == 0);
        auto tables = co_await pool.query("SELECT count(*) AS n FROM pg_tables WHERE tablename = "
                                          "'agentware_checkpoints'");
        CHECK(tables.as<int>(0, "n") == 1);
    });
}

// The values of checkpoint `k` of the long thread: 2 (k + 1) messages.
json::object long_values(std::size_t k) {
    json::array messages;
    for (std::size_t i = 0; i < 2 * (k + 1); ++i)
        messages.push_back(message(i));
    return {{"messages", std::move(messages)}, {"step", k}};
}

TEST_CASE("postgres store: a long thread stores what changed and reads back exactly", "[postgres][store]") {
    run([]() -> asio::awaitable<void> {
        pool_thread pool(co_await fresh_database());
        co_await pool.migrate();
        srv::postgres_store s(pool.db(), pool.executor());
        constexpr std::size_t checkpoints = 2000;
        std::size_t stored_at_half = 0;
        // The sum of what a whole-state store would write: each checkpoint's values, serialized.
        std::size_t whole_states = 0;
        json::object values{{"messages", json::array{}}, {"step", 0}};
        std::size_t messages_bytes = 2; // the list's brackets
        for (std::size_t k = 0; k < checkpoints; ++k) {
            auto& list = values["messages"].as_array();
            for (std::size_t i = list.size(); i < 2 * (k + 1); ++i) {
                list.push_back(message(i));
                messages_bytes += json::serialize(list.back()).size() + (i > 0 ? 1 : 0);
            }
            values["step"] = k;
            // {"messages":[...],"step":k}
            const std::size_t size =
                messages_bytes + std::string(R"({"messages":,"step":})").size() + std::to_string(k).size();
            if (k == 0 || k == 777 || k + 1 == checkpoints) CHECK(size == json::serialize(values).size());
            whole_states += size;
            co_await s.add_checkpoint(checkpoint_of("long", static_cast<int>(k), values));
            if (k + 1 == checkpoints / 2) stored_at_half = co_await s.checkpoint_bytes("long");
        }
        const std::size_t last_state = json::serialize(values).size();
        const std::size_t stored = co_await s.checkpoint_bytes("long");
        INFO("stored " << stored << " bytes (" << stored_at_half << " at half way) for " << whole_states
                       << " bytes of whole states; the last state is " << last_state << " bytes");
        // Linear: a few times the last state (the deltas add up to it, the
        // snapshots to at most about twice it), and twice the thread about twice
        // the bytes (whole states would take four times).
        CHECK(stored < 5 * last_state);
        CHECK(stored * 100 < whole_states * 1);
        CHECK(stored * 10 < stored_at_half * 25);

        auto kinds =
            co_await pool.query("SELECT count(*) FILTER (WHERE snapshot) AS snapshots, count(*) AS n "
                                "FROM agentware_checkpoints WHERE thread_id = 'long'");
        CHECK(kinds.as<std::size_t>(0, "n") == checkpoints);
        // Snapshots at doubling intervals: about log2 of the thread's length.
        const auto snapshots = kinds.as<std::size_t>(0, "snapshots");
        CHECK(snapshots >= 5);
        CHECK(snapshots <= 30);

        // Read back: each snapshot, the rows around it, deep in a chain of deltas, the last.
        std::vector<std::size_t> probes{0, 1, 49, 50, 51, 99, 100, 777, 1000, 1949, 1950, 1951, 1998, 1999};
        auto snapshot_rows = co_await pool.query(
            "SELECT seq FROM agentware_checkpoints WHERE thread_id = 'long' AND snapshot ORDER BY seq");
        for (std::size_t i = 0; i < snapshot_rows.size(); ++i) {
            const auto seq = snapshot_rows.as<std::size_t>(i, "seq");
            for (std::size_t k : {seq - (seq > 0 ? 1 : 0), seq, seq + 1})
                if (k < checkpoints) probes.push_back(k);
        }
        for (std::size_t k : probes) {
            auto c = co_await s.checkpoint("long", "long-c" + std::to_string(k));
            REQUIRE(c);
            CHECK(*c == checkpoint_of("long", static_cast<int>(k), long_values(k)));
        }
        const auto last = co_await s.last_checkpoint("long");
        REQUIRE(last);
        CHECK(*last ==
              checkpoint_of("long", static_cast<int>(checkpoints - 1), long_values(checkpoints - 1)));
        const auto count = co_await s.checkpoint_count("long");
        CHECK(count == checkpoints);
        const auto unknown = co_await s.checkpoint("long", "no-such-checkpoint");
        CHECK_FALSE(unknown);
    });
}

TEST_CASE("postgres store: rewritten histories and odd values read back exactly", "[postgres][store]") {
    run([]() -> asio::awaitable<void> {
        pool_thread pool(co_await fresh_database());
        co_await pool.migrate();
        srv::postgres_store s(pool.db(), pool.executor());
        std::vector<json::object> written;
        json::array messages;
        json::object values;
        const auto add = [&]() -> asio::awaitable<void> {
            written.push_back(checkpoint_of("t", static_cast<int>(written.size()), values));
            co_await s.add_checkpoint(written.back());
        };
        for (std::size_t i = 0; i < 20; ++i) {
            messages.push_back(message(2 * i));
            messages.push_back(message(2 * i + 1));
            values = {{"messages", messages}, {"todos", json::array{"a", "b"}}, {"ratio", 1.0}};
            co_await add();
        }
        // A client's state update rewrote an early message, the count
        // unchanged: compared whole (not only the last messages) and stored whole.
        messages[1] = message(1, 1);
        values["messages"] = messages;
        written.push_back(checkpoint_of("t", static_cast<int>(written.size()), values));
        written.back()["source"] = "update";
        co_await s.add_checkpoint(written.back());
        // The last message replaced, two added, a field set and one removed (a delta cutting one message).
        messages.back() = message(39, 2);
        messages.push_back(message(40));
        messages.push_back(message(41));
        values = {{"messages", messages}, {"title", "renamed"}, {"ratio", 2.5}};
        co_await add();
        const std::size_t cut = written.size() - 1;
        // Summarisation replaced all but the last four with a summary.
        json::array summarised{message(1000, 3)};
        for (std::size_t i = messages.size() - 4; i < messages.size(); ++i)
            summarised.push_back(messages[i]);
        messages = summarised;
        values["messages"] = messages;
        co_await add();
        messages.push_back(message(42));
        values["messages"] = messages;
        co_await add();
        // Values without messages, without values at all, not an object, and back.
        values = {{"x", 1}, {"nested", {{"deep", json::array{1, 2.5, nullptr, "\u0001"}}}}};
        co_await add();
        values = {{"x", 2}, {"nested", {{"deep", json::array{1, 2.5, nullptr, "\u0001"}}}}};
        co_await add();
        written.push_back(checkpoint_of("t", static_cast<int>(written.size()), nullptr));
        written.back().erase("values");
        co_await s.add_checkpoint(written.back());
        values = {{"messages", messages}};
        co_await add();
        written.push_back(checkpoint_of("t", static_cast<int>(written.size()), json::array{1, 2, 3}));
        co_await s.add_checkpoint(written.back());
        values = {{"messages", messages}, {"x", 3}};
        co_await add();

        const auto all = co_await s.checkpoints("t");
        CHECK(all == written);
        for (const auto& c : written) {
            auto one = co_await s.checkpoint("t", std::string(c.at("checkpoint_id").as_string()));
            REQUIRE(one);
            CHECK(*one == c);
        }
        const auto last = co_await s.last_checkpoint("t");
        REQUIRE(last);
        CHECK(*last == written.back());

        // The replaced last message was stored as a delta that cuts the previous messages.
        std::vector<pg::param> at_cut{pg::param(cut)};
        auto row = co_await pool.query("SELECT snapshot, state::text AS state FROM agentware_checkpoints "
                                       "WHERE thread_id = 't' AND seq = $1",
                                       std::move(at_cut));
        REQUIRE(row.size() == 1);
        CHECK_FALSE(row.as<bool>(0, "snapshot"));
        const auto delta = json::parse(row.as<std::string_view>(0, "state")).as_object();
        CHECK(delta.at("at") == 39);
        CHECK(delta.at("append").as_array().size() == 3);
        CHECK(delta.at("set").as_object().contains("title"));
        CHECK(delta.at("unset").as_array() == json::array{"todos"});
        // The early rewrite was stored whole.
        std::vector<pg::param> before_cut{pg::param(cut - 1)};
        row = co_await pool.query(
            "SELECT snapshot FROM agentware_checkpoints WHERE thread_id = 't' AND seq = $1",
            std::move(before_cut));
        CHECK(row.as<bool>(0, "snapshot"));
    });
}

TEST_CASE("postgres store: two processes writing one thread read each other's checkpoints",
          "[postgres][store]") {
    run([]() -> asio::awaitable<void> {
        const auto conninfo = co_await fresh_database();
        pool_thread pool_a(conninfo), pool_b(conninfo);
        co_await pool_a.migrate();
        const srv::postgres_store_options options{.snapshot_every = 7};
        srv::postgres_store a(pool_a.db(), pool_a.executor(), options);
        srv::postgres_store b(pool_b.db(), pool_b.executor(), options);

        // Taking turns: each write follows the other process's.
        std::vector<json::object> written;
        json::array messages;
        for (int step = 0; step < 40; ++step) {
            messages.push_back(message(static_cast<std::size_t>(step), step % 2));
            json::object values{{"messages", messages}, {"writer", step % 2 == 0 ? "a" : "b"}};
            written.push_back(checkpoint_of("shared", step, values));
            srv::postgres_store& writer = step % 2 == 0 ? a : b;
            co_await writer.add_checkpoint(written.back());
        }
        auto from_a = co_await a.checkpoints("shared");
        auto from_b = co_await b.checkpoints("shared");
        CHECK(from_a == written);
        CHECK(from_b == written);

        // A remembers the last row; B rolls it back and writes another under the
        // same seq and checkpoint id, with a key A never saw; A's next delta must
        // follow B's row (and remove that key), not what A remembers.
        auto last = co_await a.last_checkpoint("shared");
        REQUIRE(last);
        co_await b.truncate_checkpoints("shared", written.size() - 1);
        written.pop_back();
        messages.pop_back();
        messages.push_back(message(5000));
        json::object b_values{{"messages", messages}, {"writer", "b again"}, {"note", "only in b's row"}};
        written.push_back(checkpoint_of("shared", static_cast<int>(written.size()), b_values));
        co_await b.add_checkpoint(written.back());
        messages.push_back(message(5001));
        json::object a_values{{"messages", messages}, {"writer", "a again"}};
        written.push_back(checkpoint_of("shared", static_cast<int>(written.size()), a_values));
        co_await a.add_checkpoint(written.back());
        from_a = co_await a.checkpoints("shared");
        from_b = co_await b.checkpoints("shared");
        CHECK(from_a == written);
        CHECK(from_b == written);

        // Side by side: every checkpoint reads back as its writer wrote it, in some order.
        std::map<std::string, json::object> by_id;
        for (const auto& c : written)
            by_id[std::string(c.at("checkpoint_id").as_string())] = c;
        co_await agentware::test::side_by_side(2, [&](int who) -> asio::awaitable<void> {
            srv::postgres_store& writer = who == 0 ? a : b;
            json::array own;
            for (int i = 0; i < 15; ++i) {
                own.push_back(message(static_cast<std::size_t>(10'000 * (who + 1) + i)));
                json::object values{{"messages", own}, {"writer", who}};
                auto c = checkpoint_of("race", 100 * who + i, values);
                by_id[std::string(c.at("checkpoint_id").as_string())] = c;
                co_await writer.add_checkpoint(std::move(c));
            }
        });
        const auto raced = co_await b.checkpoints("race");
        CHECK(raced.size() == 30);
        for (const auto& c : raced)
            CHECK(c == by_id.at(std::string(c.at("checkpoint_id").as_string())));
    });
}

TEST_CASE("postgres store: prune keeps the last checkpoints whole", "[postgres][store]") {
    run([]() -> asio::awaitable<void> {
        pool_thread pool(co_await fresh_database());
        co_await pool.migrate();
        srv::postgres_store s(pool.db(), pool.executor(), {.snapshot_every = 50});
        std::vector<json::object> written;
        json::array messages;
        const auto add = [&]() -> asio::awaitable<void> {
            messages.push_back(message(written.size()));
            json::object values{{"messages", messages}, {"n", written.size()}};
            written.push_back(checkpoint_of("p", static_cast<int>(written.size()), values));
            co_await s.add_checkpoint(written.back());
        };
        for (int i = 0; i < 130; ++i)
            co_await add();

        auto dropped = co_await s.prune("p", 20); // the oldest kept, 110, is a delta
        CHECK(dropped == 110);
        auto kept = co_await s.checkpoints("p");
        CHECK(kept == std::vector<json::object>(written.begin() + 110, written.end()));
        auto first = co_await pool.query(
            "SELECT seq, snapshot FROM agentware_checkpoints WHERE thread_id = 'p' ORDER BY seq LIMIT 1");
        CHECK(first.as<int>(0, "seq") == 110);
        CHECK(first.as<bool>(0, "snapshot"));

        // The last one alone, then the thread goes on from it.
        dropped = co_await s.prune("p", 1);
        CHECK(dropped == 19);
        co_await add();
        co_await add();
        kept = co_await s.checkpoints("p");
        CHECK(kept == std::vector<json::object>(written.end() - 3, written.end()));
        const auto last = co_await s.last_checkpoint("p");
        REQUIRE(last);
        CHECK(*last == written.back());

        dropped = co_await s.prune("p", 10);
        CHECK(dropped == 0);
        dropped = co_await s.prune("nope", 1);
        CHECK(dropped == 0);
        dropped = co_await s.prune("p", 0);
        CHECK(dropped == 3);
        auto count = co_await s.checkpoint_count("p");
        CHECK(count == 0);
        const auto bytes = co_await s.checkpoint_bytes("p");
        CHECK(bytes == 0);
        co_await add();
        kept = co_await s.checkpoints("p");
        CHECK(kept == std::vector<json::object>{written.back()});
    });
}

TEST_CASE("a run's saved state follows the agent's by what changed", "[postgres][store]") {
    // The agent's state as a view, as agentware::agent hands it to a save.
    json::object agent{{"messages", json::array{}}, {"title", "a"}, {"todos", json::array{1}}};
    auto& messages = agent["messages"].as_array();
    for (std::size_t i = 0; i < 100; ++i)
        messages.push_back(message(i));
    json::object saved = agent;
    std::vector<json::value> pending;
    auto advance = [&] {
        return srv::detail::advance_saved_state(saved, pending,
                                                agentware::detail::json_state_view(agent, messages));
    };
    // A round: a message added, a key changed, one removed, one added.
    messages.push_back(message(100));
    agent["title"] = "b";
    agent.erase("todos");
    agent["artifacts"] = json::array{"a.md"};
    auto changes = advance();
    json::object set{{"title", "b"}, {"artifacts", json::array{"a.md"}}};
    json::object expected{
        {"at", 100}, {"append", json::array{message(100)}}, {"set", set}, {"unset", json::array{"todos"}}};
    CHECK(changes == expected);
    CHECK(saved == agent);
    // Tool results checkpointed since the last save are part of what it builds on.
    pending.push_back(message(101));
    messages.push_back(message(101));
    messages.push_back(message(102));
    changes = advance();
    CHECK(changes == json::object{{"at", 102}, {"append", json::array{message(102)}}});
    CHECK(pending.empty());
    CHECK(saved == agent);
    // Nothing changed.
    changes = advance();
    CHECK(changes == json::object{{"at", 103}});
    // A summary rewrites the history: the changes start where it differs.
    messages.erase(messages.begin() + 2, messages.begin() + 90);
    messages[1] = message(1, 7);
    changes = advance();
    CHECK(changes.at("at") == 1);
    CHECK(changes.at("append").as_array().size() == messages.size() - 1);
    CHECK(saved == agent);
    // An edit among the last messages is seen; an older one is taken as unchanged.
    for (std::size_t i = messages.size(); i < 200; ++i)
        messages.push_back(message(i));
    advance();
    messages[190] = message(190, 1);
    changes = advance();
    CHECK(changes.at("at") == 190);
    messages[10] = message(10, 1);
    changes = advance();
    CHECK(changes == json::object{{"at", 200}});
    CHECK(saved.at("messages").as_array()[10] != messages[10]);
    // Applied to the state saved before, the changes give the state saved now.
    const json::object before = saved;
    messages.resize(150);
    messages.push_back(message(1000));
    agent["title"] = "c";
    changes = advance();
    json::object rebuilt = before;
    const auto why = agentware::detail::apply_state_changes(rebuilt, changes);
    CHECK(why.empty());
    CHECK(rebuilt == saved);
    CHECK(rebuilt.at("messages").as_array().size() == 151);
}

TEST_CASE("postgres store: a run's checkpoints are written only while its worker holds the run",
          "[postgres][store]") {
    run([]() -> asio::awaitable<void> {
        pool_thread pool(co_await fresh_database());
        co_await pool.migrate();
        srv::postgres_run_queue queue(pool.db(), {.worker_id = "w1"});
        srv::postgres_store mine(pool.db(), pool.executor(), {.worker_id = "w1"});
        srv::postgres_store paused(pool.db(), pool.executor(), {.worker_id = "w2"});
        json::object made{{"run_id", "run-1"}, {"thread_id", "t1"}};
        co_await pool.there(queue.create("run-1", "t1", "agent", made, "enqueue", std::nullopt, true));

        json::object v0{{"messages", json::array{message(0)}}};
        co_await mine.add_checkpoint(checkpoint_of("t1", 0, v0));
        auto count = co_await mine.checkpoint_count("t1");
        CHECK(count == 1);
        // Another process that no longer holds the run (its worker id is not the owner's) writes nothing.
        json::object v1{{"messages", json::array{message(0), message(1)}}};
        co_await paused.add_checkpoint(checkpoint_of("t1", 1, v1));
        count = co_await mine.checkpoint_count("t1");
        CHECK(count == 1);
        // A client's state update is not a run's: not fenced.
        auto update = checkpoint_of("t1", 1, v1);
        update["source"] = "update";
        co_await paused.add_checkpoint(update);
        count = co_await mine.checkpoint_count("t1");
        CHECK(count == 2);
        // Once the run ended, its worker's late checkpoint is dropped too.
        const bool finished = co_await pool.there(queue.finish("run-1", "success", made));
        CHECK(finished);
        json::object v2{{"messages", json::array{message(0), message(1), message(2)}}};
        co_await mine.add_checkpoint(checkpoint_of("t1", 2, v2));
        count = co_await mine.checkpoint_count("t1");
        CHECK(count == 2);
        const auto last = co_await mine.last_checkpoint("t1");
        REQUIRE(last);
        CHECK(*last == update);
    });
}

TEST_CASE("postgres store: the run queue and the store see the same runs and threads", "[postgres][store]") {
    run([]() -> asio::awaitable<void> {
        pool_thread pool(co_await fresh_database());
        co_await pool.migrate();
        srv::postgres_store s(pool.db(), pool.executor());
        srv::postgres_run_queue queue(pool.db(), {.worker_id = "w1"});

        json::object record{
            {"run_id", "r1"}, {"thread_id", "t1"}, {"assistant_id", "agent"}, {"status", "success"}};
        co_await s.put_run(record);
        auto queued = co_await pool.there(queue.run("r1"));
        REQUIRE(queued);
        CHECK(queued->thread_id == "t1");
        CHECK(queued->assistant_id == "agent");
        CHECK(queued->status == "success");
        CHECK(queued->record == record);
        json::object no_status{{"run_id", "r2"}, {"thread_id", "t1"}};
        co_await s.put_run(no_status);
        queued = co_await pool.there(queue.run("r2"));
        REQUIRE(queued);
        CHECK(queued->assistant_id.empty());
        CHECK(queued->status == "pending");

        json::object made{{"run_id", "r3"}, {"thread_id", "t2"}};
        co_await pool.there(queue.create("r3", "t2", "agent", made, "enqueue"));
        const auto seen = co_await s.run("r3");
        REQUIRE(seen);
        // The record as made, with the queue's status (the status column is the run's truth).
        json::object pending = made;
        pending["status"] = "pending";
        CHECK(*seen == pending);
        const auto thread = co_await s.thread("t2");
        REQUIRE(thread);
        CHECK(thread->at("thread_id") == "t2");
        const bool erased = co_await s.erase_thread("t2");
        CHECK(erased);
        queued = co_await pool.there(queue.run("r3"));
        CHECK_FALSE(queued);
    });
}

TEST_CASE("redis client: commands and their replies, pipelines, errors, addresses", "[redis]") {
    const auto where = agentware::redis::address::parse(agentware::test::redis_server::shared().url());
    run([&]() -> asio::awaitable<void> {
        auto c = co_await agentware::redis::connection::connect(where);
        auto set = co_await c.command("SET", "greeting", "hello\r\nworld");
        CHECK(set.type == agentware::redis::reply::kind::simple);
        auto got = co_await c.command("GET", "greeting");
        CHECK(got.text == "hello\r\nworld"); // a bulk string holds any bytes
        auto missing = co_await c.command("GET", "nothing here");
        CHECK(missing.nil());
        std::vector<agentware::redis::connection::command_args> three{
            {"INCR", "n"}, {"INCR", "n"}, {"LRANGE", "none", "0", "-1"}};
        auto replies = co_await c.pipeline(three);
        REQUIRE(replies.size() == 3);
        CHECK(replies[1].integer == 2);
        CHECK(replies[2].type == agentware::redis::reply::kind::array);
        auto wrong = co_await c.command("NOSUCHCOMMAND");
        CHECK(wrong.failed());
        CHECK_THROWS_WITH(wrong.ok("NOSUCHCOMMAND"),
                          Catch::Contains("redis: NOSUCHCOMMAND: ERR unknown command"));
    });
    const auto tcp = agentware::redis::address::parse("redis://:secret@cache.internal:6380/2");
    CHECK(tcp.host == "cache.internal");
    CHECK(tcp.port == 6380);
    CHECK(tcp.db == 2);
    CHECK(tcp.password == "secret");
    CHECK(tcp.text() == "redis://cache.internal:6380/2"); // no password in what logs show
    CHECK(agentware::redis::address::parse("unix:///run/redis.sock?db=3").db == 3);
    CHECK_THROWS_WITH(agentware::redis::address::parse("http://:secret@x"),
                      Catch::Contains("is not a Redis URL") && !Catch::Contains("secret"));
}

namespace {

// The conformance of an event bus: ids in order from where a reader asks,
// appends announced to a watcher.
asio::awaitable<void> check_event_bus(srv::event_bus& bus, std::string run_id) {
    std::atomic<int> announced{0};
    bus.watch([&](std::string id) {
        if (id == run_id) ++announced;
    });
    std::vector<srv::stream_event> first{{"metadata", R"({"run_id": "r"})", 0},
                                         {"values", "{}", 1},
                                         {"updates|task:1", R"({"x": [1, 2]})", 2}};
    co_await bus.append(run_id, first);
    auto all = co_await bus.read(run_id, 0, 1000);
    REQUIRE(all.size() == 3);
    for (std::size_t i = 0; i < all.size(); ++i) {
        CHECK(all[i].id == i);
        CHECK(all[i].name == first[i].name);
        CHECK(all[i].data == first[i].data);
    }
    std::vector<srv::stream_event> more{{"values", R"({"n": 3})", 3}, {"values", R"({"n": 4})", 4}};
    co_await bus.append(run_id, more);
    auto rest = co_await bus.read(run_id, 3, 1000);
    REQUIRE(rest.size() == 2);
    CHECK(rest[0].id == 3);
    CHECK(rest[1].data == R"({"n": 4})");
    auto page = co_await bus.read(run_id, 1, 2);
    REQUIRE(page.size() == 2);
    CHECK(page[1].id == 2);
    const auto none = co_await bus.read("another run", 0, 1000);
    CHECK(none.empty());
    // The watcher hears of appends (LISTEN or SUBSCRIBE: it may miss the first while it connects).
    for (std::size_t i = 5; i < 200 && announced.load() == 0; ++i) {
        std::vector<srv::stream_event> one{{"values", "{}", i}};
        co_await bus.append(run_id, one);
        co_await agentware::test::sleep_for(std::chrono::milliseconds(20));
    }
    CHECK(announced.load() > 0);
    bus.unwatch();
}

} // namespace

TEST_CASE("event bus: a run's events in order from any id, and their announcements, on PostgreSQL and Redis",
          "[postgres][redis]") {
    run([]() -> asio::awaitable<void> {
        pool_thread pool(co_await fresh_database());
        co_await pool.migrate();
        srv::postgres_store s(pool.db(), pool.executor());
        json::object over{{"run_id", "r1"}, {"thread_id", "t1"}, {"status", "success"}};
        co_await s.put_run(over);
        srv::postgres_event_bus on_postgres(pool.db(), pool.executor());
        co_await check_event_bus(on_postgres, "r1");
        // The events of a run long over go.
        const auto pruned = co_await on_postgres.prune(std::chrono::seconds(0));
        CHECK(pruned >= 5);
        const auto gone = co_await on_postgres.read("r1", 0, 1000);
        CHECK(gone.empty());

        srv::redis_event_bus_options ro{
            .server = agentware::redis::address::parse(agentware::test::redis_server::shared().url())};
        srv::redis_event_bus on_redis(ro);
        co_await check_event_bus(on_redis, "r1-" + std::to_string(::getpid()));
    });
}

TEST_CASE("redis event bus: a reader behind the cap finds where the kept events start", "[redis]") {
    run([]() -> asio::awaitable<void> {
        srv::redis_event_bus_options ro{
            .server = agentware::redis::address::parse(agentware::test::redis_server::shared().url()),
            .max_events = 10};
        srv::redis_event_bus bus(ro);
        const std::string run_id = "capped-" + std::to_string(::getpid());
        std::vector<srv::stream_event> many;
        for (std::size_t i = 0; i < 1000; ++i)
            many.push_back({"values", std::to_string(i), i});
        co_await bus.append(run_id, many);
        auto kept = co_await bus.read(run_id, 0, 10000);
        REQUIRE_FALSE(kept.empty());
        CHECK(kept.front().id > 0); // the first were trimmed: a follower from 0 has a gap
        CHECK(kept.back().id == 999);
        CHECK(kept.back().data == "999");
        for (std::size_t i = 1; i < kept.size(); ++i)
            CHECK(kept[i].id == kept[i - 1].id + 1);
    });
}

} // namespace store_test
