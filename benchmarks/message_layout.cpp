// message_layout: what one message costs, in memory and in a thread's load and
// save, with the provider's figures (finish reason, model, usage) typed in
// message::provider, beside the layout before it, where they were a nested
// JSON object in message::metadata. Both run in the same binary:
//   BM_parsed_answer/{typed,json}  an OpenAI chat-completions response with one
//                                  tool call, parsed, then stored as the loop
//                                  stores it: bytes and blocks the message holds
//   BM_thread_memory/{typed,json}  the same per message over a 10,000-message thread
//   BM_thread_save/{typed,json}    value_from of that thread's state
//   BM_thread_load/{typed,json}    value_to of it
//
// The "json" layout is the one before: message_before below is its struct,
// whose size is counted, and a message whose provider is empty and whose
// metadata holds the figures as the model clients wrote them keeps on the heap
// what it kept then (today's message also keeps a tool message's call id and
// an ai message's reasoning out of line: 160 bytes instead of 240). Its JSON paths are the ones of before:
// saving copies metadata whole; loading reads the message's other fields the same way and copies metadata
// whole.
//
// Memory is counted by replacing the global operator new: `bytes` is sizeof
// plus the chunks glibc hands out for what the message keeps (usable size and
// its 8-byte header: what the heap really spends), `blocks` the allocations it
// keeps, `allocs` the allocations made on the way (parsing or building the
// message, or a load), per message. Counting is off
// while times are measured.
#include <agentware/agent/detail/loop_steps.hpp>
#include <agentware/message/json.hpp>
#include <agentware/model/openai_format.hpp>
#include <agentware/src.hpp>
#include <agentware/state/basic_state.hpp>

#include <benchmark/benchmark.h>

#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <malloc.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct heap_counter {
    bool on = false;
    std::int64_t bytes = 0, blocks = 0, calls = 0;
};
heap_counter heap;

std::int64_t chunk_of(void* p) noexcept { return static_cast<std::int64_t>(malloc_usable_size(p) + 8); }

} // namespace

namespace {

// Out of line, so the compiler does not see malloc and free meet operator new
// and delete (-Wmismatched-new-delete).
[[gnu::noinline]] void* counted_allocate(std::size_t size) {
    void* p = std::malloc(size == 0 ? 1 : size);
    if (p == nullptr) throw std::bad_alloc();
    if (heap.on) {
        heap.bytes += chunk_of(p);
        ++heap.blocks;
        ++heap.calls;
    }
    return p;
}

[[gnu::noinline]] void counted_free(void* p) noexcept {
    if (p != nullptr && heap.on) {
        heap.bytes -= chunk_of(p);
        --heap.blocks;
    }
    std::free(p);
}

} // namespace

// Only blocks allocated while counting are freed while counting, so the
// counters hold what was kept.
void* operator new(std::size_t size) { return counted_allocate(size); }
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }

namespace {

using namespace agentware;
namespace json = boost::json;

using thread_state = basic_state<type_list<>>;

// The message before the typed provider metadata, member for member.
struct message_before {
    role type;
    std::string id, name;
    std::vector<content_block> content;
    std::string reasoning;
    std::vector<tool_call> tool_calls;
    std::vector<invalid_tool_call> invalid_tool_calls;
    std::string tool_call_id;
    tool_status status;
    json::object metadata;
};
// Today's message keeps a tool message's call id, reasoning and invalid calls
// out of line; the json layout is counted with the size of this struct, and
// its parsed answer (no call id, reasoning or invalid call) holds on the heap
// exactly what it held then. (In the thread, its tool messages' call ids are
// counted as today's out-of-line block: some 24 bytes more than the string
// they had, so the json thread figure is a little above what it was.)
static_assert(sizeof(message_before) == 240, "the json layout must be as large as it was");

// A chat-completions response as OpenAI sends it, with one tool call.
const std::string answer_body = R"({
  "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
  "object": "chat.completion",
  "created": 1741570283,
  "model": "gpt-4o-2024-08-06",
  "choices": [{
    "index": 0,
    "message": {"role": "assistant", "content": null, "refusal": null, "annotations": [],
      "tool_calls": [{"id": "call_DdmO9pD3xa9XTPNJ32zg2hcA", "type": "function",
                      "function": {"name": "get_weather", "arguments": "{\"location\":\"Paris, France\"}"}}]},
    "logprobs": null,
    "finish_reason": "tool_calls"
  }],
  "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}},
  "service_tier": "default",
  "system_fingerprint": "fp_eb9dce56a8"
})";

/// The json layout of a message: the figures back in metadata, written as the
/// model clients wrote them (finish_reason, model, then usage).
void to_json_layout(message& m) {
    const provider_metadata p = std::move(m.provider);
    if (!p.finish_reason().empty()) m.metadata["finish_reason"] = p.finish_reason();
    if (!p.model().empty()) m.metadata["model"] = p.model();
    if (!p.usage().empty()) m.metadata["usage"] = detail::usage_to_json(p.usage());
}

enum class layout { typed, json };

/// A message as the OpenAI client parses it, in either layout.
message parsed_answer(layout l) {
    model_response r = parse_openai_response(answer_body);
    if (l == layout::json) to_json_layout(r.ai);
    return std::move(r.ai);
}

