// message/json.hpp: messages as JSON, the lossless state form and the exact OpenAI wire form,
// the quirks of real providers, and malformed input.
#include <agentware/message/json.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace json = boost::json;
using namespace agentware;
using message_test::obj;
using message_test::through_json;

namespace {

/// The what() of the message_format_error that parsing `text` throws.
std::string format_error_of(std::string_view text) {
    try {
        (void)json::value_to<message>(json::parse(text));
    } catch (const message_format_error& e) {
        return e.what();
    }
    return "(no message_format_error)";
}

std::vector<message> every_kind_of_message() {
    std::vector<message> all;
    all.push_back(system_message("You are terse."));
    all.push_back(human_message("What is 2+2?"));

    message named = human_message("hi");
    named.id = "msg-named";
    named.name = "alice";
    all.push_back(named);

    all.push_back(
        human_message({text_block("Describe these"), image_block("https://example.com/cat.png", "low"),
                       image_block_from_data("image/png", std::string("\x89PNG\r\n\x1a\n\0\xff", 10))}));
    all.push_back(ai_message("It is 4."));

    message thinking =
        ai_message("Let me look.",
                   {tool_call{"call_1", "search", obj(R"({"q":"x","n":3,"deep":{"a":[1,2.5,null,true]}})")},
                    tool_call{"call_2", "noop", {}}});
    thinking.id = "msg-think";
    thinking.set_reasoning("The user wants a search.");
    thinking.provider = provider_metadata("tool_calls", "gpt-4o-2024-08-06", token_usage{12, 7, 19});
    // Shapes the typed members do not hold stay JSON beside them.
    thinking.metadata = obj(R"({"usage_details":{"prompt_tokens":12,"completion_tokens":7},"refusal":""})");
    all.push_back(thinking);

    all.push_back(ai_message("", {tool_call{"call_3", "ls", obj(R"({"path":"/"})")}})); // tool-call-only

    message broken = ai_message("");
    broken.edit_invalid_tool_calls().push_back(
        invalid_tool_call{"call_4", "search", "{\"q\":", "arguments are not valid JSON: x"});
    all.push_back(broken);

    all.push_back(tool_message("call_1", "search", "3 results"));
    all.push_back(tool_message("call_2", "noop", "boom", tool_status::error));
    all.push_back(tool_message("call_3", "ls", "")); // empty result

    message empty_block = ai_message("");
    empty_block.content.push_back(text_block("")); // one empty block is not "no content"
    all.push_back(empty_block);

    message two_texts = human_message({text_block("a"), text_block("b")});
    all.push_back(two_texts);

    all.push_back(remove_message("msg-think"));
    all.push_back(remove_all_messages());
    return all;
}

} // namespace

// --- JSON: round trips ----------------------------------------------------------------

TEST_CASE("every kind of message survives a JSON round trip unchanged", "[message][json]") {
    for (const message& m : every_kind_of_message()) {
        INFO(to_json_string(m));
        CHECK(through_json(m) == m);
    }
}

TEST_CASE("a message list survives to_json_string and parse_messages", "[message][json]") {
    const std::vector<message> all = every_kind_of_message();
    CHECK(parse_messages(to_json_string(all)) == all);
    CHECK(parse_messages("[]").empty());

    // Deeper than Boost.JSON's default depth limit of 32.
    message deep = ai_message("deep");
    json::value nested = json::object{};
    for (int i = 0; i < 60; ++i)
        nested = json::object{{"k", nested}};
    deep.metadata["nested"] = nested;
    CHECK(parse_messages(to_json_string(std::vector<message>{deep})) == std::vector<message>{deep});
}

