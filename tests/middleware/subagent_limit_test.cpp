// subagent_limit: excess task calls are taken from the model's answer, alone,
// in an agent and under concurrency; a run's count read from the delegation ledger.
#include <agentware/middleware/subagent_limit.hpp>

#include "after_model_bench.hpp"
#include "delegations_support.hpp"

#include <agentware/middleware/durable_context.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

using namespace agentware;
using strings = std::vector<std::string>;
using test::bench;
using test::plain_state;
using test::task;
using namespace delegations_test;

TEST_CASE("subagent_limit keeps the first three task calls of an answer, silently",
          "[middleware][subagent_limit]") {
    bench<subagent_limit> b;
    const message& m = b.answer(
        {task("t1"), test::call("x", "bash"), task("t2"), task("t3"), task("t4"), task("t5")}, "Delegating.");
    std::vector<std::string> ids;
    for (const auto& c : m.tool_calls)
        ids.push_back(c.id);
    CHECK(ids == strings{"t1", "x", "t2", "t3"});
    CHECK(m.text() == "Delegating.");
    CHECK_FALSE(b.rt.context.contains("stop_reason"));
    CHECK(b.guard.used(b.rt) == 3);
}

TEST_CASE("subagent_limit caps a run's total and says so once the budget is spent",
          "[middleware][subagent_limit]") {
    bench<subagent_limit> b;
    b.answer({task("a1"), task("a2"), task("a3")});
    const message& second = b.answer({task("b1"), task("b2"), task("b3"), task("b4")});
    CHECK(second.tool_calls.size() == 3);
    CHECK(b.guard.used(b.rt) == 6);
    message third = ai_message("More work.", {task("c1"), test::call("x", "bash")});
    third.provider.set_finish_reason("tool_calls");
    const message& m = b.answer(third);
    REQUIRE(m.tool_calls.size() == 1);
    CHECK(m.tool_calls[0].name == "bash");
    CHECK(m.text() == "More work.\n\n[SUBAGENT LIMIT REACHED] The subagent delegation limit for this run has "
                      "been reached. Continue "
                      "using the subagent results already collected, execute remaining simple work directly, "
                      "or summarize the "
                      "remaining work instead of launching more subagents.");
    CHECK(m.provider.finish_reason() == "tool_calls"); // calls remain
    CHECK(b.rt.context.at("stop_reason") == "subagent_limit_capped");
    message only_tasks = ai_message("", {task("d1")});
    only_tasks.provider.set_finish_reason("tool_calls");
    const message& d = b.answer(only_tasks);
    CHECK(d.tool_calls.empty());
    CHECK(d.provider.finish_reason() == "stop");
}

TEST_CASE("an answer that only exceeds the remaining budget is cut without a note",
          "[middleware][subagent_limit]") {
    bench<subagent_limit> b{subagent_limit(subagent_limit_options{3, 4})};
    b.answer({task("a1"), task("a2"), task("a3")});
    const message& m = b.answer({task("b1"), task("b2")}, "x");
    CHECK(m.tool_calls.size() == 1);
    CHECK(m.text() == "x");
}

TEST_CASE("subagent_limit clamps its limits, ceilings may be raised for large fan-out",
          "[middleware][subagent_limit]") {
    runtime rt;
    CHECK(subagent_limit(subagent_limit_options{10, 100}).effective_max_concurrent(rt) == 4);
    CHECK(subagent_limit(subagent_limit_options{10, 100}).effective_max_total(rt) == 50);
    CHECK(subagent_limit(subagent_limit_options{0, 0}).effective_max_concurrent(rt) == 1);
    CHECK(subagent_limit(subagent_limit_options{0, 0}).effective_max_total(rt) == 1);
    subagent_limit_options big{16, 500, 32, 1000};
    CHECK(subagent_limit(big).effective_max_concurrent(rt) == 16);
    CHECK(subagent_limit(big).effective_max_total(rt) == 500);
    bench<subagent_limit> b{subagent_limit(big)};
    std::vector<tool_call> many;
    for (int i = 0; i < 20; ++i)
        many.push_back(task(fmt::format("t{}", i)));
    CHECK(b.answer(many).tool_calls.size() == 16);
}

