// The OpenAI wire format: request bodies, whole and streamed responses, errors.

#include <agentware/model/openai_format.hpp>

#include "../support/openai_fixtures.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <string>
#include <vector>

namespace json = boost::json;
using namespace agentware;
using namespace agentware::test;

namespace {

model_response assemble(const std::string& bytes, std::vector<std::size_t> cuts = {},
                        const stream_handler* h = nullptr) {
    openai_stream_assembler a(h);
    std::size_t from = 0;
    for (std::size_t cut : cuts) {
        a.feed(std::string_view(bytes).substr(from, cut - from));
        from = cut;
    }
    a.feed(std::string_view(bytes).substr(from));
    return a.finish();
}

model_error_kind kind_of(auto&& f) {
    try {
        f();
    } catch (const model_error& e) {
        return e.kind();
    }
    FAIL("no model_error thrown");
    return model_error_kind::configuration;
}

} // namespace

TEST_CASE("openai request: messages, system prompt, tools and settings", "[openai][format]") {
    std::vector<message> history{
        human_message("hi"), ai_message("", {tool_call{"c1", "f", json::object{{"a", 1}}}}),
        tool_message("c1", "f", "42"),
        human_message({text_block("what is this?"), image_block("https://x/y.png", "low")})};
    history[1].set_reasoning("hmm");
    chat_request r;
    r.messages = cow_vector<message>(history);
    r.system_prompt = "be brief";
    std::vector<tool_schema> tools{
        {"f", "does f",
         json::parse(R"({"type":"object","properties":{"a":{"type":"integer"}}})").as_object()},
        {"g", "", {}}};
    r.tools = cow_vector<tool_schema>(tools);
    r.settings.temperature = 0.5;
    r.settings.max_tokens = 100;
    r.settings.stop = {"END"};
    r.settings.tool_choice = "f";
    r.settings.parallel_tool_calls = false;
    r.settings.reasoning_effort = "high";
    r.settings.extra_body["top_k"] = 5;
    r.settings.extra_body["temperature"] = 0.7; // extra_body wins

    const json::object body = make_openai_request(r, "m1", true, {});
    const json::value want = json::parse(R"({
      "model":"m1",
      "messages":[
        {"role":"system","content":"be brief"},
        {"role":"user","content":"hi"},
        {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},
        {"role":"tool","content":"42","tool_call_id":"c1"},
        {"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"https://x/y.png","detail":"low"}}]}],
      "tools":[{"type":"function","function":{"name":"f","description":"does f","parameters":{"type":"object","properties":{"a":{"type":"integer"}}}}},
               {"type":"function","function":{"name":"g","parameters":{"type":"object","properties":{}}}}],
      "parallel_tool_calls":false,
      "tool_choice":{"type":"function","function":{"name":"f"}},
      "temperature":0.7,
      "max_tokens":100,
      "stop":["END"],
      "reasoning_effort":"high",
      "stream":true,
      "stream_options":{"include_usage":true},
      "top_k":5})");
    CHECK(json::value(body) == want);

    openai_wire_options o;
    o.include_reasoning = true;
    o.use_max_completion_tokens = true;
    const json::object body2 = make_openai_request(r, "m1", false, o);
    CHECK(body2.at("messages").as_array()[2].as_object().at("reasoning_content") == "hmm");
    CHECK(body2.contains("max_completion_tokens"));
    CHECK_FALSE(body2.contains("stream"));
}

TEST_CASE("openai request: no tools means no parallel_tool_calls, plain tool_choice values",
          "[openai][format]") {
    chat_request r;
    r.settings.parallel_tool_calls = true;
    r.settings.tool_choice = "required";
    const json::object body = make_openai_request(r, "m", false);
    CHECK_FALSE(body.contains("parallel_tool_calls"));
    CHECK(body.at("tool_choice") == "required");
    CHECK(body.at("messages").as_array().empty());
}

TEST_CASE("openai response: a plain answer with usage", "[openai][format]") {
    const model_response r = parse_openai_response(openai_plain_answer);
    CHECK(r.ai.is_ai());
    CHECK(r.ai.text() == "Hello! How can I help?");
    CHECK(r.ai.id == "chatcmpl-abc123");
    CHECK(r.ai.provider.finish_reason() == "stop");
    CHECK(r.ai.provider.model() == "gpt-4o-2024-08-06");
    CHECK(r.usage == token_usage{19, 10, 29});
    CHECK(r.ai.provider.usage() == r.usage);
    CHECK(r.ai.metadata.empty()); // no refusal: nothing is left over as JSON
    // The state form keeps the keys it has always had.
    CHECK(json::value_from(r.ai).at("metadata") ==
          json::parse(R"({"finish_reason":"stop","model":"gpt-4o-2024-08-06",
        "usage":{"input_tokens":19,"output_tokens":10,"total_tokens":29}})"));
}

TEST_CASE("openai response: tool calls, with unparsable arguments kept as invalid calls",
          "[openai][format]") {
    const model_response r = parse_openai_response(openai_tool_answer);
    REQUIRE(r.ai.tool_calls.size() == 1);
    CHECK(r.ai.tool_calls[0] == tool_call{"call_1", "get_weather", json::object{{"city", "Paris"}}});
    REQUIRE(r.ai.invalid_tool_calls().size() == 1);
    CHECK(r.ai.invalid_tool_calls()[0].raw_args == "{not json");
    CHECK(r.ai.content.empty());
}

TEST_CASE("openai response: bad bodies are invalid_response errors", "[openai][format]") {
    for (const char* body :
         {"", "{", "[]", "null", R"({"choices":[]})", R"({"choices":[1]})", R"({"choices":[{}]})",
          R"({"choices":[{"message":{"role":"user","content":"x"}}]})",
          R"({"choices":[{"message":{"role":"assistant","content":7}}]})",
          R"({"choices":[{"message":{"role":"assistant","tool_calls":[{"function":{}}]}}]})"}) {
        INFO(body);
        CHECK(kind_of([&] { parse_openai_response(body); }) == model_error_kind::invalid_response);
    }
    // A missing role is tolerated (some local servers omit it).
    CHECK(parse_openai_response(R"({"choices":[{"message":{"content":"ok"}}]})").ai.text() == "ok");
}

TEST_CASE("openai stream: text, reasoning and tool calls spread over chunks", "[openai][stream]") {
    std::string text, reasoning;
    stream_handler h{[&](std::string_view d) { text += d; }, [&](std::string_view d) { reasoning += d; }, {}};
    const model_response r = assemble(sse_body(openai_stream_chunks()), {}, &h);
    CHECK(text == "Caf\xC3\xA9 time \xE2\x98\x83.");
    CHECK(reasoning == "Let me think.");
    CHECK(r.ai.text() == text);
    CHECK(r.ai.reasoning() == reasoning);
    REQUIRE(r.ai.tool_calls.size() == 2);
    CHECK(r.ai.tool_calls[0] == tool_call{"call_a", "get_weather", json::object{{"city", "Paris"}}});
    CHECK(r.ai.tool_calls[1] == tool_call{"call_b", "get_time", json::object{}});
    CHECK(r.usage == token_usage{11, 22, 33});
    CHECK(r.ai.provider == provider_metadata("tool_calls", "deepseek-reasoner", token_usage{11, 22, 33}));
    CHECK(r.ai.id == "chatcmpl-s1");
}

TEST_CASE("openai stream: every split gives the same message, every cut gives an error or the whole message",
          "[openai][stream]") {
    const std::string bytes = sse_body(openai_stream_chunks());
    const model_response whole = assemble(bytes);
    for (std::size_t i = 0; i <= bytes.size(); ++i) {
        const model_response split = assemble(bytes, {i});
        CHECK(split.ai == whole.ai);
    }
    std::size_t errors = 0;
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
        openai_stream_assembler a;
        a.feed(std::string_view(bytes).substr(0, cut));
        try {
            const model_response r = a.finish();
            // Only a cut after the finish_reason chunk may complete, and then nothing is missing but usage.
            CHECK(r.ai.tool_calls == whole.ai.tool_calls);
            CHECK(r.ai.text() == whole.ai.text());
        } catch (const model_error& e) {
            CHECK(e.kind() == model_error_kind::invalid_response);
            ++errors;
        }
    }
    CHECK(errors > bytes.size() / 2);
}

