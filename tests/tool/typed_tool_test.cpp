// Typed tools: the JSON Schema generated from a described struct, the
// conversion of arguments into it, and both through agent rounds in the
// blocking and the coroutine loop.

#include "../agent/run_async.hpp"
#include "../agent/support.hpp"

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
#include <boost/describe/class.hpp>
#include <boost/describe/enum.hpp>
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
using strings = std::vector<std::string>;

// At namespace scope: BOOST_DESCRIBE_* must follow the type in its own namespace.
namespace typed {

enum class unit { celsius, fahrenheit };
BOOST_DESCRIBE_ENUM(unit, celsius, fahrenheit)

struct point {
    double x = 0;
    double y = 0;
};
BOOST_DESCRIBE_STRUCT(point, (), (x, y))

struct every_kind {
    bool flag;
    int count;
    std::uint16_t small;
    double ratio;
    std::string name;
    std::optional<int> limit;
    std::vector<std::string> tags;
    point origin;
    unit units;
    std::vector<point> path;
    json::value anything;
    json::object extra;
    json::array raw;
};
BOOST_DESCRIBE_STRUCT(every_kind, (),
                      (flag, count, small, ratio, name, limit, tags, origin, units, path, anything, extra,
                       raw))

struct add_args {
    int a = 0;
    int b = 0;
    static constexpr member_description descriptions[] = {{"a", "The first addend."},
                                                          {"b", "The second addend."}};
};
BOOST_DESCRIBE_STRUCT(add_args, (), (a, b))

struct all_optional {
    std::optional<std::string> query;
    std::optional<std::vector<unit>> units;
};
BOOST_DESCRIBE_STRUCT(all_optional, (), (query, units))

struct nap_args {
    int ms = 0;
    std::string note;
};
BOOST_DESCRIBE_STRUCT(nap_args, (), (ms, note))

struct base_args {
    std::string id;
};
BOOST_DESCRIBE_STRUCT(base_args, (), (id))
struct derived_args : base_args {
    bool force = false;
};
BOOST_DESCRIBE_STRUCT(derived_args, (base_args), (force))

// Its schema would be infinite: refused at compile time.
struct tree {
    std::string name;
    std::vector<tree> children;
};
BOOST_DESCRIBE_STRUCT(tree, (), (name, children))

} // namespace typed

namespace {

json::value parse(std::string_view text) { return json::parse(text); }

template <class T>
std::string problems(std::string_view args) {
    T out{};
    return read_arguments(json::parse(args).as_object(), out).value_or("");
}

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

TEST_CASE("the schema of each kind of member", "[tool][typed]") {
    const json::object schema = json_schema_of<typed::every_kind>();
    const json::value point =
        parse(R"({"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},
                                        "required":["x","y"],"additionalProperties":false})");
    const auto& props = schema.at("properties").as_object();
    CHECK(schema.at("type") == "object");
    CHECK(schema.at("additionalProperties") == false);
    CHECK(props.at("flag") == parse(R"({"type":"boolean"})"));
    CHECK(props.at("count") == parse(R"({"type":"integer"})"));
    CHECK(props.at("small") == parse(R"({"type":"integer","minimum":0})"));
    CHECK(props.at("ratio") == parse(R"({"type":"number"})"));
    CHECK(props.at("name") == parse(R"({"type":"string"})"));
    CHECK(props.at("limit") == parse(R"({"type":"integer"})")); // optional: same schema, not required
    CHECK(props.at("tags") == parse(R"({"type":"array","items":{"type":"string"}})"));
    CHECK(props.at("origin") == point);
    CHECK(props.at("units") == parse(R"({"type":"string","enum":["celsius","fahrenheit"]})"));
    CHECK(props.at("path") == json::value{{"type", "array"}, {"items", point}});
    CHECK(props.at("anything") == json::object{});
    CHECK(props.at("extra") == parse(R"({"type":"object"})"));
    CHECK(props.at("raw") == parse(R"({"type":"array"})"));
    // Members in declaration order; every one required but the optional one.
    CHECK(schema.at("required") == parse(R"(["flag","count","small","ratio","name","tags","origin","units",
                                            "path","anything","extra","raw"])"));
}

TEST_CASE("member descriptions, structs without required members, inherited members", "[tool][typed]") {
    CHECK(json_schema_of<typed::add_args>() == parse(R"({"type":"object","properties":{
                      "a":{"type":"integer","description":"The first addend."},
                      "b":{"type":"integer","description":"The second addend."}},
                    "required":["a","b"],"additionalProperties":false})"));
    // No "required" at all rather than an empty list.
    CHECK(json_schema_of<typed::all_optional>() ==
          parse(R"({"type":"object","properties":{"query":{"type":"string"},
                    "units":{"type":"array","items":{"type":"string","enum":["celsius","fahrenheit"]}}},
                    "additionalProperties":false})"));
    const json::object derived = json_schema_of<typed::derived_args>();
    CHECK(derived.at("required") == parse(R"(["id","force"])"));
}

TEST_CASE("what has no schema is known at compile time", "[tool][typed]") {
    STATIC_REQUIRE(detail::has_json_schema<std::vector<typed::point>>());
    STATIC_REQUIRE_FALSE(detail::has_json_schema<int*>());
    STATIC_REQUIRE_FALSE(detail::has_json_schema<char>());
    STATIC_REQUIRE_FALSE(detail::has_json_schema<std::vector<const char*>>());
    STATIC_REQUIRE(arguments_struct<typed::add_args>);
    STATIC_REQUIRE_FALSE(arguments_struct<json::object>);
    STATIC_REQUIRE(detail::descriptions_name_members<typed::add_args>());
    STATIC_REQUIRE(detail::members_hold<typed::tree, typed::tree>());
    STATIC_REQUIRE_FALSE(detail::members_hold<typed::every_kind, typed::every_kind>());
    STATIC_REQUIRE(detail::members_hold<typed::point, typed::every_kind>());
}

