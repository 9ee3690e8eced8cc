// model_call_limit: thread and run limits, end and error, the counts as state
// fields, JSON options with bad input.
#include "../agent/support.hpp"

#include <agentware/middleware/model_call_limit.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

using namespace agentware;

namespace {
model_call_limit_options limits(std::optional<std::size_t> thread, std::optional<std::size_t> run,
                                exit_behavior e = exit_behavior::end) {
    model_call_limit_options o;
    o.thread_limit = thread;
    o.run_limit = run;
    o.exit = e;
    return o;
}
} // namespace

TEST_CASE("model_call_limit ends a run at its run limit with LangChain's text",
          "[middleware][model_call_limit]") {
    scripted_model model({test::calls({test::call("c1", "echo", R"({"text":"a"})")}),
                          test::calls({test::call("c2", "echo", R"({"text":"b"})")}), ai_message("never")});
    auto a = make_agent(model, tool_set(test::echo_tool()), model_call_limit(limits(std::nullopt, 2)));
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::ended_by_hook);
    CHECK(model.calls() == 2);
    CHECK(r.state.messages.back().is_ai());
    CHECK(r.answer() == "Model call limits exceeded: run limit (2/2)");
    CHECK(get<run_model_call_count>(r.state) == 2);
    CHECK(get<thread_model_call_count>(r.state) == 2);
}

TEST_CASE("model_call_limit counts a thread across runs, the run count restarts",
          "[middleware][model_call_limit]") {
    scripted_model model({ai_message("one"), ai_message("two"), ai_message("three")});
    auto a = make_agent(model, tool_set{}, model_call_limit(limits(2, 5)));
    a.use_checkpointer(memory_checkpointer{});
    run_config cfg;
    cfg.thread_id = "t";
    CHECK(a.invoke("a", cfg).answer() == "one");
    CHECK(a.invoke("b", cfg).answer() == "two");
    auto r = a.invoke("c", cfg);
    CHECK(r.answer() == "Model call limits exceeded: thread limit (2/2)");
    CHECK(get<run_model_call_count>(r.state) == 0);
    CHECK(get<thread_model_call_count>(r.state) == 2);
    CHECK(model.calls() == 2);
    // both parts when both are exceeded
    CHECK(model_call_limit::limit_text(3, 2, 3, 2) ==
          "Model call limits exceeded: thread limit (3/3), run limit (2/2)");
}

TEST_CASE("model_call_limit with error throws, and a limit of 0 stops the first call",
          "[middleware][model_call_limit]") {
    scripted_model model({ai_message("never")});
    auto a = make_agent(model, tool_set{}, model_call_limit(limits(0, std::nullopt, exit_behavior::error)));
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::error);
    CHECK(r.error.find("Model call limits exceeded: thread limit (0/0)") != std::string::npos);
    CHECK_THROWS_AS(std::rethrow_exception(r.exception), model_call_limit_exceeded);
    CHECK(model.calls() == 0);
    CHECK(r.state.messages.size() == 1); // the input is kept
}

TEST_CASE("model_call_limit options: no limit, continue, JSON round trip and bad keys",
          "[middleware][model_call_limit][options]") {
    CHECK_THROWS_WITH(model_call_limit(limits(std::nullopt, std::nullopt)),
                      "At least one limit must be specified (thread_limit or run_limit)");
    CHECK_THROWS_AS(model_call_limit(limits(1, 1, exit_behavior::continue_)), std::invalid_argument);
    auto o = boost::json::value_to<model_call_limit_options>(
        boost::json::parse(R"({"thread_limit": 10, "exit_behavior": "error"})"));
    CHECK(o.thread_limit == 10u);
    CHECK_FALSE(o.run_limit);
    CHECK(o.exit == exit_behavior::error);
    CHECK(boost::json::value_to<model_call_limit_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(boost::json::value_to<model_call_limit_options>(
                          boost::json::parse(R"({"run_limit": 1, "exit_behavior": "continue"})")),
                      Catch::Contains("model_call_limit.exit_behavior") &&
                          Catch::Contains("expected \"end\" or \"error\""));
    CHECK_THROWS_WITH(
        boost::json::value_to<model_call_limit_options>(boost::json::parse(R"({"run_limit": -1})")),
        Catch::Contains("model_call_limit.run_limit"));
    CHECK_THROWS_WITH(
        boost::json::value_to<model_call_limit_options>(boost::json::parse(R"({"runlimit": 1})")),
        Catch::Contains("runlimit"));
    CHECK_THROWS_WITH(boost::json::value_to<model_call_limit_options>(boost::json::parse(R"({})")),
                      Catch::Contains("At least one limit"));
}