TEST_CASE("openai stream: error events and malformed chunks are typed errors", "[openai][stream]") {
    CHECK(kind_of([] { assemble("data: {not json}\n\n"); }) == model_error_kind::invalid_response);
    CHECK(kind_of([] { assemble("data: [1]\n\n"); }) == model_error_kind::invalid_response);
    CHECK(kind_of([] {
              assemble(R"(data: {"choices":[{"delta":{"content":5}}]})"
                       "\n\n");
          }) == model_error_kind::invalid_response);
    CHECK(
        kind_of([] {
            assemble(
                R"(data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]})"
                "\n\ndata: [DONE]\n\n");
        }) == model_error_kind::invalid_response); // no name
    CHECK(kind_of([] {
              assemble("data: {\"error\":{\"message\":\"This model's maximum context length is 8192 "
                       "tokens\",\"code\":\"context_length_exceeded\"}}\n\n");
          }) == model_error_kind::context_length_exceeded);
    CHECK(kind_of([] { assemble("event: error\ndata: {\"error\":{\"message\":\"overloaded\"}}\n\n"); }) ==
          model_error_kind::server);
    CHECK(kind_of([] { assemble(""); }) == model_error_kind::invalid_response);
}

TEST_CASE("openai stream: tool-call deltas without an index, and text after [DONE] ignored",
          "[openai][stream]") {
    const std::string bytes =
        R"(data: {"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"x\""}}]}}]})"
        "\n\n"
        R"(data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]}}]})"
        "\n\n"
        R"(data: {"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":{"y":2}}}]}}]})"
        "\n\n"
        "data: [DONE]\n\n"
        R"(data: {"choices":[{"delta":{"content":"late"}}]})"
        "\n\n";
    const model_response r = assemble(bytes);
    REQUIRE(r.ai.tool_calls.size() == 2);
    CHECK(r.ai.tool_calls[0] == tool_call{"a", "f", json::object{{"x", 1}}});
    CHECK(r.ai.tool_calls[1] == tool_call{"b", "g", json::object{{"y", 2}}});
    CHECK(r.ai.content.empty());
}

