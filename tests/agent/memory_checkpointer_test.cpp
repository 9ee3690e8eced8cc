// agent/memory_checkpointer.hpp: the in-memory checkpointer: round trips, shared copies,
// invalid ids, many threads at once.
#include <agentware/agent/memory_checkpointer.hpp>

#include "checkpointer_support.hpp"

#include <catch2/catch.hpp>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <atomic>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace json = boost::json;
using namespace agentware;
using checkpointer_test::hostile_ids;
using checkpointer_test::sample_state;

TEST_CASE("memory checkpointer saves, loads, lists and erases states", "[checkpointer][memory]") {
    memory_checkpointer cp;
    CHECK_FALSE(cp.load("t1").has_value());
    CHECK(cp.list().empty());

    cp.save("t1", sample_state(0));
    cp.save("t0", json::value("other"));
    REQUIRE(cp.load("t1").has_value());
    CHECK(*cp.load("t1") == sample_state(0));
    CHECK(cp.list() == std::vector<std::string>{"t0", "t1"});
    CHECK(cp.size() == 2);

    // Continuing the thread: load, extend, save, load again.
    json::value state = *cp.load("t1");
    state.as_object()["messages"].as_array().push_back(json::object{{"role", "user"}, {"content", "turn 1"}});
    state.as_object()["turn"] = 1;
    cp.save("t1", state);
    CHECK(*cp.load("t1") == sample_state(1));

    CHECK(cp.erase("t1"));
    CHECK_FALSE(cp.erase("t1"));
    CHECK_FALSE(cp.load("t1").has_value());
    CHECK(cp.list() == std::vector<std::string>{"t0"});
}

TEST_CASE("memory checkpointer copies share one store and states are deep copies", "[checkpointer][memory]") {
    memory_checkpointer agent_side;
    memory_checkpointer caller_side = agent_side;
    agent_side.save("t", sample_state(2));
    CHECK(caller_side.load("t") == std::optional<json::value>(sample_state(2)));

    // A loaded state is the caller's: changing it does not change the store.
    json::value loaded = *caller_side.load("t");
    loaded.as_object()["turn"] = 99;
    CHECK(agent_side.load("t")->at("turn") == 2);

    // A state built on a short-lived memory resource outlives that resource.
    {
        json::monotonic_resource arena;
        json::value on_arena =
            json::parse(R"({"big":[1,2,3],"text":"a fairly long string that is not small"})", &arena);
        agent_side.save("arena", on_arena);
    }
    CHECK(boost::json::serialize(*agent_side.load("arena")) ==
          R"({"big":[1,2,3],"text":"a fairly long string that is not small"})");
    CHECK(agent_side.load("arena")->storage().get() == json::storage_ptr().get());
}

TEST_CASE("memory checkpointer rejects invalid thread ids", "[checkpointer][memory]") {
    memory_checkpointer cp;
    for (const auto& id : hostile_ids) {
        INFO(id);
        CHECK_THROWS_AS(cp.save(id, json::value(1)), std::invalid_argument);
        CHECK_THROWS_AS(cp.load(id), std::invalid_argument);
        CHECK_THROWS_AS(cp.erase(id), std::invalid_argument);
    }
    CHECK(cp.size() == 0);
}

TEST_CASE("memory checkpointer serves many threads at once", "[checkpointer][memory][concurrency]") {
    memory_checkpointer cp;
    constexpr int writers = 8;
    constexpr int saves = 200;
    std::vector<std::thread> threads;
    for (int w = 0; w < writers; ++w) {
        threads.emplace_back([cp, w]() mutable {
            for (int i = 0; i < saves; ++i) {
                cp.save("shared", json::object{{"writer", w}, {"seq", i}});
                cp.save("own-" + std::to_string(w), json::object{{"seq", i}});
                const auto got = cp.load("shared");
                if (!got || !got->is_object() || !got->as_object().contains("seq"))
                    throw std::logic_error("torn state");
                (void)cp.list();
            }
        });
    }
    for (auto& t : threads)
        t.join();
    const auto shared = cp.load("shared");
    REQUIRE(shared.has_value());
    CHECK(shared->at("seq") == saves - 1);
    for (int w = 0; w < writers; ++w)
        CHECK(cp.load("own-" + std::to_string(w))->at("seq") == saves - 1);
    CHECK(cp.size() == writers + 1);
}
