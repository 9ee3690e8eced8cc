// Threads of conversation: checkpointers keep each thread's state between
// invocations, and one agent serves many threads concurrently.
#include "support.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <random>
#include <thread>

using namespace agentware;
using strings = std::vector<std::string>;

TEST_CASE("invoking the same thread again continues its conversation", "[agent][threads]") {
    scripted_model model(
        {ai_message("first answer"), ai_message("second answer"), ai_message("other thread")});
    auto a = make_agent(model, tool_set{});
    memory_checkpointer store;
    a.use_checkpointer(store);
    run_config t1;
    t1.thread_id = "t1";
    run_config t2;
    t2.thread_id = "t2";
    REQUIRE(a.invoke("one", t1).ok());
    auto again = a.invoke("two", t1);
    REQUIRE(again.ok());
    CHECK(test::roles(again.state.messages) == strings{"human", "ai", "human", "ai"});
    CHECK(again.first_new_message == 2);
    CHECK(again.new_messages().size() == 2);
    auto other = a.invoke("three", t2);
    CHECK(test::roles(other.state.messages) == strings{"human", "ai"});
    auto reqs = model.requests();
    REQUIRE(reqs.size() == 3);
    CHECK(reqs[1].messages.size() == 3);
    CHECK(reqs[2].messages.size() == 1);
    CHECK(store.list() == strings{"t1", "t2"});
}

TEST_CASE("a directory checkpointer lets a new agent continue a thread", "[agent][threads]") {
    auto dir = std::filesystem::temp_directory_path() /
               ("agentware-threads-" + std::to_string(std::random_device{}()));
    {
        auto a = make_agent(scripted_model({ai_message("remembered")}), tool_set{});
        a.use_checkpointer(file_checkpointer(dir));
        run_config cfg;
        cfg.thread_id = "conversation-1";
        REQUIRE(a.invoke("remember this", cfg).ok());
    }
    scripted_model model({ai_message("yes")});
    auto b = make_agent(model, tool_set{});
    b.use_checkpointer(file_checkpointer(dir));
    run_config cfg;
    cfg.thread_id = "conversation-1";
    auto r = b.invoke("do you remember?", cfg);
    REQUIRE(r.ok());
    CHECK(test::roles(r.state.messages) == strings{"human", "ai", "human", "ai"});
    CHECK(r.state.messages[1].text() == "remembered");
    CHECK(model.requests().at(0).messages.size() == 3);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a bad thread id is an error result, not a crash", "[agent][threads][errors]") {
    auto a = make_agent(scripted_model({ai_message("x")}), tool_set{});
    a.use_checkpointer(memory_checkpointer{});
    run_config cfg;
    cfg.thread_id = "../../etc";
    auto r = a.invoke("hi", cfg);
    CHECK(r.reason == stop_reason::error);
    CHECK_THAT(r.error, Catch::Contains("invalid thread id"));
}

namespace {
// Answers from the conversation alone, so concurrent runs cannot take each other's answers.
struct call_then_answer_model {
    model_response invoke(const chat_request& r) {
        if (r.messages.back().is_tool()) return {ai_message("ok"), {}};
        return {test::calls({test::call("", "echo", R"({"text":"x"})")}), {}};
    }
};
} // namespace

TEST_CASE("one agent serves concurrent runs on different threads", "[agent][threads][concurrency]") {
    call_then_answer_model model;
    auto a = make_agent(model, tool_set(test::echo_tool()));
    memory_checkpointer store;
    a.use_checkpointer(store);
    constexpr int workers = 6, turns = 10;
    std::vector<std::thread> threads;
    std::vector<int> good(workers, 0);
    for (int w = 0; w < workers; ++w)
        threads.emplace_back([&, w] {
            run_config cfg;
            cfg.thread_id = "worker-" + std::to_string(w);
            for (int t = 0; t < turns; ++t)
                if (a.invoke("turn " + std::to_string(t), cfg).ok()) ++good[static_cast<std::size_t>(w)];
        });
    for (auto& t : threads)
        t.join();
    for (int w = 0; w < workers; ++w) {
        CHECK(good[static_cast<std::size_t>(w)] == turns);
        auto saved = store.load("worker-" + std::to_string(w));
        REQUIRE(saved);
        CHECK(saved->at("messages").as_array().size() == turns * 4);
    }
}
