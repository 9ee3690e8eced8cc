// Tests of tool-argument validation against JSON Schema: each keyword, nested
// paths, several problems at once, malformed schemas and odd arguments.

#include <agentware/tool/schema_validation.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace json = boost::json;
using agentware::validate_arguments;

namespace {

json::object schema_of(std::string_view text) { return json::parse(text).as_object(); }

/// The error for `args` (JSON text) against `schema` (JSON text), or "" when valid.
std::string errors(std::string_view schema, std::string_view args) {
    return validate_arguments(schema_of(schema), json::parse(args)).value_or("");
}

std::string errors_for(std::string_view schema, const json::value& args) {
    return validate_arguments(schema_of(schema), args).value_or("");
}

constexpr std::string_view read_file_schema = R"({
    "type": "object",
    "description": "Read a file",
    "properties": {
        "path": {"type": "string", "description": "Absolute path", "minLength": 1},
        "offset": {"type": "integer", "minimum": 0, "default": 0},
        "limit": {"type": "integer", "minimum": 1, "maximum": 2000},
        "encoding": {"type": "string", "enum": ["utf-8", "latin-1"]}
    },
    "required": ["path"],
    "additionalProperties": false
})";

} // namespace

TEST_CASE("arguments that satisfy the schema are valid", "[schema]") {
    CHECK_FALSE(
        validate_arguments(schema_of(read_file_schema), json::parse(R"({"path": "/a"})")).has_value());
    CHECK(errors(read_file_schema, R"({"path": "/a", "offset": 0, "limit": 2000, "encoding": "latin-1"})") ==
          "");
    CHECK(errors(read_file_schema, R"({"path": "/a", "limit": 10.0})") == ""); // 10.0 is an integer
    CHECK(errors("{}", R"({"anything": [1, {"goes": null}]})") == "");
    CHECK(errors("{}", "null") == "");
}

TEST_CASE("the example problems read as one message", "[schema]") {
    CHECK(errors(read_file_schema, R"({"limit": "ten"})") ==
          R"(missing required argument "path"; argument "limit" must be an integer (got string "ten"))");
}

