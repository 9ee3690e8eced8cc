// tool_emulator: a side model plays the named tools, or the run's model does; both loops.
#include <agentware/middleware/tool_emulator.hpp>

#include "../agent/run_async.hpp"
#include "side_model_support.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <stdexcept>
#include <string>
#include <vector>

using namespace agentware;
using namespace side_model_test;

TEST_CASE("tool_emulator answers the named tools with the emulator model", "[middleware][tool_emulator]") {
    scripted_model emulator({ai_message("Sunny, 21 degrees")});
    scripted_model model(
        {test::calls({test::call("c1", "weather", R"({"city":"Oslo"})"), test::call("c2", "search")}),
         ai_message("done")});
    tool_emulator_options o;
    o.tools = std::vector<std::string>{"weather"};
    auto a = make_agent(model, five(), tool_emulator(any_chat_model(emulator), o));
    auto r = a.invoke("weather?");
    REQUIRE(r.reason == stop_reason::finished);
    CHECK(r.state.messages.at(2).text() == "Sunny, 21 degrees");
    CHECK(r.state.messages.at(2).tool_call_id() == "c1");
    CHECK(r.state.messages.at(2).metadata.at("emulated") == true);
    CHECK(r.state.messages.at(3).text() == "real search");
    REQUIRE(emulator.requests().size() == 1);
    CHECK(emulator.requests()[0].messages.at(0).text() ==
          "You are emulating a tool call for testing purposes.\n\nTool: weather\nDescription: The weather "
          "tool.\n"
          "Arguments: {\"city\":\"Oslo\"}\n\nGenerate a realistic response that this tool would return given "
          "these "
          "arguments.\nReturn ONLY the tool's output, no explanation or preamble. Introduce variation into "
          "your "
          "responses.");
}

TEST_CASE("tool_emulator plays a tool the agent lacks, a failing emulator is an error result",
          "[middleware][tool_emulator]") {
    scripted_model emulator({ai_message("42 results")});
    scripted_model model({test::calls({test::call("c1", "ghost")}), test::calls({test::call("c2", "ghost")}),
                          ai_message("done")});
    auto a = make_agent(model, tool_set{}, tool_emulator(any_chat_model(emulator)));
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::finished);
    CHECK(r.state.messages.at(2).text() == "42 results");
    CHECK(emulator.requests()[0].messages.at(0).text().find("Description: No description available") !=
          std::string::npos);
    CHECK(r.state.messages.at(4).is_error());
    CHECK(r.state.messages.at(4).text().starts_with("Error: the emulator of tool 'ghost' failed:"));
}

TEST_CASE("tool_emulator in the coroutine loop", "[middleware][tool_emulator][async]") {
    scripted_model emulator({ai_message("emulated")});
    scripted_model model({test::calls({test::call("c1", "mail")}), ai_message("done")});
    auto a = make_agent(model, five(), tool_emulator(any_chat_model(emulator)));
    auto r = test::run_async(a, "go");
    CHECK(r.state.messages.at(2).text() == "emulated");
    auto o = boost::json::value_to<tool_emulator_options>(boost::json::parse(R"({"tools": ["a"]})"));
    CHECK(boost::json::value_to<tool_emulator_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(boost::json::value_to<tool_emulator_options>(boost::json::parse(R"({"tools": [1]})")),
                      Catch::Contains("tool_emulator.tools"));
}

TEST_CASE("tool_emulator without a model of its own plays the tools with the run's model",
          "[middleware][tool_emulator]") {
    // The run's model calls the tool, then plays it, then answers.
    scripted_model model({test::calls({test::call("c1", "weather", R"({"city":"Oslo"})")}),
                          ai_message("Rain, 4 degrees"), ai_message("done")});
    tool_emulator_options o;
    o.tools = std::vector<std::string>{"weather"};
    auto a = make_agent(model, five(), tool_emulator(o));
    auto r = a.invoke("weather?");
    REQUIRE(r.reason == stop_reason::finished);
    CHECK(r.state.messages.at(2).text() == "Rain, 4 degrees");
    CHECK(r.state.messages.at(2).metadata.at("emulated") == true);
    REQUIRE(model.requests().size() == 3);
    CHECK(model.requests()[1].messages.at(0).text().starts_with(
        "You are emulating a tool call for testing purposes.\n\nTool: weather\n"));
    CHECK(r.answer() == "done");

    scripted_model model2({test::calls({test::call("c1", "mail")}), ai_message("sent"), ai_message("done")});
    auto b = make_agent(model2, five(), tool_emulator());
    auto r2 = test::run_async(b, "go");
    CHECK(r2.state.messages.at(2).text() == "sent");

    auto named = boost::json::value_to<tool_emulator_options>(boost::json::parse(R"({"model": "cheap"})"));
    CHECK(named.model == std::string("cheap"));
    CHECK(boost::json::value_to<tool_emulator_options>(boost::json::value_from(named)) == named);
    CHECK_THROWS_AS(tool_emulator(any_chat_model{}), std::invalid_argument);
}

TEST_CASE("tool_emulator with no model at all answers with an error result", "[middleware][tool_emulator]") {
    tool_emulator em;
    runtime rt;
    tool_request<int> req;
    tool_call call{"c1", "ghost", boost::json::object{}};
    req.call = cow<tool_call>(call);
    req.rt = &rt;
    bool called = false;
    tool_response out = em.wrap_tool_call(req, [&](auto&) {
        called = true;
        return tool_response{};
    });
    CHECK_FALSE(called);
    CHECK(out.msg.is_error());
    CHECK(out.msg.text() ==
          "Error: the emulator of tool 'ghost' failed: no emulator model (none given and the "
          "run has none)");
}
