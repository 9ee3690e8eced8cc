// tool_call_limit: per tool or all tools, thread and run limits, continue,
// error and end, LangChain's texts, JSON options with bad input.
#include "../agent/support.hpp"

#include <agentware/middleware/tool_call_limit.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

using namespace agentware;

namespace {
tool_call_limit_options limits(std::optional<std::string> tool, std::optional<std::size_t> thread,
                               std::optional<std::size_t> run, exit_behavior e = exit_behavior::continue_) {
    tool_call_limit_options o;
    o.tool_name = std::move(tool);
    o.thread_limit = thread;
    o.run_limit = run;
    o.exit = e;
    return o;
}
tool_call echo(std::string id) { return test::call(std::move(id), "echo", R"({"text":"x"})"); }
} // namespace

TEST_CASE("tool_call_limit blocks calls over the run limit and the model reads why",
          "[middleware][tool_call_limit]") {
    scripted_model model({test::calls({echo("a"), echo("b"), echo("c")}), ai_message("done")});
    auto a = make_agent(model, tool_set(test::echo_tool()), tool_call_limit(limits("echo", std::nullopt, 2)));
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::finished);
    CHECK(r.answer() == "done");
    const auto& ms = r.state.messages;
    // the blocked call is answered first (by the middleware), then the two that ran
    REQUIRE(ms.size() == 6);
    CHECK(ms[2].tool_call_id() == "c");
    CHECK(ms[2].is_error());
    CHECK(ms[2].text() == "Tool call limit exceeded. Do not call 'echo' again.");
    CHECK(ms[3].text() == "x");
    CHECK(ms[4].text() == "x");
    CHECK(get<run_tool_call_count>(r.state).at("echo") == 2);
    CHECK(get<thread_tool_call_count>(r.state).at("echo") == 2);
}

TEST_CASE("tool_call_limit: all calls blocked goes back to the model", "[middleware][tool_call_limit]") {
    scripted_model model({test::calls({echo("a")}), test::calls({echo("b")}), ai_message("ok, stopping")});
    auto a = make_agent(model, tool_set(test::echo_tool()),
                        tool_call_limit(limits(std::nullopt, 1, std::nullopt)));
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::finished);
    CHECK(r.answer() == "ok, stopping");
    CHECK(model.calls() == 3);
    const auto& ms = r.state.messages;
    CHECK(ms[4].text() == "Tool call limit exceeded. Do not make additional tool calls.");
    CHECK(get<thread_tool_call_count>(r.state).at("__all__") == 1);
}

TEST_CASE("tool_call_limit counts the thread across runs and resets the run count",
          "[middleware][tool_call_limit]") {
    scripted_model model({test::calls({echo("a")}), ai_message("1"), test::calls({echo("b")}),
                          ai_message("2"), test::calls({echo("c")}), ai_message("3")});
    auto a = make_agent(model, tool_set(test::echo_tool()), tool_call_limit(limits(std::nullopt, 2, 1)));
    a.use_checkpointer(memory_checkpointer{});
    run_config cfg;
    cfg.thread_id = "t";
    a.invoke("x", cfg);
    auto r2 = a.invoke("y", cfg);
    CHECK(get<run_tool_call_count>(r2.state).at("__all__") == 1);
    auto r3 = a.invoke("z", cfg);
    CHECK(get<thread_tool_call_count>(r3.state).at("__all__") == 2);
    CHECK(get<run_tool_call_count>(r3.state).at("__all__") == 0);
    CHECK(r3.state.messages[r3.state.messages.size() - 2].text() ==
          "Tool call limit exceeded. Do not make additional tool calls.");
}