TEST_CASE("provider errors: kinds by status, provider message, context length, key redaction", "[errors]") {
    const model_error e401 = detail::http_error(
        "openai", 401,
        R"({"error":{"message":"Incorrect API key provided: sk-secret-123456.","type":"invalid_request_error","code":"invalid_api_key"}})",
        "sk-secret-123456");
    CHECK(e401.kind() == model_error_kind::authentication);
    CHECK(e401.http_status() == 401);
    CHECK(e401.provider_message() == "Incorrect API key provided: [redacted].");
    CHECK(std::string(e401.what()).find("sk-secret") == std::string::npos);

    CHECK(
        detail::http_error(
            "x", 400,
            R"({"error":{"message":"This model's maximum context length is 4097 tokens.","code":"context_length_exceeded"}})",
            "")
            .kind() == model_error_kind::context_length_exceeded);
    CHECK(
        detail::http_error(
            "x", 400,
            R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}})",
            "")
            .kind() == model_error_kind::context_length_exceeded);
    CHECK(detail::http_error("x", 400, R"({"error":"model 'x' not found"})", "").provider_message() ==
          "model 'x' not found");
    CHECK(detail::http_error("x", 404, "<html>nope</html>", "").kind() == model_error_kind::bad_request);
    CHECK(detail::http_error("x", 429, "{}", "").kind() == model_error_kind::rate_limited);
    CHECK(detail::http_error("x", 503, "", "").kind() == model_error_kind::server);
    CHECK(detail::http_error("x", 409, "", "").retryable());
    CHECK_FALSE(detail::http_error("x", 403, "", "").retryable());
    CHECK(detail::http_error("x", 500, std::string(10000, 'x'), "").provider_message().size() < 400);
}
