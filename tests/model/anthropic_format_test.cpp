// model/anthropic_format.hpp: the Anthropic Messages API's request mapping, whole and streamed
// answers, and error events.
#include <agentware/model/anthropic_format.hpp>

#include <agentware/model/anthropic_chat_model.hpp>

#include "../support/anthropic_fixtures.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace json = boost::json;
using namespace agentware;
using namespace agentware::test;

namespace {

std::string joined(const std::vector<std::string>& pieces) {
    std::string out;
    for (const auto& p : pieces)
        out += p;
    return out;
}

model_response anthropic_assemble(std::string_view bytes, std::size_t cut,
                                  const stream_handler* h = nullptr) {
    anthropic_stream_assembler a(h);
    a.feed(bytes.substr(0, cut));
    a.feed(bytes.substr(cut));
    return a.finish();
}

} // namespace

TEST_CASE("anthropic request: system, turns, tool use and results, images, thinking", "[anthropic][format]") {
    message thinking_ai =
        ai_message("Let me look.", {tool_call{"toolu_1", "get_weather", json::object{{"city", "Paris"}}}});
    thinking_ai.set_reasoning("weather needed");
    thinking_ai.metadata[anthropic_signature_key] = "sig==";
    message unsigned_ai = ai_message("plain");
    unsigned_ai.set_reasoning("no signature: not sent");
    std::vector<message> history{
        system_message("Extra rules."),
        human_message({text_block("What is in this image?"),
                       image_block("data:image/png;base64,iVBORw0KGgo="),
                       image_block("https://example.com/a.jpg")}),
        thinking_ai,
        tool_message("toolu_1", "get_weather", "18C"),
        tool_message("toolu_2", "get_weather", "boom", tool_status::error),
        human_message("thanks"),
        unsigned_ai,
    };
    chat_request r;
    r.messages = cow_vector<message>(history);
    r.system_prompt = "You are terse.";
    std::vector<tool_schema> tools{
        {"get_weather", "Weather by city",
         json::parse(R"({"type":"object","properties":{"city":{"type":"string"}}})").as_object()}};
    r.tools = cow_vector<tool_schema>(tools);
    r.settings.tool_choice = "required";
    r.settings.parallel_tool_calls = false;
    r.settings.stop = {"END"};
    r.settings.thinking = true;

    const json::value body = make_anthropic_request(r, "claude-x", true, {});
    const json::value want = json::parse(R"({
      "model":"claude-x",
      "thinking":{"type":"enabled","budget_tokens":4096},
      "max_tokens":5120,
      "system":"You are terse.\n\nExtra rules.",
      "messages":[
        {"role":"user","content":[
          {"type":"text","text":"What is in this image?"},
          {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
          {"type":"image","source":{"type":"url","url":"https://example.com/a.jpg"}}]},
        {"role":"assistant","content":[
          {"type":"thinking","thinking":"weather needed","signature":"sig=="},
          {"type":"text","text":"Let me look."},
          {"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]},
        {"role":"user","content":[
          {"type":"tool_result","tool_use_id":"toolu_1","content":"18C"},
          {"type":"tool_result","tool_use_id":"toolu_2","content":"boom","is_error":true},
          {"type":"text","text":"thanks"}]},
        {"role":"assistant","content":[{"type":"text","text":"plain"}]}],
      "tools":[{"name":"get_weather","description":"Weather by city","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}],
      "tool_choice":{"type":"any","disable_parallel_tool_use":true},
      "stop_sequences":["END"],
      "stream":true})");
    CHECK(body == want);
}

TEST_CASE("anthropic response: thinking, text, tool use and usage", "[anthropic][format]") {
    const model_response r = parse_anthropic_response(anthropic_answer);
    CHECK(r.ai.reasoning() == "The user wants weather.");
    CHECK(r.ai.metadata.at(anthropic_signature_key) ==
          "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds");
    CHECK(r.ai.text() == "I'll check the weather.");
    REQUIRE(r.ai.tool_calls.size() == 1);
    CHECK(r.ai.tool_calls[0] == tool_call{"toolu_01A09q90qw90lq917835lq9", "get_weather",
                                          json::object{{"location", "San Francisco, CA"}}});
    CHECK(r.usage == token_usage{482, 91, 573});
    CHECK(r.ai.provider.finish_reason() == "tool_use");
    CHECK(r.ai.provider.model() == "claude-sonnet-4-20250514");
    CHECK(r.ai.provider.usage() == r.usage);
    CHECK(r.ai.metadata.size() == 1); // the thinking signature alone stays JSON

    for (const char* bad : {"", "[]", R"({"type":"message"})", R"({"content":[1]})",
                            R"({"content":[{"type":"text","text":3}]})"}) {
        INFO(bad);
        CHECK_THROWS_AS(parse_anthropic_response(bad), model_error);
    }
    const model_response invalid =
        parse_anthropic_response(R"({"content":[{"type":"tool_use","id":"t","name":"f","input":"oops"}]})");
    CHECK(invalid.ai.invalid_tool_calls().size() == 1);
}

TEST_CASE("anthropic stream: events assemble the same message at every split, cuts fail",
          "[anthropic][stream]") {
    const std::string bytes = joined(anthropic_sse_pieces(anthropic_stream_events()));
    std::string text, thinking;
    stream_handler h{[&](std::string_view d) { text += d; }, [&](std::string_view d) { thinking += d; }, {}};
    const model_response whole = anthropic_assemble(bytes, 0, &h);
    CHECK(text == "Okay, checking \xE2\x98\x80.");
    CHECK(thinking == "Need the weather.");
    CHECK(whole.ai.text() == text);
    CHECK(whole.ai.reasoning() == thinking);
    CHECK(whole.ai.metadata.at(anthropic_signature_key) == "EqQBCgIYAhIM");
    REQUIRE(whole.ai.tool_calls.size() == 1);
    CHECK(whole.ai.tool_calls[0].args == json::object{{"location", "San Francisco, CA"}});
    CHECK(whole.usage == token_usage{472, 89, 561});
    CHECK(whole.ai.provider == provider_metadata("tool_use", "claude-sonnet-4-20250514", whole.usage));

    for (std::size_t i = 0; i <= bytes.size(); ++i)
        CHECK(anthropic_assemble(bytes, i).ai == whole.ai);
    for (std::size_t cut = 0; cut + 3 < bytes.size(); ++cut) {
        anthropic_stream_assembler a;
        a.feed(std::string_view(bytes).substr(0, cut));
        CHECK_THROWS_AS(a.finish(), model_error);
    }
}

TEST_CASE("anthropic stream: error events and broken events", "[anthropic][stream]") {
    anthropic_stream_assembler a;
    try {
        a.feed(
            "event: error\ndata: "
            "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n");
        FAIL("no error");
    } catch (const model_error& e) {
        CHECK(e.kind() == model_error_kind::server);
        CHECK(e.provider_message() == "Overloaded");
    }
    anthropic_stream_assembler b;
    CHECK_THROWS_AS(b.feed("data: {\"type\":\"content_block_delta\",\"delta\":{}}\n\n"),
                    model_error); // no index
    anthropic_stream_assembler c;
    CHECK_THROWS_AS(c.feed("data: nope\n\n"), model_error);
}