TEST_CASE("type accepts exactly the values of each JSON type", "[schema]") {
    struct row {
        const char* type;
        const char* value;
        bool valid;
    };
    const row rows[] = {
        {"string", R"("x")", true},
        {"string", "1", false},
        {"string", "null", false},
        {"integer", "3", true},
        {"integer", "-3", true},
        {"integer", "3.0", true},
        {"integer", "1e2", true},
        {"integer", "3.5", false},
        {"integer", R"("3")", false},
        {"integer", "true", false},
        {"integer", "18446744073709551615", true},
        {"number", "3", true},
        {"number", "3.5", true},
        {"number", "-1e300", true},
        {"number", R"("3.5")", false},
        {"boolean", "false", true},
        {"boolean", "0", false},
        {"boolean", R"("true")", false},
        {"null", "null", true},
        {"null", "0", false},
        {"null", R"("")", false},
        {"array", "[]", true},
        {"array", "{}", false},
        {"object", "{}", true},
        {"object", "[]", false},
        {"object", "null", false},
    };
    for (const auto& r : rows) {
        const std::string schema = std::string(R"({"type":")") + r.type + R"("})";
        INFO(r.type << " " << r.value);
        CHECK(errors(schema, r.value).empty() == r.valid);
    }
    CHECK(errors(R"({"type": "integer"})", "3.5") == "arguments must be an integer (got number 3.5)");
    CHECK(errors(R"({"type": "object"})", "[1, 2]") == "arguments must be an object (got array of 2 items)");
    CHECK(errors(R"({"type": "object"})", "null") == "arguments must be an object (got null)");
    CHECK(errors(R"({"type": "string"})", R"({"a": 1})") ==
          "arguments must be a string (got object with 1 key)");
    CHECK(errors(R"({"type": "number"})", "true") == "arguments must be a number (got boolean true)");
}

TEST_CASE("a list of types accepts any of them", "[schema]") {
    const auto schema = R"({"properties": {"v": {"type": ["string", "integer", "null"]}}})";
    CHECK(errors(schema, R"({"v": "a"})") == "");
    CHECK(errors(schema, R"({"v": 2})") == "");
    CHECK(errors(schema, R"({"v": null})") == "");
    CHECK(errors(schema, R"({"v": 2.5})") ==
          R"(argument "v" must be a string, an integer or null (got number 2.5))");
    // OpenAPI's nullable, which some providers' schemas use.
    CHECK(errors(R"({"type": "string", "nullable": true})", "null") == "");
    CHECK(errors(R"({"type": "string", "nullable": true})", "1") ==
          "arguments must be a string or null (got integer 1)");
}

TEST_CASE("required and additionalProperties report missing and unexpected arguments", "[schema]") {
    CHECK(errors(read_file_schema, R"({"path": "/a", "mode": "r", "verbose": true})") ==
          R"(unexpected argument "mode" (expected "path", "offset", "limit", "encoding"); )"
          R"(unexpected argument "verbose" (expected "path", "offset", "limit", "encoding"))");
    CHECK(errors(R"({"required": ["a", "b"]})", R"({"b": null})") == R"(missing required argument "a")");
    CHECK(errors(R"({"additionalProperties": false})", R"({"x": 1})") == R"(unexpected argument "x")");
    CHECK(errors(R"({"additionalProperties": false})", "{}") == "");
    // A schema for the additional ones.
    const auto typed =
        R"({"properties": {"name": {"type": "string"}}, "additionalProperties": {"type": "integer"}})";
    CHECK(errors(typed, R"({"name": "n", "x": 1, "y": 2})") == "");
    CHECK(errors(typed, R"({"name": "n", "x": "one"})") ==
          R"(argument "x" must be an integer (got string "one"))");
    // Keys that would match patternProperties (unsupported) are not called unexpected.
    CHECK(errors(R"({"patternProperties": {"^x_": {}}, "additionalProperties": false})", R"({"x_1": 1})") ==
          "");
}

TEST_CASE("enum and const compare JSON values, with 1 equal to 1.0", "[schema]") {
    const auto mode = R"({"properties": {"mode": {"enum": ["r", "w", 1, null, [1, 2], {"a": true}]}}})";
    CHECK(errors(mode, R"({"mode": "w"})") == "");
    CHECK(errors(mode, R"({"mode": 1.0})") == "");
    CHECK(errors(mode, R"({"mode": null})") == "");
    CHECK(errors(mode, R"({"mode": [1, 2.0]})") == "");
    CHECK(errors(mode, R"({"mode": {"a": true}})") == "");
    CHECK(errors(mode, R"({"mode": [2, 1]})") ==
          R"(argument "mode" must be one of "r", "w", 1, null, [1,2], {"a":true} (got array of 2 items))");
    CHECK(errors(mode, R"({"mode": "R"})") ==
          R"(argument "mode" must be one of "r", "w", 1, null, [1,2], {"a":true} (got string "R"))");
    CHECK(errors(mode, R"({"mode": {"a": true, "b": 1}})") != "");

    const auto kind = R"({"properties": {"kind": {"const": "file"}}})";
    CHECK(errors(kind, R"({"kind": "file"})") == "");
    CHECK(errors(kind, R"({"kind": "dir"})") == R"(argument "kind" must be "file" (got string "dir"))");
    CHECK(errors(R"({"const": 5})", "5.0") == "");
    CHECK(errors(R"({"const": 5})", R"("5")") == R"(arguments must be 5 (got string "5"))");
}

TEST_CASE("minimum and maximum bound numbers, inclusive or exclusive", "[schema]") {
    const auto limit = R"({"properties": {"n": {"type": "number", "minimum": 1, "maximum": 10.5}}})";
    CHECK(errors(limit, R"({"n": 1})") == "");
    CHECK(errors(limit, R"({"n": 10.5})") == "");
    CHECK(errors(limit, R"({"n": 0.999})") == R"(argument "n" must be >= 1 (got 0.999))");
    CHECK(errors(limit, R"({"n": 11})") == R"(argument "n" must be <= 10.5 (got 11))");
    CHECK(errors(limit, R"({"n": -9223372036854775808})") ==
          R"(argument "n" must be >= 1 (got -9223372036854775808))");
    CHECK(errors(limit, R"({"n": 18446744073709551615})") ==
          R"(argument "n" must be <= 10.5 (got 18446744073709551615))");
    CHECK(errors(limit, R"({"n": 1e400})") ==
          R"(argument "n" must be <= 10.5 (got inf))"); // parses as infinity

    // Draft 6+: numbers; draft 4: booleans next to minimum/maximum.
    CHECK(errors(R"({"exclusiveMinimum": 0})", "0") == "arguments must be > 0 (got 0)");
    CHECK(errors(R"({"exclusiveMinimum": 0})", "0.001") == "");
    CHECK(errors(R"({"exclusiveMaximum": 1})", "1.0") == "arguments must be < 1 (got 1)");
    CHECK(errors(R"({"minimum": 0, "exclusiveMinimum": true})", "0") == "arguments must be > 0 (got 0)");
    CHECK(errors(R"({"maximum": 5, "exclusiveMaximum": true})", "4") == "");

    // Large integers compare exactly, also against each other's signedness.
    CHECK(errors(R"({"maximum": 9007199254740992})", "9007199254740993") ==
          "arguments must be <= 9007199254740992 (got 9007199254740993)");
    CHECK(errors(R"({"minimum": -1})", "18446744073709551615") == "");
    CHECK(errors(R"({"maximum": 18446744073709551615})", "-1") == "");
    // Bounds do not apply to other types.
    CHECK(errors(R"({"minimum": 5})", R"("3")") == "");
}

TEST_CASE("minLength and maxLength count characters, not bytes", "[schema]") {
    const auto name = R"({"properties": {"name": {"type": "string", "minLength": 2, "maxLength": 5}}})";
    CHECK(errors(name, R"({"name": "h\u00e9llo"})") == "");               // 5 characters, 6 bytes
    CHECK(errors(name, R"({"name": "\ud83d\ude00\ud83d\ude00"})") == ""); // 2 characters, 8 bytes
    CHECK(errors(name, R"({"name": "a"})") ==
          R"(argument "name" must be at least 2 characters long (got 1))");
    CHECK(errors(name, R"({"name": "abcdef"})") ==
          R"(argument "name" must be at most 5 characters long (got 6))");
    CHECK(errors(R"({"minLength": 1})", R"("")") == "arguments must be at least 1 character long (got 0)");
    CHECK(errors(R"({"maxLength": 1})", "12345") == ""); // not a string
}

TEST_CASE("array keywords check sizes and recurse into items with indexed paths", "[schema]") {
    const auto files = R"({
        "type": "object",
        "properties": {
            "files": {
                "type": "array", "minItems": 1, "maxItems": 3,
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
                    "required": ["name"]
                }
            }
        }
    })";
    CHECK(errors(files, R"({"files": [{"name": "a", "tags": ["x"]}]})") == "");
    CHECK(errors(files, R"({"files": []})") == R"(argument "files" must have at least 1 item (got 0))");
    CHECK(errors(files, R"({"files": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}]})") ==
          R"(argument "files" must have at most 3 items (got 4))");
    CHECK(
        errors(files, R"({"files": [{"name": "a"}, {}, {"name": 7, "tags": ["ok", 3]}]})") ==
        R"(missing required argument "files[1].name"; argument "files[2].name" must be a string (got integer 7); )"
        R"(argument "files[2].tags[1]" must be a string (got integer 3))");
    CHECK(errors(files, R"({"files": "a.txt"})") ==
          R"(argument "files" must be an array (got string "a.txt"))");

    // Positional items: draft 4's list form and 2020-12's prefixItems.
    CHECK(errors(R"({"items": [{"type": "string"}, {"type": "integer"}]})", R"(["a", "b", true])") ==
          R"(argument "[1]" must be an integer (got string "b"))");
    CHECK(errors(R"({"prefixItems": [{"type": "string"}], "items": {"type": "integer"}})",
                 R"(["a", 1, "x"])") == R"(argument "[2]" must be an integer (got string "x"))");
}