TEST_CASE("content blocks, tool calls, roles and statuses convert on their own", "[message][json]") {
    const content_block image = image_block("https://x/y.png", "auto");
    CHECK(json::value_from(image) ==
          json::parse(R"({"type":"image_url","image_url":{"url":"https://x/y.png","detail":"auto"}})"));
    CHECK(json::value_to<content_block>(json::value_from(image)) == image);

    const tool_call call{"call_9", "search", obj(R"({"q":"x"})")};
    CHECK(
        json::value_from(call) ==
        json::parse(
            R"({"id":"call_9","type":"function","function":{"name":"search","arguments":"{\"q\":\"x\"}"}})"));
    CHECK(json::value_to<tool_call>(json::value_from(call)) == call);

    const invalid_tool_call bad{"call_8", "search", "{oops", "arguments are not valid JSON: syntax error"};
    CHECK(json::value_to<invalid_tool_call>(json::value_from(bad)) == bad);

    CHECK(json::value_from(role::human) == "user");
    CHECK(json::value_from(role::ai) == "assistant");
    CHECK(json::value_to<role>(json::value("tool")) == role::tool);
    CHECK(json::value_to<tool_status>(json::value("success")) == tool_status::ok);
    CHECK(json::value_from(tool_status::error) == "error");
}

TEST_CASE("a tool message's call id and an ai message's reasoning and invalid calls are out of line",
          "[message][extras]") {
    message none = human_message("hi");
    CHECK(none.tool_call_id().empty());
    CHECK(none.reasoning().empty());
    CHECK(none.invalid_tool_calls().empty());

    message tool = tool_message("call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", "sunny");
    CHECK(tool.tool_call_id() == "call_DdmO9pD3xa9XTPNJ32zg2hcA");
    CHECK(tool.reasoning().empty());

    message ai = ai_message("answer");
    ai.set_reasoning("first thought");
    ai.edit_invalid_tool_calls().push_back({"c1", "search", "{oops", "bad JSON"});
    ai.set_reasoning(ai.reasoning().substr(6)); // a view of itself is read before it is replaced
    CHECK(ai.reasoning() == "thought");
    REQUIRE(ai.invalid_tool_calls().size() == 1); // setting a string keeps the calls
    CHECK(ai.invalid_tool_calls()[0].raw_args == "{oops");

    message copy = ai; // the copy is its own
    copy.edit_invalid_tool_calls().clear();
    copy.set_tool_call_id("x");
    CHECK(copy != ai);
    CHECK(ai.invalid_tool_calls().size() == 1);
    CHECK(ai.tool_call_id().empty());
    copy.set_tool_call_id("");
    copy.edit_invalid_tool_calls().push_back(ai.invalid_tool_calls()[0]);
    CHECK(copy == ai);

    message moved = std::move(copy);
    CHECK(moved == ai);
    copy = moved; // assignable again after a move
    CHECK(copy == ai);

    ai.set_reasoning("");
    ai.edit_invalid_tool_calls().clear();
    CHECK(ai == ai_message("answer")); // emptied extras compare equal to none
}

// --- JSON: exact forms ------------------------------------------------------------------

TEST_CASE("a tool-call-only assistant message has the exact OpenAI wire form", "[message][json][wire]") {
    message m = ai_message("", {tool_call{"call_1", "search", obj(R"({"q":"x"})")}});
    m.id = "msg-1";
    m.set_reasoning("thinking");
    m.provider.set_finish_reason("tool_calls");
    m.edit_invalid_tool_calls().push_back(invalid_tool_call{"call_2", "ls", "{", "bad"});

    CHECK(to_openai_wire(m) == json::parse(R"({
        "role": "assistant",
        "content": null,
        "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": "search", "arguments": "{\"q\":\"x\"}"}},
                       {"id": "call_2", "type": "function",
                        "function": {"name": "ls", "arguments": "{"}}]
    })"));
    CHECK(to_openai_wire(m, wire_options{true}).as_object().at("reasoning_content") == "thinking");
}

TEST_CASE("a tool message has the exact wire form and keeps more in the state form",
          "[message][json][wire]") {
    message m = tool_message("call_1", "search", "no results", tool_status::error);
    m.id = "msg-7";
    CHECK(to_openai_wire(m) ==
          json::parse(R"({"role":"tool","content":"no results","tool_call_id":"call_1"})"));
    CHECK(json::value_from(m) == json::parse(R"({
        "role": "tool", "id": "msg-7", "name": "search", "content": "no results",
        "tool_call_id": "call_1", "status": "error"
    })"));
}

TEST_CASE("user content with an image is an array of parts on the wire", "[message][json][wire]") {
    message m = human_message({text_block("What is this?"), image_block("https://x/cat.png", "low")});
    m.name = "alice";
    CHECK(to_openai_wire(m) == json::parse(R"({
        "role": "user", "name": "alice",
        "content": [{"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": "https://x/cat.png", "detail": "low"}}]
    })"));
    CHECK(to_openai_wire(system_message("Be brief")) ==
          json::parse(R"({"role":"system","content":"Be brief"})"));
    CHECK(to_openai_wire(ai_message("")) == json::parse(R"({"role":"assistant","content":""})"));
}

TEST_CASE("a conversation becomes the messages array of a request", "[message][json][wire]") {
    const std::vector<message> conversation{system_message("s"), human_message("h")};
    CHECK(to_openai_wire(conversation) ==
          json::parse(R"([{"role":"system","content":"s"},{"role":"user","content":"h"}])"));
}

TEST_CASE("a remove marker cannot be sent to a model", "[message][json][wire]") {
    CHECK_THROWS_AS(to_openai_wire(remove_message("msg-1")), std::invalid_argument);
    CHECK(json::value_from(remove_message("msg-1")) == json::parse(R"({"role":"remove","id":"msg-1"})"));
}

// --- JSON: provider quirks --------------------------------------------------------------

