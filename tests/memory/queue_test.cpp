// The memory update queue: one item per key, the debounce, back-pressure, the
// background worker and its shutdown.
#include <agentware/memory/queue.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace agentware;
using namespace std::chrono_literals;
using dftest::temp_dir;
using namespace memory_test;

TEST_CASE("the queue keeps the latest conversation per key and unions signals", "[memory]") {
    std::vector<memory_update_item> seen;
    auto clock = std::make_shared<manual_clock>();
    memory_update_queue q(
        {.debounce = 30s, .start_worker = false}, [&](const auto& i) { seen.push_back(i); }, clock);
    auto a = item_for("t1", {"correction"});
    CHECK(q.add(a) == memory_add_result::queued);
    auto b = item_for("t2");
    q.add(b);
    auto a2 = item_for("t1", {"preference"});
    a2.messages.push_back(human_message("later"));
    CHECK(q.add(a2) == memory_add_result::replaced);
    auto other_agent = item_for("t1");
    other_agent.agent_name = "coder";
    q.add(other_agent);
    CHECK(q.pending() == 3);

    // debounce: nothing before 30 s after the last add
    clock->advance(29s);
    CHECK(q.run_due() == 0);
    clock->advance(1s);
    CHECK(q.run_due() == 3);
    REQUIRE(seen.size() == 3);
    CHECK(seen[0].thread_id == "t2"); // the replaced item moved to the back
    CHECK(seen[1].thread_id == "t1");
    CHECK(seen[1].messages.size() == 3);
    CHECK(seen[1].signals == std::vector<std::string>{"preference", "correction"});
    CHECK(seen[2].agent_name == "coder");
}

TEST_CASE("every add restarts the debounce, the immediate path is due at once", "[memory]") {
    int runs = 0;
    auto clock = std::make_shared<manual_clock>();
    memory_update_queue q(
        {.debounce = 30s, .start_worker = false}, [&](const auto&) { ++runs; }, clock);
    q.add(item_for("t1"));
    clock->advance(20s);
    q.add(item_for("t2"));
    clock->advance(20s);
    CHECK(q.run_due() == 0); // 40 s after the first add, 20 s after the second
    clock->advance(10s);
    CHECK(q.run_due() == 2);

    q.add(item_for("t1"));
    CHECK(q.add_nowait(item_for("t1")) == memory_add_result::queued); // coexists with the ordinary item
    CHECK(q.pending() == 2);
    CHECK(q.run_due() == 2); // no time passed
}

TEST_CASE("back-pressure refuses ordinary items at the depth limit", "[memory]") {
    memory_update_queue q(
        {.max_depth = 3, .start_worker = false}, [](const auto&) {}, std::make_shared<manual_clock>());
    for (int i = 0; i < 3; ++i)
        CHECK(q.add(item_for(fmt::format("t{}", i))) == memory_add_result::queued);
    CHECK(q.add(item_for("t9")) == memory_add_result::dropped);
    CHECK(q.add(item_for("t1")) == memory_add_result::replaced); // replacing does not grow the queue
    CHECK(q.add(item_for("t10", {"correction"})) == memory_add_result::queued);
    CHECK(q.add_nowait(item_for("t11")) == memory_add_result::queued);
    CHECK(q.pending() == 5);
}

TEST_CASE("the worker processes in the background and a failure does not stop it", "[memory][concurrency]") {
    std::atomic<int> done{0};
    std::atomic<bool> release{false};
    auto clock = std::make_shared<manual_clock>();
    memory_update_queue q(
        {.debounce = 30s, .between_items = 0ms, .poll = 1ms},
        [&](const memory_update_item& i) {
            while (!release)
                std::this_thread::yield();
            if (i.thread_id == "bad") throw std::runtime_error("model exploded");
            ++done;
        },
        clock);
    q.add(item_for("bad"));
    q.add(item_for("t1"));
    clock->advance(31s); // the worker notices on its next poll
    // add never waits for the worker, even while it is busy
    for (int i = 0; i < 50; ++i)
        q.add(item_for(fmt::format("more{}", i)));
    release = true;
    CHECK(q.flush(10s));
    CHECK(done == 51);
    const auto failures = q.take_failures();
    REQUIRE(failures.size() == 1);
    CHECK(failures[0] == "bad/alice/__default__: model exploded");
    CHECK(q.shutdown(1s));
}

TEST_CASE("shutdown gives up after its timeout when the model hangs", "[memory][concurrency]") {
    auto gate = std::make_shared<std::atomic<bool>>(false);
    auto q = std::make_unique<memory_update_queue>(memory_queue_options{.poll = 1ms},
                                                   [gate](const memory_update_item&) {
                                                       while (!*gate)
                                                           std::this_thread::sleep_for(1ms);
                                                   });
    q->add_nowait(item_for("t1"));
    CHECK_FALSE(q->shutdown(20ms));
    q.reset(); // the worker was left to finish on its own
    *gate = true;
    std::this_thread::sleep_for(20ms);
}