TEST_CASE("anyOf and oneOf accept a value that matches any branch", "[schema]") {
    const auto optional_string =
        R"({"properties": {"v": {"anyOf": [{"type": "string"}, {"type": "null"}]}}})";
    CHECK(errors(optional_string, R"({"v": "x"})") == "");
    CHECK(errors(optional_string, R"({"v": null})") == "");
    CHECK(errors(optional_string, R"({"v": 5})") ==
          R"(argument "v" must be a string or null (got integer 5))");

    // oneOf is as lenient as anyOf: overlapping branches are fine.
    const auto overlapping = R"({"oneOf": [{"type": "integer"}, {"type": "number"}]})";
    CHECK(errors(overlapping, "3") == "");
    CHECK(errors(overlapping, R"("3")") == R"(arguments must be an integer or a number (got string "3"))");

    // When one branch fits the value's type, its problems are the ones reported.
    const auto target = R"({"properties": {"target": {"anyOf": [
        {"type": "string", "minLength": 1},
        {"type": "object", "properties": {"line": {"type": "integer"}}, "required": ["line"]}]}}})";
    CHECK(errors(target, R"({"target": {"line": 3}})") == "");
    CHECK(errors(target, R"({"target": {}})") == R"(missing required argument "target.line")");
    CHECK(errors(target, R"({"target": ""})") ==
          R"(argument "target" must be at least 1 character long (got 0))");
    CHECK(errors(target, R"({"target": true})") ==
          R"(argument "target" must be a string or an object (got boolean true))");

    // Several branches fit the type: each is summed up.
    const auto either = R"({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]})";
    CHECK(errors(either, R"({"a": 1})") == "");
    CHECK(errors(either, "{}") ==
          R"(arguments match none of the allowed forms )"
          R"((form 1: missing required argument "a", or form 2: missing required argument "b"))");
    CHECK(
        errors(
            R"({"properties": {"p": {"oneOf": [{"required": ["a"]}, {"maxProperties": 0, "minProperties": 1, "required": ["b"]}]}}})",
            R"({"p": {}})") ==
        R"(argument "p" matches none of the allowed forms )"
        R"((form 1: missing required argument "p.a", or form 2: missing required argument "p.b"))");
    CHECK(errors(R"({"anyOf": [false, {"type": "string"}]})", "1") ==
          "arguments must be a string (got integer 1)");
    CHECK(errors(R"({"anyOf": [true, {"type": "string"}]})", "1") == "");
}

