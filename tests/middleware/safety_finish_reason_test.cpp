// safety_finish_reason: tool calls of a safety-stopped answer are removed with
// the explanation; the ordering rule against loop_detection and token_budget.
#include "after_model_bench.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/core/pipeline.hpp>
#include <agentware/middleware/loop_detection.hpp>
#include <agentware/middleware/safety_finish_reason.hpp>
#include <agentware/middleware/token_budget.hpp>
#include <agentware/model/anthropic_format.hpp>
#include <agentware/model/openai_format.hpp>
#include <agentware/model/scripted_model.hpp>

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

using namespace agentware;

namespace {
message stopped(std::string reason, std::string text = {}) {
    message m = test::calls(
        {test::call("c1", "write_file", R"({"path":"/a.md","content":"half"})"), test::call("c2", "")},
        std::move(text));
    m.provider.set_finish_reason(reason);
    return m;
}
} // namespace

TEST_CASE("OpenAI content_filter and Anthropic refusal remove the tool calls",
          "[middleware][safety_finish_reason]") {
    test::bench<safety_finish_reason> b;
    const message& out = b.answer(stopped("content_filter", "Writing the file"));
    CHECK(out.tool_calls.empty());
    CHECK(out.text() ==
          "Writing the file\n\nThe model provider stopped this response with a safety-related signal "
          "(finish_reason='content_filter', detector='openai_content_filter'). Any tool calls "
          "produced in this turn were suppressed because their arguments may be truncated and unsafe "
          "to execute. Please rephrase the request or ask for a narrower output.");
    CHECK(out.provider.finish_reason() == "content_filter"); // kept
    const auto& stamp = out.metadata.at("safety_termination").as_object();
    CHECK(stamp.at("suppressed_tool_call_count") == 2);
    CHECK(stamp.at("suppressed_tool_call_names") == boost::json::parse(R"(["write_file","unknown"])"));

    const message& refused = b.answer(stopped("refusal"));
    CHECK(refused.tool_calls.empty());
    CHECK(refused.text().starts_with("The model provider stopped this response with a safety-related signal "
                                     "(stop_reason='refusal', detector='anthropic_refusal')."));
}

TEST_CASE("a safety stop is reported as a safety_termination event", "[middleware][safety_finish_reason]") {
    test::bench<safety_finish_reason> b;
    std::vector<boost::json::object> events;
    const event_sink::listener collect = [&](const boost::json::object& e) { events.push_back(e); };
    b.rt.events = event_sink(&collect);
    message m = stopped("content_filter");
    m.id = "ai-7";
    b.answer(std::move(m));
    REQUIRE(events.size() == 1);
    CHECK(events[0] ==
          boost::json::parse(R"({"type": "safety_termination", "detector": "openai_content_filter",
        "reason_field": "finish_reason", "reason_value": "content_filter", "suppressed_tool_call_count": 2,
        "suppressed_tool_call_names": ["write_file", "unknown"], "message_id": "ai-7"})")
              .as_object());
    // ... and in the run's context, for a caller that does not listen.
    const auto& recorded = b.rt.context.at("events").as_array();
    REQUIRE(recorded.size() == 1);
    CHECK(recorded[0].at("event") == "safety_termination");
    CHECK(recorded[0].at("middleware") == "safety_finish_reason");

    // A listener that throws does not fail the run; an answer that passes emits nothing.
    const event_sink::listener throws = [](const boost::json::object&) {
        throw std::runtime_error("listener");
    };
    b.rt.events = event_sink(&throws);
    CHECK(b.answer(stopped("refusal")).tool_calls.empty());
    b.rt.events = event_sink(&collect);
    b.answer(stopped("tool_calls"));
    CHECK(events.size() == 1);
}

TEST_CASE("an agent's run_config.stream.on_event receives safety_termination",
          "[middleware][safety_finish_reason]") {
    message stop = stopped("content_filter", "cut");
    scripted_model model(std::vector<message>{stop});
    agent a(model, tool_set{}, pipeline<safety_finish_reason>{});
    std::vector<std::string> types;
    run_config cfg;
    cfg.stream.on_event = [&](const boost::json::object& e) {
        types.push_back(std::string(e.at("type").as_string()));
    };
    auto r = a.invoke("write it", cfg);
    CHECK(types == std::vector<std::string>{"safety_termination"});
    CHECK(r.reason == stop_reason::finished);
    CHECK(r.context.at("events").as_array().size() == 1);
}

TEST_CASE("answers without tool calls or without a safety stop pass", "[middleware][safety_finish_reason]") {
    test::bench<safety_finish_reason> b;
    message text_only = ai_message("partial");
    text_only.provider.set_finish_reason("content_filter");
    CHECK(b.answer(text_only).text() == "partial");
    CHECK(b.answer(stopped("tool_calls")).tool_calls.size() == 2);

    safety_finish_reason_options only_openai;
    only_openai.detectors = {"openai_content_filter"};
    test::bench<safety_finish_reason> narrow{safety_finish_reason(only_openai)};
    CHECK(narrow.answer(stopped("refusal")).tool_calls.size() == 2);
    CHECK(narrow.answer(stopped("content_filter")).tool_calls.empty());
}

TEST_CASE("safety_finish_reason options", "[middleware][safety_finish_reason]") {
    auto read = [](const char* text) {
        return boost::json::value_to<safety_finish_reason_options>(boost::json::parse(text));
    };
    CHECK(read("{}").detectors.empty());
    CHECK(read(R"({"detectors": null})").detectors.empty());
    CHECK(read(R"({"detectors": ["gemini_safety"]})").detectors == std::vector<std::string>{"gemini_safety"});
    CHECK_THROWS_WITH(read(R"({"detectors": []})"), Catch::Contains("safety_finish_reason.detectors") &&
                                                        Catch::Contains("at least one entry"));
    CHECK_THROWS_WITH(read(R"({"detectors": ["nope"]})"), Catch::Contains("unknown detector \"nope\""));
    CHECK_THROWS_WITH(read(R"({"detector": ["openai_content_filter"]})"),
                      Catch::Contains("safety_finish_reason.detector: unknown key"));
}

TEST_CASE("safety_finish_reason stands after the loop and token guards",
          "[middleware][safety_finish_reason]") {
    // The other order does not compile (tests/compile_fail/safety_before_loop_detection.cpp).
    STATIC_REQUIRE(detail::placement_rules_hold<loop_detection, token_budget, safety_finish_reason>);
    STATIC_REQUIRE(detail::placement_rules_hold<safety_finish_reason>);
}

TEST_CASE("the clients carry the provider's safety stop to the guard", "[middleware][safety_finish_reason]") {
    const model_response openai = parse_openai_response(R"({
        "id": "chatcmpl-1", "model": "gpt-4o", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "content_filter", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "write_file", "arguments": "{\"path\": \"/a.md\"}"}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})");
    CHECK(openai.ai.provider.finish_reason() == "content_filter");
    test::bench<safety_finish_reason> b;
    CHECK(b.answer(openai.ai).tool_calls.empty());

    const model_response anthropic = parse_anthropic_response(R"({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
        "stop_reason": "refusal", "stop_sequence": null,
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}}],
        "usage": {"input_tokens": 10, "output_tokens": 5}})");
    CHECK(anthropic.ai.provider.finish_reason() == "refusal");
    const message& out = b.answer(anthropic.ai);
    CHECK(out.tool_calls.empty());
    CHECK(out.metadata.at("safety_termination").at("detector") == "anthropic_refusal");
}