TEST_CASE("assistant replies with null or missing content parse as tool-call-only",
          "[message][json][quirks]") {
    const message a = json::value_to<message>(json::parse(R"({"role":"assistant","content":null,
        "tool_calls":[{"id":"call_1","type":"function","function":{"name":"ls","arguments":"{\"path\":\"/\"}"}}]})"));
    CHECK(a.content.empty());
    REQUIRE(a.tool_calls.size() == 1);
    CHECK(a.tool_calls[0] == tool_call{"call_1", "ls", obj(R"({"path":"/"})")});

    const message b = json::value_to<message>(json::parse(R"({"role":"assistant",
        "tool_calls":[{"id":"call_1","type":"function","function":{"name":"ls","arguments":"{}"}}]})"));
    CHECK(b.content.empty());
    CHECK(b.tool_calls.size() == 1);
}

TEST_CASE("empty or blank arguments mean no arguments", "[message][json][quirks]") {
    for (const char* args : {R"("")", R"("  \n")", R"("null")", "null"}) {
        INFO(args);
        const message m = json::value_to<message>(json::parse(std::string(R"({"role":"assistant","content":"",
            "tool_calls":[{"id":"c","type":"function","function":{"name":"now","arguments":)") +
                                                              args + "}}]}"));
        REQUIRE(m.tool_calls.size() == 1);
        CHECK(m.tool_calls[0].args.empty());
        CHECK(m.invalid_tool_calls().empty());
    }
}

TEST_CASE("unparsable arguments become an invalid tool call, never an exception", "[message][json][quirks]") {
    const message m = json::value_to<message>(json::parse(R"({"role":"assistant","content":"",
        "tool_calls":[
          {"id":"c1","type":"function","function":{"name":"search","arguments":"{\"q\": \"unterminated"}},
          {"id":"c2","type":"function","function":{"name":"search","arguments":"[1,2]"}},
          {"id":"c3","type":"function","function":{"name":"search","arguments":"{\"q\":\"ok\"}"}}]})"));
    REQUIRE(m.tool_calls.size() == 1);
    CHECK(m.tool_calls[0].id == "c3");
    REQUIRE(m.invalid_tool_calls().size() == 2);
    CHECK(m.invalid_tool_calls()[0].id == "c1");
    CHECK(m.invalid_tool_calls()[0].name == "search");
    CHECK(m.invalid_tool_calls()[0].raw_args == "{\"q\": \"unterminated");
    CHECK_THAT(m.invalid_tool_calls()[0].error, Catch::StartsWith("arguments are not valid JSON: "));
    CHECK(m.invalid_tool_calls()[1].raw_args == "[1,2]");
    CHECK(m.invalid_tool_calls()[1].error == "arguments must be a JSON object (got array)");

    // On the wire the garbled calls go back as the model wrote them, so the
    // error tool messages that answer them stay paired with a call.
    const json::object wire = to_openai_wire(m).as_object();
    CHECK_FALSE(wire.contains("invalid_tool_calls"));
    const json::array& calls = wire.at("tool_calls").as_array();
    REQUIRE(calls.size() == 3);
    CHECK(calls[0].at("id") == "c3");
    CHECK(calls[1].at("id") == "c1");
    CHECK(calls[1].at("function").at("arguments") == "{\"q\": \"unterminated");
    CHECK(calls[2].at("function").at("arguments") == "[1,2]");
}

TEST_CASE("other provider variations are read as intended", "[message][json][quirks]") {
    const message m =
        json::value_to<message>(json::parse(R"({"role":"assistant","content":[{"type":"text","text":"a"},"b"],
        "reasoning":"why","refusal":"I can't",
        "tool_calls":[{"function":{"name":"f","arguments":{"x":1}}},
                      {"id":"c2","function":{"name":"g","arguments":"\"{\\\"y\\\":2}\""}}]})"));
    CHECK(m.text() == "ab");
    CHECK(m.reasoning() == "why");
    CHECK(m.metadata.at("refusal") == "I can't");
    REQUIRE(m.tool_calls.size() == 2);
    CHECK(m.tool_calls[0].id.empty()); // kept as the model sent it: dangling_tool_call labels it in requests
    CHECK(m.tool_calls[0].args == obj(R"({"x":1})"));
    CHECK(m.tool_calls[1].args == obj(R"({"y":2})")); // doubly encoded arguments

    CHECK(json::value_to<message>(json::parse(R"({"role":"developer","content":"rules"})")).is_system());
    const message image = json::value_to<message>(
        json::parse(R"({"role":"user","content":[{"type":"image_url","image_url":"https://x/y.png"}]})"));
    CHECK(image.content == std::vector<content_block>{image_block("https://x/y.png")});
    CHECK(json::value_to<message>(json::parse(R"({"role":"user","content":"hi","some_new_field":[1]})"))
              .text() == "hi");
}

TEST_CASE("blank tool call ids and tool messages without tool_call_id are read as they are",
          "[message][json]") {
    const auto ai = json::value_to<message>(json::parse(
        R"({"role":"assistant","tool_calls":[{"id":"","function":{"name":"f","arguments":"{}"}},
                                             {"function":{"name":"g","arguments":"not json"}}]})"));
    REQUIRE(ai.tool_calls.size() == 1);
    CHECK(ai.tool_calls[0].id.empty());
    REQUIRE(ai.invalid_tool_calls().size() == 1);
    CHECK(ai.invalid_tool_calls()[0].id.empty());
    // Reading twice gives the same message: nothing is made up.
    CHECK(json::serialize(json::value_from(ai)) ==
          json::serialize(json::value_from(json::value_to<message>(json::value_from(ai)))));
    const auto orphan = json::value_to<message>(json::parse(R"({"role":"tool","content":"x"})"));
    CHECK(orphan.is_tool());
    CHECK(orphan.tool_call_id().empty());
    CHECK(orphan.text() == "x");
}

// --- JSON: malformed input ----------------------------------------------------------------

TEST_CASE("malformed messages throw message_format_error naming the field", "[message][json][errors]") {
    CHECK(format_error_of(R"({"role":"robot","content":"hi"})") ==
          R"(message: field "role" must be one of system, user, assistant, tool (got "robot"))");
    CHECK(format_error_of(R"({"content":"hi"})") == R"(message: field "role" is missing)");
    CHECK(format_error_of(R"({"role":7})") ==
          R"(message: field "role" must be one of system, user, assistant, tool (got number))");
    CHECK(format_error_of(R"([1])") == "message: must be a JSON object (got array)");
    CHECK(format_error_of(R"({"role":"user","content":42})") ==
          R"(message: field "content" must be a string, an array or null (got number))");
    CHECK(
        format_error_of(R"({"role":"user","content":[{"type":"text","text":"a"},{"type":"input_audio"}]})") ==
        R"(message: field "content[1].type" must be "text" or "image_url" (got "input_audio"))");
    CHECK(format_error_of(R"({"role":"assistant","tool_calls":{}})") ==
          R"(message: field "tool_calls" must be an array (got object))");
    CHECK(format_error_of(R"({"role":"assistant","tool_calls":[{"id":"c","function":{"name":3}}]})") ==
          R"(message: field "tool_calls[0].function.name" must be a string (got number))");
    CHECK(format_error_of(R"({"role":"assistant","tool_calls":[{"id":"c","type":"custom","custom":{}}]})") ==
          R"(message: field "tool_calls[0].type" must be "function" (got "custom"))");
    CHECK(format_error_of(R"({"role":"user","id":1})") ==
          R"(message: field "id" must be a string (got number))");
    CHECK(format_error_of(R"({"role":"tool","tool_call_id":"c","status":"meh"})") ==
          R"(message: field "status" must be "ok" or "error" (got "meh"))");
    CHECK(format_error_of(R"({"role":"user","metadata":[]})") ==
          R"(message: field "metadata" must be an object (got array))");
}

TEST_CASE("parse_messages reports invalid JSON and bad elements without crashing",
          "[message][json][errors]") {
    CHECK_THROWS_MATCHES(parse_messages(R"([{"role":"user",)"), message_format_error,
                         Catch::Matchers::Predicate<std::exception>([](const std::exception& e) {
                             return std::string(e.what()).rfind("messages: not valid JSON: ", 0) == 0;
                         }));
    CHECK_THROWS_WITH(parse_messages(""), Catch::StartsWith("messages: not valid JSON: "));
    CHECK_THROWS_WITH(parse_messages("[1,]"), "messages: not valid JSON: syntax error at offset 3");
    CHECK_THROWS_WITH(parse_messages("[] x"),
                      Catch::StartsWith("messages: not valid JSON: ") && Catch::EndsWith(" at offset 3"));
    CHECK_THROWS_WITH(parse_messages(R"({"role":"user"})"), "messages: must be a JSON array (got object)");
    CHECK_THROWS_WITH(
        parse_messages(R"([{"role":"user","content":"a"},{"role":"bot"}])"),
        R"(messages[1]: field "role" must be one of system, user, assistant, tool (got "bot"))");
}

TEST_CASE("a lone tool call with unusable arguments cannot become a tool_call", "[message][json][errors]") {
    CHECK_THROWS_WITH(
        json::value_to<tool_call>(json::parse(R"({"id":"c","function":{"name":"f","arguments":"[1]"}})")),
        R"(tool_call: field "function.arguments" arguments must be a JSON object (got array))");
}