TEST_CASE("allOf requires every branch", "[schema]") {
    const auto both = R"({"allOf": [{"required": ["a"]}, {"properties": {"a": {"type": "integer"}}}]})";
    CHECK(errors(both, R"({"a": 1})") == "");
    CHECK(errors(both, R"({"a": "1"})") == R"(argument "a" must be an integer (got string "1"))");
    CHECK(errors(both, "{}") == R"(missing required argument "a")");
}

TEST_CASE("boolean subschemas allow everything or nothing", "[schema]") {
    const auto schema = R"({"properties": {"free": true, "forbidden": false}})";
    CHECK(errors(schema, R"({"free": [1, {}]})") == "");
    CHECK(errors(schema, R"({"forbidden": 1})") == R"(argument "forbidden" is not allowed)");
    CHECK(errors(R"({"items": false})", "[]") == "");
    CHECK(errors(R"({"items": false})", "[1]") == R"(argument "[0]" is not allowed)");
}

TEST_CASE("every problem is listed, up to ten, then counted", "[schema]") {
    CHECK(
        errors(read_file_schema, R"({"path": "", "offset": -1, "limit": 0, "encoding": "ascii", "x": 1})") ==
        R"(argument "path" must be at least 1 character long (got 0); argument "offset" must be >= 0 (got -1); )"
        R"(argument "limit" must be >= 1 (got 0); argument "encoding" must be one of "utf-8", "latin-1" )"
        R"((got string "ascii"); unexpected argument "x" (expected "path", "offset", "limit", "encoding"))");

    json::object schema{{"type", "object"}};
    json::array required;
    for (int i = 0; i < 15; ++i)
        required.push_back(json::string("a" + std::to_string(i)));
    schema["required"] = std::move(required);
    const auto message = validate_arguments(schema, json::object{});
    REQUIRE(message.has_value());
    CHECK(message->find(R"(missing required argument "a9")") != std::string::npos);
    CHECK(message->find(R"("a10")") == std::string::npos);
    CHECK(message->ends_with(R"(missing required argument "a9"; and 5 more problems)"));

    // Eleven problems: "1 more problem".
    schema["required"].as_array().resize(11);
    CHECK(validate_arguments(schema, json::object{})->ends_with("; and 1 more problem"));
}

