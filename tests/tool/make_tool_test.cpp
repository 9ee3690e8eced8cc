// make_tool (tool/make_tool.hpp): a tool from a name, a description, a JSON
// Schema and a callable; what the callable returns becomes the tool's output.
#include <agentware/tool/make_tool.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

using namespace agentware;

namespace {

boost::json::object make_tool_test_args(std::string_view text) {
    return boost::json::parse(text).as_object();
}

} // namespace

TEST_CASE("make_tool keeps the name, the description and the schema, written as text or as an object",
          "[tool][make_tool]") {
    auto from_text = make_tool(
        "echo", "Repeats the text.", R"({"type": "object", "properties": {"text": {"type": "string"}}})",
        [](const boost::json::object& a) { return std::string(a.at("text").as_string()); });
    CHECK(from_text.schema().name == "echo");
    CHECK(from_text.schema().description == "Repeats the text.");
    CHECK(from_text.schema().parameters.at("properties").at("text").at("type") == "string");

    auto from_object =
        make_tool("echo", "Repeats the text.", from_text.schema().parameters,
                  [](const boost::json::object& a) { return std::string(a.at("text").as_string()); });
    CHECK(from_object.schema() == from_text.schema());
    CHECK(from_object.call(make_tool_test_args(R"({"text": "hi"})"), tool_runtime{}).text() == "hi");
}

TEST_CASE("make_tool refuses a schema that is not a JSON object, saying so", "[tool][make_tool]") {
    const auto body = [](const boost::json::object&) { return std::string("x"); };
    CHECK_THROWS_WITH(make_tool("t", "d", "[1, 2]", body),
                      "agentware::make_tool: the parameters must be a JSON Schema object");
    CHECK_THROWS_WITH(
        make_tool("t", "d", "{\"type\": ", body),
        Catch::StartsWith("agentware::make_tool: the parameters must be a JSON Schema object: "));
}

TEST_CASE("what the callable returns is the tool's output: text, a tool_output, or JSON serialised",
          "[tool][make_tool]") {
    const auto schema = R"({"type": "object"})";
    const tool_runtime rt;
    const boost::json::object none;

    auto text = make_tool("t", "d", schema, [](const boost::json::object&) { return "plain"; });
    tool_output out = text.call(none, rt);
    CHECK(out.text() == "plain");
    CHECK(out.status == tool_status::ok);

    auto failing = make_tool("t", "d", schema, [](const boost::json::object&) {
        return tool_output::error("Error: no such file");
    });
    out = failing.call(none, rt);
    CHECK(out.status == tool_status::error);
    CHECK(out.text() == "Error: no such file");

    auto json = make_tool("t", "d", schema, [](const boost::json::object& a) {
        return boost::json::value{{"sum", a.at("a").as_int64() + a.at("b").as_int64()}};
    });
    CHECK(json.call(make_tool_test_args(R"({"a": 2, "b": 40})"), rt).text() == R"({"sum":42})");
}

TEST_CASE("a callable that takes the runtime reads the call's ids", "[tool][make_tool]") {
    auto who = make_tool("who", "Says which call this is.", R"({"type": "object"})",
                         [](const boost::json::object&, const tool_runtime& rt) {
                             return std::string(rt.thread_id) + "/" + std::string(rt.tool_call_id);
                         });
    tool_runtime rt;
    rt.thread_id = "thread-7";
    rt.tool_call_id = "call_1";
    CHECK(who.call({}, rt).text() == "thread-7/call_1");
}
