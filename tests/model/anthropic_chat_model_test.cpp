// model/anthropic_chat_model.hpp: the Anthropic client against a local scripted server: plain
// and streamed answers, headers, errors.

#include <agentware/model/anthropic_chat_model.hpp>

#include "../support/anthropic_fixtures.hpp"
#include "../support/scripted_http_server.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cstdlib>
#include <string>
#include <vector>

namespace json = boost::json;
using namespace agentware;
using namespace agentware::test;
using namespace std::chrono_literals;

namespace {

anthropic_config anthropic_config_for(const scripted_http_server& server) {
    ::setenv("AGENTWARE_TEST_ANTHROPIC_KEY", "sk-ant-test-secret", 1);
    anthropic_config c;
    c.base_url = server.base_url("");
    c.model = "claude-test";
    c.api_key_env = "AGENTWARE_TEST_ANTHROPIC_KEY";
    c.http.first_byte_timeout = 300ms;
    c.retry.initial_backoff = 5ms;
    return c;
}

} // namespace

TEST_CASE("anthropic client: plain and streamed answers, headers, errors", "[client][anthropic]") {
    scripted_http_server server;
    anthropic_chat_model model(anthropic_config_for(server));
    chat_request r;
    r.messages = cow_vector<message>(std::vector<message>{human_message("weather?")});

    server.push(scripted_response::json(anthropic_answer));
    CHECK(model.invoke(r).ai.tool_calls.size() == 1);
    const auto first = server.requests().at(0);
    CHECK(first.target == "/v1/messages");
    CHECK(first.header("x-api-key") == "sk-ant-test-secret");
    CHECK(first.header("anthropic-version") == "2023-06-01");
    CHECK(first.header("authorization").empty());
    CHECK(first.json().at("max_tokens") == 4096);

    std::string text;
    r.stream.on_text = [&](std::string_view d) { text += d; };
    auto stream = scripted_response::sse(anthropic_sse_pieces(anthropic_stream_events()));
    stream.delay_between = 1ms;
    server.push(stream);
    CHECK(model.invoke(r).ai.text() == text);
    CHECK(text == "Okay, checking \xE2\x98\x80.");

    // 529 overloaded is retried; a too-long prompt is its own kind and is not.
    server.push(scripted_response::json(
        R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})", 529));
    server.push(scripted_response::json(anthropic_answer));
    CHECK_NOTHROW(model.invoke(r));
    server.push(scripted_response::json(
        R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}})",
        400));
    try {
        (void)model.invoke(r);
        FAIL("no error");
    } catch (const model_error& e) {
        CHECK(e.kind() == model_error_kind::context_length_exceeded);
        CHECK(e.provider_message() == "prompt is too long: 208310 tokens > 200000 maximum");
    }
    server.push(scripted_response::json(
        R"({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}})", 401));
    try {
        (void)model.invoke(r);
        FAIL("no error");
    } catch (const model_error& e) {
        CHECK(e.kind() == model_error_kind::authentication);
    }
    // A stream dropped mid-way is an error.
    auto cut = scripted_response::sse(anthropic_sse_pieces(anthropic_stream_events()));
    cut.drop_after = 900;
    server.push(cut);
    CHECK_THROWS_AS(model.invoke(r), model_error);
    CHECK(server.pending() == 0);
}