/// 10,000 messages: rounds of a question, an answer calling a tool, the tool's
/// result and a final answer, each answer carrying what the provider reported.
/// The json layout is the typed thread converted, so both have the same ids.
void make_thread(thread_state& s, layout l) {
    for (int round = 0; s.messages.size() < 10'000; ++round) {
        const std::string city = "City " + std::to_string(round);
        detail::append_message(s.messages, human_message("What is the weather in " + city + "?"));
        message call = parsed_answer(layout::typed);
        call.id.clear(); // the loop names what it stores
        call.tool_calls[0].args["location"] = city;
        detail::append_message(s.messages, std::move(call));
        detail::append_message(s.messages, tool_message(s.messages.back().tool_calls[0].id, "get_weather",
                                                        "Sunny, 21 degrees, light wind from the west."));
        message done = ai_message("It is sunny and 21 degrees in " + city + ".");
        done.provider = provider_metadata("stop", "gpt-4o-2024-08-06", token_usage{131, 14, 145});
        detail::append_message(s.messages, std::move(done));
    }
    if (l == layout::json)
        for (message& m : s.messages)
            to_json_layout(m);
}

thread_state make_thread(layout l) {
    thread_state s;
    s.messages.reserve(10'000);
    make_thread(s, l);
    return s;
}

/// Counts what `make` allocates, and what its result keeps of it.
template <class Make>
heap_counter count_kept(Make make) {
    heap = heap_counter{true};
    auto kept = make();
    const heap_counter counted = heap;
    heap.on = false;
    benchmark::DoNotOptimize(kept);
    return counted;
}

void report(benchmark::State& state, const heap_counter& kept, std::int64_t messages, layout l) {
    const auto per = [&](std::int64_t n) { return static_cast<double>(n) / static_cast<double>(messages); };
    state.counters["bytes"] =
        per(kept.bytes) + (l == layout::typed ? sizeof(message) : sizeof(message_before));
    state.counters["blocks"] = per(kept.blocks);
    state.counters["allocs"] = per(kept.calls); // made on the way, kept or not
}

void BM_parsed_answer(benchmark::State& state, layout l) {
    std::vector<message> stored;
    heap_counter kept;
    for (auto _ : state) {
        stored.clear();
        stored.reserve(1); // allocated before counting: the slot is sizeof(message)
        kept = count_kept([&] {
            detail::append_message(stored, parsed_answer(l));
            return 0;
        });
    }
    report(state, kept, 1, l);
}
BENCHMARK_CAPTURE(BM_parsed_answer, typed, layout::typed)->Iterations(1);
BENCHMARK_CAPTURE(BM_parsed_answer, json, layout::json)->Iterations(1);

void BM_thread_memory(benchmark::State& state, layout l) {
    heap_counter kept;
    for (auto _ : state) {
        thread_state s;
        s.messages.reserve(10'000);
        kept = count_kept([&] {
            make_thread(s, l);
            return 0;
        });
    }
    report(state, kept, 10'000, l);
}
BENCHMARK_CAPTURE(BM_thread_memory, typed, layout::typed)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_thread_memory, json, layout::json)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_thread_save(benchmark::State& state, layout l) {
    const thread_state s = make_thread(l);
    for (auto _ : state)
        benchmark::DoNotOptimize(json::value_from(s));
    state.counters["per_message"] = benchmark::Counter(10'000, benchmark::Counter::kIsIterationInvariantRate |
                                                                   benchmark::Counter::kInvert);
}
BENCHMARK_CAPTURE(BM_thread_save, typed, layout::typed)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_thread_save, json, layout::json)->Unit(benchmark::kMillisecond);

/// The load of before: the message read as today, but metadata copied whole.
message load_before(const json::value& v) {
    const json::object& o = v.get_object();
    message m = detail::read_message_fields(o, detail::json_place{"message", {}});
    if (const auto* metadata = o.if_contains("metadata")) m.metadata = metadata->get_object();
    return m;
}

/// basic_state's loop, with either reading.
thread_state load(const json::value& saved, layout l) {
    if (l == layout::typed) return json::value_to<thread_state>(saved);
    thread_state s;
    const json::array& messages = saved.at("messages").get_array();
    s.messages.reserve(messages.size());
    for (const json::value& m : messages)
        s.messages.push_back(load_before(m));
    return s;
}

void BM_thread_load(benchmark::State& state, layout l) {
    // Both layouts save the same JSON, so both load the same input.
    thread_state typed = make_thread(layout::typed);
    const json::value saved = json::value_from(typed);
    for (message& m : typed.messages)
        to_json_layout(m);
    if (saved != json::value_from(typed)) throw std::logic_error("the two layouts saved different JSON");
    const heap_counter counted = count_kept([&] { return load(saved, l); });
    for (auto _ : state)
        benchmark::DoNotOptimize(load(saved, l));
    state.counters["allocs"] = static_cast<double>(counted.calls) / 10'000;
    state.counters["per_message"] = benchmark::Counter(10'000, benchmark::Counter::kIsIterationInvariantRate |
                                                                   benchmark::Counter::kInvert);
}
BENCHMARK_CAPTURE(BM_thread_load, typed, layout::typed)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_thread_load, json, layout::json)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