TEST_CASE("malformed schema parts constrain nothing", "[schema]") {
    const char* malformed[] = {
        R"({"type": 5})",
        R"({"type": "file"})",
        R"({"type": ["string", 3]})",
        R"({"type": []})",
        R"({"type": {"name": "string"}})",
        R"({"properties": []})",
        R"({"properties": {"a": 5, "b": "string", "c": null}})",
        R"({"required": "a"})",
        R"({"required": [1, null, {}]})",
        R"({"additionalProperties": "no"})",
        R"({"enum": "x"})",
        R"({"enum": []})",
        R"({"minimum": "zero", "maximum": [], "exclusiveMinimum": null})",
        R"({"minLength": -1, "maxLength": 2.5, "minItems": "1", "maxItems": -3})",
        R"({"items": 3, "prefixItems": {}})",
        R"({"anyOf": {}})",
        R"({"anyOf": []})",
        R"({"anyOf": [3, {"type": "string"}]})",
        R"({"oneOf": "a", "allOf": {"type": "string"}})",
        R"({"$ref": "#/definitions/missing", "pattern": "[", "format": "nonsense", "x-custom": 1})",
        R"({"properties": {"a": {"items": {"properties": {"b": {"type": 1}}}}}})",
    };
    const char* args[] = {R"({"a": [1], "b": "x", "c": {}})", "{}"};
    for (const char* schema : malformed) {
        for (const char* a : args) {
            INFO(schema << " with " << a);
            CHECK(errors(schema, a) == "");
        }
    }
    // A malformed keyword does not disable the well-formed ones beside it.
    CHECK(errors(R"({"type": "object", "required": ["a"], "properties": 7, "minLength": "x"})", "{}") ==
          R"(missing required argument "a")");
}

