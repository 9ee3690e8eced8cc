#ifndef AGENTWARE_TESTS_SUPPORT_OPENAI_FIXTURES_HPP
#define AGENTWARE_TESTS_SUPPORT_OPENAI_FIXTURES_HPP

// Response bodies in the exact shapes OpenAI-compatible servers send, for the
// format and client tests.

#include <string>
#include <vector>

namespace agentware::test {

inline const std::string openai_plain_answer = R"({
  "id": "chatcmpl-abc123",
  "object": "chat.completion",
  "created": 1741569952,
  "model": "gpt-4o-2024-08-06",
  "choices": [{
    "index": 0,
    "message": {"role": "assistant", "content": "Hello! How can I help?", "refusal": null, "annotations": []},
    "logprobs": null,
    "finish_reason": "stop"
  }],
  "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0}},
  "service_tier": "default",
  "system_fingerprint": "fp_6b68a8204b"
})";

inline const std::string openai_tool_answer = R"({
  "id": "chatcmpl-tool1",
  "object": "chat.completion",
  "created": 1741569952,
  "model": "gpt-4o",
  "choices": [{
    "index": 0,
    "message": {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
      {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": "{not json"}}
    ]},
    "finish_reason": "tool_calls"
  }],
  "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}
})";

/// The data payloads of a streamed answer with reasoning, text and two tool
/// calls whose arguments are spread over many chunks, then usage and [DONE].
inline std::vector<std::string> openai_stream_chunks() {
    const std::string head =
        R"({"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[)";
    auto chunk = [&](const std::string& delta, const std::string& finish = "null") {
        return head + R"({"index":0,"delta":)" + delta + R"(,"logprobs":null,"finish_reason":)" + finish +
               "}]}";
    };
    return {
        chunk(R"({"role":"assistant","content":"","reasoning_content":""})"),
        chunk(R"({"reasoning_content":"Let me "})"),
        chunk(R"({"reasoning_content":"think."})"),
        chunk(R"({"content":"Caf\u00e9 "})"),
        chunk(R"({"content":"time \u2603."})"),
        chunk(
            R"({"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]})"),
        chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]})"),
        chunk(
            R"({"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{}"}}]})"),
        chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"ty\": \"Par"}}]})"),
        chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"is\"}"}}]})"),
        chunk(R"({})", R"("tool_calls")"),
        R"({"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":22,"total_tokens":33}})",
        "[DONE]",
    };
}

/// The chunks as an SSE body ("data: ...\n\n" each), with a comment line
/// and CRLF endings in places, as real servers mix them.
inline std::string sse_body(const std::vector<std::string>& datas) {
    std::string out = ": OPENROUTER PROCESSING\n\n";
    for (std::size_t i = 0; i < datas.size(); ++i)
        out += "data: " + datas[i] + (i % 3 == 1 ? "\r\n\r\n" : "\n\n");
    return out;
}

} // namespace agentware::test

#endif
