// Reading a tool's JSON arguments into a described struct
// (tool/read_arguments.hpp): converted values, and problems named by path.
#include <agentware/tool/read_arguments.hpp>

#include "typed_support.hpp"

#include <catch2/catch.hpp>

#include <fmt/core.h>

#include <optional>
#include <string>
#include <vector>

namespace json = boost::json;
using namespace agentware;
using typed::parse;
using strings = std::vector<std::string>;

namespace {

template <class T>
std::string problems(std::string_view args) {
    T out{};
    return read_arguments(json::parse(args).as_object(), out).value_or("");
}

} // namespace

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