TEST_CASE("odd arguments are reported, never crash", "[schema]") {
    CHECK(errors(read_file_schema, "[]") == "arguments must be an object (got array of 0 items)");
    CHECK(errors(read_file_schema, R"("{\"path\": \"/a\"}")") ==
          R"(arguments must be an object (got string "{\"path\": \"/a\"}"))");
    CHECK(errors(read_file_schema, "1e999") == "arguments must be an object (got number inf)");
    CHECK(errors(read_file_schema, "123456789012345678901234567890") ==
          "arguments must be an object (got number 1.2345678901234568e+29)");

    // Long strings and odd keys are cut and escaped in messages.
    const std::string long_text(10000, 'y');
    const auto message = errors_for(R"({"type": "integer"})", json::value(long_text));
    CHECK(message.size() < 150);
    CHECK(message.find(R"(yyy"...)") != std::string::npos);
    CHECK(errors(R"({"additionalProperties": false})", R"({"a\"b\nc": 1})") ==
          R"(unexpected argument "a\"b\nc")");

    // Deeply nested arguments under a deeply nested schema: recursion is bounded.
    json::value deep_args = 1;
    for (int i = 0; i < 5000; ++i)
        deep_args = json::array{std::move(deep_args)};
    json::value deep_schema = json::object{{"type", "string"}};
    for (int i = 0; i < 5000; ++i)
        deep_schema = json::object{{"type", "array"}, {"items", std::move(deep_schema)}};
    CHECK_NOTHROW(validate_arguments(deep_schema.as_object(), deep_args));
    CHECK(validate_arguments(deep_schema.as_object(), json::value(3))
              .has_value()); // the top level still counts

    // Many unexpected keys: the message stays bounded.
    json::object many;
    for (int i = 0; i < 10000; ++i)
        many["k" + std::to_string(i)] = i;
    const auto too_many = validate_arguments(schema_of(read_file_schema), many);
    REQUIRE(too_many.has_value());
    CHECK(too_many->ends_with("and 9991 more problems"));
    CHECK(too_many->size() < 2000);
}

TEST_CASE("nested anyOf stays fast and its message stays short", "[schema]") {
    // 2^16 leaves; each level's branches fail only on type, so the message is one line.
    json::value schema = json::object{{"type", "string"}};
    for (int i = 0; i < 16; ++i)
        schema = json::object{{"anyOf", json::array{schema, schema}}};
    CHECK(validate_arguments(schema.as_object(), json::value(5)) ==
          std::optional<std::string>("arguments must be a string (got integer 5)"));
    CHECK_FALSE(validate_arguments(schema.as_object(), json::value("ok")).has_value());

    // Branches that fail on more than their type: each level nests an excerpt, cut short.
    json::value forms = json::object{{"required", json::array{"a"}}};
    for (int i = 0; i < 9; ++i)
        forms = json::object{{"anyOf", json::array{forms, forms, forms}}};
    const auto message = validate_arguments(forms.as_object(), json::object{});
    REQUIRE(message.has_value());
    CHECK(message->size() < 5000);
}

TEST_CASE("validation work is bounded for huge arguments", "[schema]") {
    // 60000 items x 5 schema nodes exceeds the visit budget; the call still ends.
    const auto schema = schema_of(
        R"({"items": {"anyOf": [{"type": "string"}, {"type": "null"}, {"type": "boolean"}, {"type": "array"}]}})");
    json::array items(60000, json::value(1));
    const auto start = std::chrono::steady_clock::now();
    const auto result = validate_arguments(schema, items);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
    REQUIRE(result.has_value());
    CHECK(result->starts_with(
        R"(argument "[0]" must be a string, null, a boolean or an array (got integer 1))"));
}

TEST_CASE("an index of the schema and the object overload change no verdict and no message",
          "[schema][index]") {
    const std::vector<std::string_view> schemas = {
        read_file_schema,
        R"({"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","maxLength":3},
            "minItems":1},"pair":{"type":"array","prefixItems":[{"type":"integer"},{"type":"boolean"}]}},
            "additionalProperties":{"type":"number","maximum":5}})",
        R"({"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"object","properties":
            {"x":{"oneOf":[{"type":"integer"},{"type":"null"}]}},"required":["x"]}]}},"required":["v"]})",
        R"({"properties":{"n":{"type":["integer","null"],"exclusiveMinimum":0}},"allOf":[{"required":["n"]}]})",
        R"({"type":"object","enum":[{"a":1}]})",
        R"({"type":["object","null"],"properties":{"a":{"const":"x"}}})",
        R"({"type":"string"})",
        R"({"type":"object","properties":{"a":false,"b":true,"c":{"type":"nonsense"}}})",
        // Flat schemas (each property names at most its type), checked by the quick path first.
        R"({"type":"object","properties":{"path":{"type":"string","description":"d"},"n":{"type":"integer",
            "nullable":true},"any":{},"b":true},"required":["path","n","path"],"additionalProperties":false})",
        R"({"properties":{"a":{"type":"string"},"v":{"type":"number"},"tags":{"type":"array"}},"required":["a"]})",
    };
    const std::vector<std::string_view> arguments = {
        R"({})",
        R"({"path":"/a","limit":2001,"extra":1})",
        R"({"path":"","encoding":"ascii","offset":-1})",
        R"({"tags":["abc","abcd"],"pair":[1.0,"no"],"other":6,"ok":5})",
        R"({"tags":[]})",
        R"({"v":"s"})",
        R"({"v":{"x":1.5}})",
        R"({"v":{}})",
        R"({"n":0})",
        R"({"n":null})",
        R"({"a":1})",
        R"({"a":"x","b":[1],"c":{}})",
        R"({"path":"/a","n":1})",
        R"({"path":"/a","n":null,"any":[1],"b":{}})",
        R"({"path":"/a","n":1.5})",
        R"({"path":"/a","n":3,"zzz":1})",
        R"({"n":3})",
        R"({"a":"x","v":2.5,"tags":[],"c":null})",
        R"({"a":"x","v":"2.5"})",
    };
    for (std::string_view schema_text : schemas) {
        const json::object schema = schema_of(schema_text);
        const agentware::detail::schema_index index(schema);
        CHECK(index.size() >= 1);
        for (std::string_view args_text : arguments) {
            const json::value args = json::parse(args_text);
            const auto plain = validate_arguments(schema, args);
            INFO(schema_text << " with " << args_text);
            CHECK(validate_arguments(schema, args, &index) == plain);
            CHECK(validate_arguments(schema, args.as_object()) == plain);
            CHECK(validate_arguments(schema, args.as_object(), &index) == plain);
        }
    }
}

