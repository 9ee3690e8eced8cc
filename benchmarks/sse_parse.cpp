// What reading a model's answer costs: SSE parsing throughput, assembling a
// streamed answer, and turning a whole response into a message, each beside
// a plain boost::json::parse of the same bytes as the reference.

#include <agentware/model/anthropic_format.hpp>
#include <agentware/model/openai_format.hpp>
#include <agentware/model/sse_parser.hpp>

#include <benchmark/benchmark.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/src.hpp>

#include <string>
#include <vector>

namespace {

/// The data payloads of a long streamed answer: text deltas of a few words,
/// then a tool call whose arguments come in pieces, usage, [DONE].
std::vector<std::string> openai_payloads(std::size_t deltas) {
    std::vector<std::string> out;
    const std::string head =
        R"({"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_eb9dce56a8","choices":[{"index":0,"delta":)";
    out.push_back(
        head + R"({"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]})");
    for (std::size_t i = 0; i < deltas; ++i)
        out.push_back(head + R"({"content":" the quick brown"},"logprobs":null,"finish_reason":null}]})");
    out.push_back(
        head +
        R"({"tool_calls":[{"index":0,"id":"call_DdmO9pD3xa9XTPNJ32zg2hcA","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}]})");
    for (int i = 0; i < 20; ++i)
        out.push_back(
            head +
            R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"lo"}}]},"logprobs":null,"finish_reason":null}]})");
    out.push_back(head + R"({},"logprobs":null,"finish_reason":"stop"}]})");
    out.push_back(
        R"({"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":900,"total_tokens":910}})");
    out.push_back("[DONE]");
    return out;
}

std::string sse_of(const std::vector<std::string>& payloads) {
    std::string out;
    for (const auto& p : payloads)
        out += "data: " + p + "\n\n";
    return out;
}

/// The stream as the network hands it over: pieces of 1400 bytes (one TCP segment).
std::vector<std::string_view> segments(const std::string& bytes, std::size_t size = 1400) {
    std::vector<std::string_view> out;
    for (std::size_t i = 0; i < bytes.size(); i += size)
        out.push_back(std::string_view(bytes).substr(i, size));
    return out;
}

const std::vector<std::string>& payloads() {
    static const std::vector<std::string> p = openai_payloads(4000);
    return p;
}

const std::string& stream_bytes() {
    static const std::string s = sse_of(payloads());
    return s;
}

void sse_parser_only(benchmark::State& state) {
    const auto pieces = segments(stream_bytes());
    for (auto _ : state) {
        agentware::sse_parser parser;
        std::size_t events = 0;
        for (auto piece : pieces)
            parser.feed(piece, [&](const agentware::sse_event& e) { events += e.data.size() != 0; });
        benchmark::DoNotOptimize(events);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * stream_bytes().size()));
}
BENCHMARK(sse_parser_only);

void json_parse_of_each_payload(benchmark::State& state) {
    // The reference: parsing every chunk's JSON, which any stream reader must do.
    std::size_t bytes = 0;
    for (const auto& p : payloads())
        bytes += p.size();
    for (auto _ : state) {
        for (const auto& p : payloads()) {
            if (p == "[DONE]") continue;
            benchmark::DoNotOptimize(boost::json::parse(p));
        }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
BENCHMARK(json_parse_of_each_payload);

void openai_stream_to_message(benchmark::State& state) {
    const auto pieces = segments(stream_bytes());
    for (auto _ : state) {
        agentware::openai_stream_assembler assembler;
        for (auto piece : pieces)
            assembler.feed(piece);
        benchmark::DoNotOptimize(assembler.finish());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * stream_bytes().size()));
}
BENCHMARK(openai_stream_to_message);

void anthropic_stream_to_message(benchmark::State& state) {
    std::string bytes = "event: message_start\ndata: "
                        "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\","
                        "\"role\":\"assistant\",\"model\":\"claude\",\"content\":[],\"usage\":{\"input_"
                        "tokens\":10,\"output_tokens\":1}}}\n\n"
                        "event: content_block_start\ndata: "
                        "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\","
                        "\"text\":\"\"}}\n\n";
    for (int i = 0; i < 4000; ++i)
        bytes += "event: content_block_delta\ndata: "
                 "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"
                 "\" the quick brown\"}}\n\n";
    bytes += "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
             "event: message_delta\ndata: "
             "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_"
             "tokens\":900}}\n\n"
             "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    const auto pieces = segments(bytes);
    for (auto _ : state) {
        agentware::anthropic_stream_assembler assembler;
        for (auto piece : pieces)
            assembler.feed(piece);
        benchmark::DoNotOptimize(assembler.finish());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes.size()));
}
BENCHMARK(anthropic_stream_to_message);

/// A whole (non-streamed) answer: 16 KB of text and three tool calls.
const std::string& whole_response() {
    static const std::string body = [] {
        boost::json::object message{{"role", "assistant"}, {"content", std::string(16000, 'x')}};
        boost::json::array calls;
        for (int i = 0; i < 3; ++i)
            calls.push_back(boost::json::object{
                {"id", "call_" + std::to_string(i)},
                {"type", "function"},
                {"function", boost::json::object{{"name", "write_file"},
                                                 {"arguments", R"({"path":"/tmp/a.txt","content":")" +
                                                                   std::string(500, 'y') + "\"}"}}}});
        message["tool_calls"] = std::move(calls);
        boost::json::object response{
            {"id", "chatcmpl-1"}, {"object", "chat.completion"}, {"model", "gpt-4o"}};
        response["choices"] = boost::json::array{
            boost::json::object{{"index", 0}, {"message", message}, {"finish_reason", "tool_calls"}}};
        response["usage"] =
            boost::json::object{{"prompt_tokens", 1}, {"completion_tokens", 2}, {"total_tokens", 3}};
        return boost::json::serialize(response);
    }();
    return body;
}

void json_parse_of_whole_response(benchmark::State& state) {
    for (auto _ : state)
        benchmark::DoNotOptimize(boost::json::parse(whole_response()));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * whole_response().size()));
}
BENCHMARK(json_parse_of_whole_response);

void openai_response_to_message(benchmark::State& state) {
    for (auto _ : state)
        benchmark::DoNotOptimize(agentware::parse_openai_response(whole_response()));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * whole_response().size()));
}
BENCHMARK(openai_response_to_message);

} // namespace

BENCHMARK_MAIN();
