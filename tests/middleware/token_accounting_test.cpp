// token_accounting (DeerFlow's token_usage): a run's usage summed from the
// providers' figures, or the token counter's estimate.
#include "../agent/support.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/middleware/token_accounting.hpp>
#include <agentware/model/scripted_model.hpp>

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

using namespace agentware;

TEST_CASE("a run's usage is the sum of its answers' reported usage", "[middleware][token_usage]") {
    message first = test::calls({test::call("c1", "echo", R"({"text":"x"})")});
    first.provider = provider_metadata("tool_calls", "m", token_usage{100, 20, 120});
    message second = ai_message("done");
    second.provider = provider_metadata("stop", "m", token_usage{150, 5, 155});
    scripted_model model({first, second});
    auto a = make_agent(model, tool_set(test::echo_tool()), token_accounting{});
    auto r = a.invoke("go");
    CHECK(token_accounting::total_of(r.context) == token_usage{250, 25, 275});
    CHECK(r.context.at("token_usage").at("estimated") == false);
    CHECK(!r.state.messages.back().metadata.contains("usage_estimate"));

    // The next run starts from zero.
    message third = ai_message("again");
    third.provider = provider_metadata("stop", "m", token_usage{10, 1, 11});
    a.model() = scripted_model({third});
    CHECK(token_accounting::total_of(a.invoke("more").context) == token_usage{10, 1, 11});
}

TEST_CASE("answers without reported usage are estimated and say so", "[middleware][token_usage]") {
    scripted_model model({ai_message(std::string(400, 'y'))});
    auto a = make_agent(model, tool_set{}, token_accounting{});
    auto r = a.invoke(std::string(40, 'q'));
    const token_usage total = token_accounting::total_of(r.context);
    CHECK(total.output_tokens == 3 + 100); // framing + 400 chars / 4
    CHECK(total.input_tokens == 3 + 10);
    CHECK(total.total_tokens == total.input_tokens + total.output_tokens);
    CHECK(r.context.at("token_usage").at("estimated") == true);
    CHECK(r.state.messages.back().metadata.at("usage_estimate").at("output_tokens") == 103);
    CHECK(token_accounting::total_of(boost::json::object{{"token_usage", "junk"}}) == token_usage{});
}

TEST_CASE("token_usage options refuse unknown keys and a zero ratio", "[middleware][token_usage]") {
    auto read = [](const char* text) {
        return boost::json::value_to<token_accounting_options>(boost::json::parse(text));
    };
    CHECK(read(R"({"chars_per_token": 3.5})").estimate.chars_per_token == 3.5);
    CHECK(boost::json::value_to<token_accounting_options>(boost::json::value_from(read("{}"))) ==
          token_accounting_options{});
    CHECK_THROWS_WITH(read(R"({"mode": "x"})"), Catch::Contains("token_usage") && Catch::Contains("mode"));
    CHECK_THROWS_WITH(read(R"({"chars_per_token": 0})"), Catch::Contains("token_usage.chars_per_token"));
}
