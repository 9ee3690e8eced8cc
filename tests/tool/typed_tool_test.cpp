// Typed tools (tool/typed_tool.hpp): a callable taking a described struct,
// through agent rounds in the blocking and the coroutine loop. (The schema
// and the conversion have test files of their own.)
#include <agentware/tool/typed_tool.hpp>

#include "../agent/run_async.hpp"
#include "../agent/support.hpp"
#include "typed_support.hpp"

#include <agentware/agent/async_loop.hpp>

#include <agentware/tool/json_schema.hpp>
#include <agentware/tool/read_arguments.hpp>
#include <agentware/tool/schema_validation.hpp>

#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace json = boost::json;
using namespace agentware;
using typed::parse;
using strings = std::vector<std::string>;

namespace {

double product(typed::point p) { return p.x * p.y; }

auto add_tool() {
    return make_tool("add", "Adds two integers.",
                     [](const typed::add_args& args) { return args.a + args.b; });
}

// Waits on a timer before answering, reading its arguments after the await:
// they must outlive the call even though the callable takes them by reference.
auto nap_tool() {
    return make_tool(
        "nap", "Sleeps a little.", [](const typed::nap_args& args) -> asio::awaitable<std::string> {
            asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::milliseconds(args.ms));
            co_await timer.async_wait(asio::use_awaitable);
            co_return args.note + " after " + std::to_string(args.ms) + " ms";
        });
}

} // namespace

TEST_CASE("a typed tool in an agent round: converted arguments, and errors the model can read",
          "[tool][typed][agent]") {
    SECTION("valid arguments arrive converted") {
        scripted_model model({test::calls({test::call("c1", "add", R"({"a":2,"b":40})")}), ai_message("42")});
        tool_set tools(add_tool());
        // What the model is offered is the generated schema.
        CHECK(tools.schemas().at(0).parameters == json_schema_of<typed::add_args>());
        auto a = make_agent(model, tools);
        auto r = a.invoke("add");
        REQUIRE(r.ok());
        CHECK(r.state.messages[2].text() == "42");
        CHECK(model.requests().at(0).tool_names == strings{"add"});
    }
    SECTION("out of an integer's range: the schema allows it, the conversion refuses it, the model retries") {
        scripted_model model({test::calls({test::call("c1", "add", R"({"a":3000000000,"b":1})")}),
                              test::calls({test::call("c2", "add", R"({"a":3,"b":1})")}), ai_message("4")});
        auto a = make_agent(model, tool_set(add_tool()));
        auto r = a.invoke("add");
        REQUIRE(r.ok());
        const auto& ms = r.state.messages;
        REQUIRE(test::roles(ms) == strings{"human", "ai", "tool", "ai", "tool", "ai"});
        CHECK(ms[2].is_error());
        CHECK(ms[2].text() ==
              "Error: invalid arguments for tool \"add\": argument \"a\" must be an integer from "
              "-2147483648 to 2147483647 (got 3000000000). Fix the arguments and call the tool "
              "again.");
        CHECK(ms[4].text() == "4");
    }
    SECTION("with the agent's schema check off, the conversion still refuses, in the same words") {
        scripted_model model(
            {test::calls({test::call("c1", "add", R"({"a":"two","b":1})")}), ai_message("no")});
        auto a = make_agent(model, tool_set(add_tool()));
        a.options().validate_tool_arguments = false;
        auto r = a.invoke("add");
        REQUIRE(r.ok());
        CHECK(r.state.messages[2].is_error());
        CHECK(r.state.messages[2].text() ==
              "Error: invalid arguments for tool \"add\": argument \"a\" must be an "
              "integer (got string \"two\"). Fix the arguments and call the tool "
              "again.");
    }
    SECTION("with the check on, the validator answers first, in the same words") {
        scripted_model model(
            {test::calls({test::call("c1", "add", R"({"a":"two","b":1})")}), ai_message("no")});
        auto a = make_agent(model, tool_set(add_tool()));
        auto r = a.invoke("add");
        CHECK_THAT(r.state.messages[2].text(),
                   Catch::StartsWith(
                       "Error: invalid arguments for tool \"add\": argument \"a\" must be an integer"));
    }
}

TEST_CASE("a typed tool may take the runtime, be a function, or name its struct for a generic callable",
          "[tool][typed]") {
    auto who = make_tool("who", "Says which call this is.", [](typed::nap_args args, const tool_runtime& rt) {
        return args.note + " in " + std::string(rt.tool_call_id);
    });
    auto sum =
        make_tool<typed::point>("sum", "Adds the coordinates.", [](const auto& p) { return p.x + p.y; });
    auto multiply = make_tool("multiply", "Multiplies the coordinates.", product);
    scripted_model model({test::calls({test::call("c7", "who", R"({"ms":0,"note":"hello"})"),
                                       test::call("c8", "sum", R"({"x":1,"y":2})"),
                                       test::call("c9", "multiply", R"({"x":3,"y":2})")}),
                          ai_message("done")});
    auto a = make_agent(model, tool_set(who, sum, multiply));
    auto r = a.invoke("go");
    REQUIRE(r.ok());
    CHECK(r.state.messages[2].text() == "hello in c7");
    CHECK(json::parse(r.state.messages[3].text()) == 3.0);
    CHECK(json::parse(r.state.messages[4].text()) == 6.0);
}

TEST_CASE("an asynchronous typed tool in both loops", "[tool][typed][agent][async]") {
    STATIC_REQUIRE(decltype(nap_tool())::asynchronous);
    auto script = [] {
        return std::vector<message>{test::calls({test::call("c1", "nap", R"({"ms":2,"note":"woke"})"),
                                                 test::call("c2", "nap", R"({"ms":"x","note":"never"})")}),
                                    ai_message("rested")};
    };
    const auto check = [](const auto& r) {
        REQUIRE(r.ok());
        const auto& ms = r.state.messages;
        REQUIRE(test::roles(ms) == strings{"human", "ai", "tool", "tool", "ai"});
        CHECK(ms[2].text() == "woke after 2 ms");
        CHECK(ms[3].is_error());
        CHECK_THAT(ms[3].text(), Catch::Contains("argument \"ms\" must be an integer (got string \"x\")"));
    };
    SECTION("coroutine loop, the schema check off so that the tool's own conversion refuses") {
        scripted_model model(script());
        auto a = make_agent(model, tool_set(nap_tool()));
        a.options().validate_tool_arguments = false;
        check(test::run_async(a, "go"));
    }
    SECTION("blocking loop") {
        scripted_model model(script());
        auto a = make_agent(model, tool_set(nap_tool()));
        a.options().validate_tool_arguments = false;
        check(a.invoke("go"));
    }
    SECTION("the round's only call, awaited without a group") {
        scripted_model model(
            {test::calls({test::call("c1", "nap", R"({"ms":1,"note":"alone"})")}), ai_message("rested")});
        auto a = make_agent(model, tool_set(nap_tool()));
        auto r = test::run_async(a, "go");
        REQUIRE(r.ok());
        CHECK(r.state.messages[2].text() == "alone after 1 ms");
    }
}
