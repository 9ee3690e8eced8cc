// The JSON Schema of a described struct (tool/json_schema.hpp): each kind of
// member, descriptions, optional and inherited members, what has none.
#include <agentware/tool/json_schema.hpp>
#include <agentware/tool/schema_validation.hpp>

#include "typed_support.hpp"

#include <catch2/catch.hpp>

#include <boost/json/serialize.hpp>

#include <string>
#include <vector>

namespace json = boost::json;
using namespace agentware;
using typed::parse;
using strings = std::vector<std::string>;

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
