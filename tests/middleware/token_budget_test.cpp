// token_budget: the warning at 80 % once, the hard stop at 100 %, what counts
// toward a run, and the options' JSON form.
#include "../agent/support.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/middleware/llm_error_handling.hpp>
#include <agentware/middleware/token_budget.hpp>
#include <agentware/model/scripted_model.hpp>

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace agentware;

namespace {

message answer(std::uint64_t in, std::uint64_t out, bool with_call = true, std::string text = {}) {
    message m = with_call ? test::calls({test::call("c" + std::to_string(in), "echo", R"({"text":"x"})")},
                                        std::move(text))
                          : ai_message(std::move(text));
    m.provider = provider_metadata(with_call ? "tool_calls" : "stop", "m", token_usage{in, out, in + out});
    return m;
}

std::string budget_warning_of(const recorded_request& r) {
    for (const auto& m : r.messages)
        if (m.name == "budget_warning") return m.text();
    return {};
}

token_budget_options budget(std::uint64_t max) {
    token_budget_options o;
    o.max_tokens = max;
    return o;
}

} // namespace

TEST_CASE("numbers are grouped as Python's {:,} groups them", "[middleware][token_budget]") {
    CHECK(detail::group_thousands(0) == "0");
    CHECK(detail::group_thousands(999) == "999");
    CHECK(detail::group_thousands(1000) == "1,000");
    CHECK(detail::group_thousands(200000) == "200,000");
    CHECK(detail::group_thousands(1234567) == "1,234,567");
}

TEST_CASE("the warning comes once at 80 %, the hard stop at 100 % removes the tool calls",
          "[middleware][token_budget]") {
    scripted_model model({answer(500, 300), answer(20, 10), answer(150, 100, true, "Still working.")});
    auto a = make_agent(model, tool_set(test::echo_tool()), token_budget(budget(1000)));
    run_config cfg;
    cfg.run_id = "r1";
    auto r = a.invoke("go", cfg);
    auto requests = model.requests();
    REQUIRE(requests.size() == 3);
    CHECK(budget_warning_of(requests[0]).empty());
    CHECK(budget_warning_of(requests[1]) ==
          "[TOKEN BUDGET WARNING] You have used 800 of your 1,000 total token budget (80%). Wrap up your "
          "current "
          "work and produce a final answer. Avoid starting new tool calls unless absolutely necessary.");
    CHECK(budget_warning_of(requests[2]).empty()); // once per run, and never stored
    for (const auto& m : r.state.messages)
        CHECK(m.name != "budget_warning");
    const message& last = r.state.messages.back();
    CHECK(last.tool_calls.empty());
    CHECK(last.text() ==
          "Still working.\n\n[TOKEN BUDGET EXCEEDED] The total token usage (1,080) has exceeded "
          "the safety limit (1,000). Producing final answer with results collected so far.");
    CHECK(last.provider.finish_reason() == "stop");
    CHECK(r.reason == stop_reason::finished);
    CHECK(r.context.at("stop_reason") == "token_capped");
    auto& guard = *a.middleware().get<token_budget>();
    CHECK(guard.consume_stop_reason("r1") == "token_capped");
    CHECK(guard.consume_stop_reason("r1") == std::nullopt);
}

TEST_CASE("the input and output limits are checked beside the total", "[middleware][token_budget]") {
    token_budget_options o = budget(1000000);
    o.max_input_tokens = 100;
    scripted_model model({answer(120, 1)});
    auto a = make_agent(model, tool_set(test::echo_tool()), token_budget(o));
    auto r = a.invoke("go");
    // An answer without text: DeerFlow's "" + "\n\n" + note.
    CHECK(r.state.messages.back().text() ==
          "\n\n[TOKEN BUDGET EXCEEDED] The input token usage (120) has exceeded the "
          "safety limit (100). Producing final answer with results collected so "
          "far.");
}

TEST_CASE("earlier runs do not count, answers without usage are estimated", "[middleware][token_budget]") {
    scripted_model model({answer(700, 0, false, "one"), answer(700, 0, false, "two")});
    auto a = make_agent(model, tool_set{}, token_budget(budget(1000)));
    CHECK(a.invoke("first").context.contains("stop_reason") == false);
    auto second = a.invoke("second"); // 700 again, not 1400
    CHECK(!second.context.contains("stop_reason"));
    CHECK(second.answer() == "two");

    scripted_model silent({ai_message(std::string(4000, 'x'))}); // no usage reported: ~1000 tokens estimated
    auto b = make_agent(silent, tool_set{}, token_budget(budget(500)));
    auto r = b.invoke("talk");
    CHECK(r.context.at("stop_reason") == "token_capped");
    CHECK(r.answer().find("[TOKEN BUDGET EXCEEDED] The total token usage (") != std::string::npos);
}

TEST_CASE("a warning taken by a failed call is shown to its retry", "[middleware][token_budget]") {
    auto clock = std::make_shared<manual_retry_clock>();
    model_error flaky(model_error_kind::server, "HTTP 500", 500);
    scripted_model model = scripted_model::with_failures(
        {{answer(850, 0), std::nullopt}, {{}, flaky}, {answer(10, 5, false, "done"), std::nullopt}});
    auto a = make_agent(model, tool_set(test::echo_tool()), llm_error_handling({}, clock, 1),
                        token_budget(budget(1000)));
    auto r = a.invoke("go");
    auto requests = model.requests();
    REQUIRE(requests.size() == 3);
    CHECK(!budget_warning_of(requests[1]).empty());
    CHECK(budget_warning_of(requests[2]) == budget_warning_of(requests[1]));
    CHECK(r.answer() == "done");
}

TEST_CASE("token_budget options read DeerFlow's keys and refuse bad ones", "[middleware][token_budget]") {
    auto read = [](const char* text) {
        return boost::json::value_to<token_budget_options>(boost::json::parse(text));
    };
    auto o = read(R"({"max_tokens": 5000, "max_input_tokens": 4000, "max_output_tokens": null,
                      "warn_threshold": 0.7, "hard_stop_threshold": 0.95})");
    CHECK(o.max_tokens == 5000);
    CHECK(o.max_input_tokens == 4000u);
    CHECK(!o.max_output_tokens);
    CHECK(o.warn_threshold == 0.7);
    CHECK(boost::json::value_to<token_budget_options>(boost::json::value_from(o)) == o);
    CHECK(read("{}") == token_budget_options{});
    CHECK_THROWS_WITH(read(R"({"max_token": 1})"),
                      Catch::Contains("token_budget") && Catch::Contains("max_token"));
    CHECK_THROWS_WITH(read(R"({"max_tokens": -1})"), Catch::Contains("token_budget.max_tokens"));
    CHECK_THROWS_WITH(read(R"({"warn_threshold": 1.5})"), Catch::Contains("warn_threshold must be <="));
    CHECK_THROWS_WITH(read(R"({"max_tokens": 0})"), Catch::Contains("max_tokens must be >= 1"));
}