TEST_CASE("an index accepts valid arguments of a flat schema without the full check", "[schema][index]") {
    const json::object flat = schema_of(R"({"type":"object","properties":{"text":{"type":"string"},
        "count":{"type":"integer"}},"required":["text"],"additionalProperties":false})");
    const agentware::detail::schema_index index(flat);
    CHECK(index.quickly_accepts(flat, json::parse(R"({"text":"hi"})").as_object()));
    CHECK(index.quickly_accepts(flat, json::parse(R"({"text":"hi","count":2})").as_object()));
    // Anything doubtful is left to the full check, which words the problem.
    CHECK_FALSE(index.quickly_accepts(flat, json::parse(R"({"count":2})").as_object()));
    CHECK_FALSE(index.quickly_accepts(flat, json::parse(R"({"text":1})").as_object()));
    CHECK_FALSE(index.quickly_accepts(flat, json::parse(R"({"text":"hi","other":1})").as_object()));
    CHECK(validate_arguments(flat, json::parse(R"({"text":"hi","other":1})").as_object(), &index)
              .value_or("") == R"(unexpected argument "other" (expected "text", "count"))");
    // Another schema, even an equal one, is not this index's root.
    const json::object copy = flat;
    CHECK_FALSE(index.quickly_accepts(copy, json::parse(R"({"text":"hi"})").as_object()));
    // A property with more than a type (here a length) is no flat schema.
    const json::object bounded = schema_of(R"({"type":"object","properties":{"text":{"type":"string",
        "maxLength":1}}})");
    const agentware::detail::schema_index bounded_index(bounded);
    CHECK_FALSE(bounded_index.quickly_accepts(bounded, json::parse(R"({"text":"hi"})").as_object()));
    CHECK(
        validate_arguments(bounded, json::parse(R"({"text":"hi"})").as_object(), &bounded_index).has_value());
}

TEST_CASE("an index built from another schema is not consulted for this one", "[schema][index]") {
    const json::object indexed = schema_of(R"({"type":"object","properties":{"a":{"type":"string"}}})");
    const json::object other = schema_of(R"({"type":"object","properties":{"a":{"type":"integer"}}})");
    const agentware::detail::schema_index index(indexed);
    CHECK(index.size() == 2);
    CHECK(index.find(indexed) != nullptr);
    CHECK(index.find(other) == nullptr);
    CHECK(validate_arguments(other, json::parse(R"({"a":"text"})").as_object(), &index).value_or("") ==
          R"(argument "a" must be an integer (got string "text"))");
}