TEST_CASE("the generated schema drives the validator", "[tool][typed]") {
    const json::object schema = json_schema_of<typed::every_kind>();
    const detail::schema_index index(schema);
    const json::object good = parse(R"({"flag":true,"count":-3,"small":7,"ratio":0.5,"name":"n","tags":["a"],
                                        "origin":{"x":1,"y":2},"units":"celsius","path":[],"anything":null,
                                        "extra":{},"raw":[1]})")
                                  .as_object();
    CHECK_FALSE(validate_arguments(schema, good, &index));
    // An optional member is left out, not sent as null (the reader alone would take null as absent).
    json::object with_null = good;
    with_null["limit"] = nullptr;
    CHECK(validate_arguments(schema, with_null, &index) ==
          R"(argument "limit" must be an integer (got null))");
    json::object bad = good;
    bad["units"] = "kelvin";
    bad["small"] = -1;
    bad["typo"] = 1;
    bad.erase("flag");
    bad["origin"].as_object().erase("y");
    const std::string problem = validate_arguments(schema, bad, &index).value_or("");
    CHECK_THAT(problem, Catch::Contains("missing required argument \"flag\""));
    CHECK_THAT(problem, Catch::Contains("missing required argument \"origin.y\""));
    CHECK_THAT(problem, Catch::Contains("argument \"small\" must be"));
    CHECK_THAT(problem, Catch::Contains("argument \"units\" must be one of"));
    CHECK_THAT(problem, Catch::Contains("unexpected argument \"typo\""));
}

TEST_CASE("arguments are read into the struct", "[tool][typed]") {
    typed::every_kind out{};
    const auto problem = read_arguments(parse(R"({"flag":true,"count":-3,"small":7.0,"ratio":2,"name":"n",
                                                  "limit":null,"tags":["a","b"],"origin":{"x":1,"y":2.5},
                                                  "units":"fahrenheit","path":[{"x":0,"y":1}],
                                                  "anything":[1,"two"],"extra":{"k":1},"raw":[true]})")
                                            .as_object(),
                                        out);
    REQUIRE_FALSE(problem);
    CHECK(out.flag);
    CHECK(out.count == -3);
    CHECK(out.small == 7); // 7.0 is an integer to JSON Schema, so to the reader
    CHECK(out.ratio == 2.0);
    CHECK(out.name == "n");
    CHECK_FALSE(out.limit); // null reads as absent
    CHECK(out.tags == strings{"a", "b"});
    CHECK(out.origin.y == 2.5);
    CHECK(out.units == typed::unit::fahrenheit);
    REQUIRE(out.path.size() == 1);
    CHECK(out.path[0].y == 1.0);
    CHECK(out.anything == parse(R"([1,"two"])"));
    CHECK(out.extra.at("k") == 1);
    CHECK(out.raw == parse("[true]"));

    typed::all_optional none{};
    none.query = "stale";
    CHECK_FALSE(read_arguments(json::object{}, none));
    CHECK_FALSE(none.query); // absent: reset, whatever the struct held

    typed::derived_args derived{};
    CHECK_FALSE(read_arguments(parse(R"({"id":"x","force":true})").as_object(), derived));
    CHECK(derived.id == "x");
    CHECK(derived.force);
}

TEST_CASE("arguments that do not convert are named with their path", "[tool][typed]") {
    CHECK(problems<typed::add_args>(R"({"a":"1","b":2})") ==
          R"(argument "a" must be an integer (got string "1"))");
    CHECK(problems<typed::add_args>(R"({"a":1})") == R"(missing required argument "b")");
    CHECK(problems<typed::add_args>(R"({"a":1,"b":2,"c":3})") ==
          R"(unexpected argument "c" (expected "a", "b"))");
    CHECK(problems<typed::add_args>(R"({"a":1.5,"b":2})") ==
          R"(argument "a" must be an integer (got number 1.5))");
    CHECK(problems<typed::add_args>(R"({"a":4294967296,"b":2})") ==
          R"(argument "a" must be an integer from -2147483648 to 2147483647 (got 4294967296))");
    CHECK(problems<typed::every_kind>(R"({"flag":1,"count":0,"small":-1,"ratio":"x","name":null,"tags":[1],
                                         "origin":[],"units":"kelvin","path":[{"x":1}],"anything":0,
                                         "extra":[],"raw":{}})") ==
          R"(argument "flag" must be a boolean (got integer 1); )"
          R"(argument "small" must be an integer from 0 to 65535 (got -1); )"
          R"(argument "ratio" must be a number (got string "x"); )"
          R"(argument "name" must be a string (got null); )"
          R"(argument "tags[0]" must be a string (got integer 1); )"
          R"(argument "origin" must be an object (got array of 0 items); )"
          R"(argument "units" must be one of "celsius", "fahrenheit" (got string "kelvin"); )"
          R"(missing required argument "path[0].y"; )"
          R"(argument "extra" must be an object (got array of 0 items); )"
          R"(argument "raw" must be an array (got empty object))");
    // As the validator does: ten problems listed, the rest counted.
    std::string many = "{";
    for (int i = 0; i < 13; ++i)
        many += fmt::format(R"({}"k{}":0)", i ? "," : "", i);
    many += R"(,"a":1,"b":2})";
    CHECK_THAT(problems<typed::add_args>(many), Catch::EndsWith("; and 3 more problems"));
}

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