TEST_CASE("a run's context may set the subagent limits", "[middleware][subagent_limit]") {
    bench<subagent_limit> b;
    b.rt.context["max_concurrent_subagents"] = 2;
    b.rt.context["max_total_subagents"] = 0; // "or default": 6
    CHECK(b.answer({task("a"), task("b"), task("c")}).tool_calls.size() == 2);
    CHECK(b.guard.effective_max_total(b.rt) == 6);
    b.rt.context["max_concurrent_subagents"] = 99;
    CHECK(b.guard.effective_max_concurrent(b.rt) == 4);
}

TEST_CASE("subagent_limit counts per run and forgets a finished run", "[middleware][subagent_limit]") {
    bench<subagent_limit> b{subagent_limit(subagent_limit_options{3, 3})};
    b.answer({task("a"), task("b"), task("c")});
    runtime other{"thread-1", "run-2", {}, 0};
    CHECK(b.guard.used(other) == 0);
    b.guard.after_agent(b.state, b.rt);
    CHECK(b.guard.used(b.rt) == 0);
    CHECK(b.answer({task("d")}).tool_calls.size() == 1);
    CHECK(b.answer(ai_message("no calls")).text() == "no calls");
}

TEST_CASE("subagent_limit in an agent: excess task calls never run", "[middleware][subagent_limit][agent]") {
    std::atomic<int> runs{0};
    auto task_tool = make_tool("task", "Delegates.", R"({"type":"object"})", [&](const boost::json::object&) {
        ++runs;
        return std::string("Task Succeeded. Result: done");
    });
    scripted_model model(
        {test::calls({task("a"), task("b"), task("c"), task("d"), task("e")}), ai_message("ok")});
    auto a = make_agent(model, tool_set(task_tool), subagent_limit{});
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::finished);
    CHECK(runs == 3);
    CHECK(r.state.messages.at(1).tool_calls.size() == 3);
}

TEST_CASE("concurrent runs share one subagent_limit safely", "[middleware][subagent_limit][concurrency]") {
    subagent_limit lim;
    std::vector<std::thread> workers;
    std::atomic<int> kept{0};
    for (int w = 0; w < 8; ++w)
        workers.emplace_back([&, w] {
            plain_state s;
            runtime rt{"t", fmt::format("r{}", w), {}, 0};
            for (int i = 0; i < 5; ++i) {
                s.messages.push_back(test::calls({task("a"), task("b"), task("c"), task("d")}));
                lim.after_model(s, rt);
                kept += static_cast<int>(s.messages.back().tool_calls.size());
            }
            lim.after_agent(s, rt);
        });
    for (auto& t : workers)
        t.join();
    CHECK(kept == 8 * 6);
}

TEST_CASE("subagent_limit counts a run's delegations from the ledger, which survives summarization",
          "[middleware][durable_context][subagent_limit]") {
    subagent_limit_options lo;
    lo.max_total_per_run = 2;
    // The ledger says this run already delegated twice (their calls are gone from the history).
    scripted_model model({test::calls({task_call("t3", "third")}), ai_message("fine")});
    auto a = make_agent(model, tool_set(fake_task_tool()), durable_context{}, subagent_limit(lo));
    decltype(a)::state_type state;
    get<delegations_field>(state) = {entry("t1", "completed", "run-9"), entry("t2", "completed", "run-9"),
                                     entry("old", "completed", "run-1")};
    run_config cfg;
    cfg.run_id = "run-9";
    auto r = a.run(state, "more", cfg);
    REQUIRE(r.ok());
    CHECK(r.context.at("stop_reason") == "subagent_limit_capped");
    const message* answer = nullptr;
    for (const auto& m : state.messages)
        if (m.is_ai()) {
            answer = &m;
            break;
        }
    REQUIRE(answer);
    CHECK(answer->tool_calls.empty());
    // Another run starts with its own budget.
    scripted_model model2({test::calls({task_call("t4", "fourth")}), ai_message("fine")});
    a.model() = model2;
    cfg.run_id = "run-10";
    auto r2 = a.run(state, "again", cfg);
    REQUIRE(r2.ok());
    CHECK_FALSE(r2.context.contains("stop_reason"));
    CHECK(count_run_delegations(get<delegations_field>(state), "run-10") == 1);
}