TEST_CASE("tool_call_limit with end appends the final text and ends, refuses with other calls pending",
          "[middleware][tool_call_limit]") {
    {
        scripted_model model({test::calls({echo("a"), echo("b")}), ai_message("never")});
        auto a = make_agent(model, tool_set(test::echo_tool()),
                            tool_call_limit(limits("echo", 1, 1, exit_behavior::end)));
        auto r = a.invoke("go");
        REQUIRE(r.reason == stop_reason::ended_by_hook);
        CHECK(model.calls() == 1);
        CHECK(r.answer() == "'echo' tool call limit reached: thread limit exceeded (2/1 calls) and run limit "
                            "exceeded (2/1 calls).");
        // the blocked call got its error; the allowed one was not run
        CHECK(r.state.messages[2].text() == "Tool call limit exceeded. Do not call 'echo' again.");
    }
    {
        scripted_model model(
            {test::calls({echo("a"), echo("b"), test::call("s", "search")}), ai_message("x")});
        auto a = make_agent(model, tool_set(test::echo_tool()),
                            tool_call_limit(limits("echo", std::nullopt, 1, exit_behavior::end)));
        auto r = a.invoke("go");
        REQUIRE(r.reason == stop_reason::error);
        CHECK(r.error.find("Cannot end execution with other tool calls pending. Found calls to: search. Use "
                           "'continue' or 'error' behavior instead.") != std::string::npos);
    }
}

TEST_CASE("tool_call_limit with error throws with the counts the calls would reach, limit 0 blocks all",
          "[middleware][tool_call_limit]") {
    scripted_model model({test::calls({echo("a")}), ai_message("never")});
    auto a = make_agent(model, tool_set(test::echo_tool()),
                        tool_call_limit(limits(std::nullopt, std::nullopt, 0, exit_behavior::error)));
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::error);
    CHECK_THROWS_AS(std::rethrow_exception(r.exception), tool_call_limit_exceeded);
    CHECK(r.error.find("Tool call limit reached: run limit exceeded (1/0 calls).") != std::string::npos);
}

TEST_CASE("two tool_call_limits in one pipeline share the count fields", "[middleware][tool_call_limit]") {
    struct search_tag;
    scripted_model model({test::calls({echo("a"), echo("b")}), ai_message("done")});
    auto a =
        make_agent(model, tool_set(test::echo_tool()), tool_call_limit(limits(std::nullopt, 5, std::nullopt)),
                   basic_tool_call_limit<search_tag>(limits("echo", 1, std::nullopt)));
    auto r = a.invoke("go");
    CHECK(get<thread_tool_call_count>(r.state).at("__all__") == 2);
    CHECK(get<thread_tool_call_count>(r.state).at("echo") == 1);
}

TEST_CASE("tool_call_limit options: validation, JSON round trip and bad keys",
          "[middleware][tool_call_limit][options]") {
    CHECK_THROWS_WITH(tool_call_limit(limits("x", std::nullopt, std::nullopt)),
                      "At least one limit must be specified (thread_limit or run_limit)");
    CHECK_THROWS_WITH(
        tool_call_limit(limits("x", 2, 3)),
        "run_limit (3) cannot exceed thread_limit (2). The run limit should be less than or equal to "
        "the thread limit.");
    auto o = boost::json::value_to<tool_call_limit_options>(
        boost::json::parse(R"({"tool_name": "search", "run_limit": 3, "exit_behavior": "end"})"));
    CHECK(o.tool_name == "search");
    CHECK(o.exit == exit_behavior::end);
    CHECK(boost::json::value_to<tool_call_limit_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(boost::json::value_to<tool_call_limit_options>(
                          boost::json::parse(R"({"run_limit": 1, "exit_behavior": "stop"})")),
                      Catch::Contains("tool_call_limit.exit_behavior"));
    CHECK_THROWS_WITH(
        boost::json::value_to<tool_call_limit_options>(boost::json::parse(R"({"tool_name": 3})")),
        Catch::Contains("tool_call_limit.tool_name"));
    CHECK_THROWS_WITH(boost::json::value_to<tool_call_limit_options>(
                          boost::json::parse(R"({"thread_limit": 1, "run_limit": 2})")),
                      Catch::Contains("tool_call_limit: run_limit (2) cannot exceed"));
}
