#ifndef AGENTWARE_TESTS_SUPPORT_ANTHROPIC_FIXTURES_HPP
#define AGENTWARE_TESTS_SUPPORT_ANTHROPIC_FIXTURES_HPP

// Messages API bodies and event streams in the exact shapes Anthropic sends.

#include <string>
#include <utility>
#include <vector>

namespace agentware::test {

inline const std::string anthropic_answer = R"({
  "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
  "type": "message",
  "role": "assistant",
  "model": "claude-sonnet-4-20250514",
  "content": [
    {"type": "thinking", "thinking": "The user wants weather.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
    {"type": "text", "text": "I'll check the weather."},
    {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather", "input": {"location": "San Francisco, CA"}}
  ],
  "stop_reason": "tool_use",
  "stop_sequence": null,
  "usage": {"input_tokens": 472, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 10, "output_tokens": 91}
})";

/// (event, data) pairs of a streamed answer with thinking, text and a tool call
/// whose input arrives in pieces.
inline std::vector<std::pair<std::string, std::string>> anthropic_stream_events() {
    return {
        {"message_start",
         R"({"type":"message_start","message":{"id":"msg_014p7gG3wDgGV9EUtLvnow3U","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","stop_sequence":null,"usage":{"input_tokens":472,"output_tokens":2},"content":[],"stop_reason":null}})"},
        {"content_block_start",
         R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}})"},
        {"content_block_delta",
         R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Need the "}})"},
        {"content_block_delta",
         R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"weather."}})"},
        {"content_block_delta",
         R"({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}})"},
        {"content_block_stop", R"({"type":"content_block_stop","index":0})"},
        {"content_block_start",
         R"({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}})"},
        {"ping", R"({"type": "ping"})"},
        {"content_block_delta",
         R"({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Okay, "}})"},
        {"content_block_delta",
         R"({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"checking \u2600."}})"},
        {"content_block_stop", R"({"type":"content_block_stop","index":1})"},
        {"content_block_start",
         R"({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}})"},
        {"content_block_delta",
         R"({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}})"},
        {"content_block_delta",
         R"({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"location\": \"San Fra"}})"},
        {"content_block_delta",
         R"({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"ncisco, CA\"}"}})"},
        {"content_block_stop", R"({"type":"content_block_stop","index":2})"},
        {"message_delta",
         R"({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}})"},
        {"message_stop", R"({"type":"message_stop"})"},
    };
}

inline std::vector<std::string>
anthropic_sse_pieces(const std::vector<std::pair<std::string, std::string>>& events) {
    std::vector<std::string> out;
    for (const auto& [event, data] : events)
        out.push_back("event: " + event + "\ndata: " + data + "\n\n");
    return out;
}

} // namespace agentware::test

#endif
