// memory: the two costs the memory subsystem adds to an agent.
//   BM_memory_injection/{ours,recount}  dynamic_context's <memory> text for a
//       user with 100 facts (and all six summaries), within DeerFlow's default
//       budget. "ours" estimates each candidate line once; "recount" is the
//       straightforward alternative that re-estimates the whole text after
//       each line it adds, as a formatter checking its budget would.
//   BM_memory_worker/200  the worker's processing of one 200-message
//       conversation (100 exchanges, tool calls and uploads among them) with
//       the model excluded (it answers at once with a canned update): filter,
//       signals, watermark, prompt, parse, gates and the atomic save of
//       memory.json and one new fact file under /tmp.
//   BM_memory_filter_prompt/200  the same without the model's answer and the
//       save: filter, signals and the prompt alone (pure CPU).
#include <agentware/memory/manager.hpp>
#include <agentware/src.hpp>

#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

using namespace agentware;

namespace {

user_memory hundred_facts() {
    user_memory m;
    const char* summaries[] = {"Builds a C++ agent framework with compile-time middleware.",
                               "Lives in Lisbon; cycles to work.",
                               "Shipping the memory subsystem this week.",
                               "Ported DeerFlow's lead agent.",
                               "Wrote a JSON reader with key paths in errors.",
                               "Has worked on compilers for ten years."};
    for (int i = 0; i < 3; ++i) {
        m.user[std::size_t(i)].summary = summaries[i];
        m.history[std::size_t(i)].summary = summaries[i + 3];
    }
    for (int i = 0; i < 100; ++i) {
        memory_fact f;
        f.id = fmt::format("fact_{:08}", i);
        f.category = i % 10 == 0 ? "correction" : (i % 3 == 0 ? "preference" : "context");
        f.confidence = 0.7 + (i % 30) / 100.0;
        f.content =
            fmt::format("Fact number {} about the user's <work> & habits, long enough to be typical.", i);
        if (f.category == "correction") f.source_error = "did it the other way";
        m.facts.push_back(std::move(f));
    }
    return m;
}

// The alternative: re-estimate the whole text after each line.
std::string format_recounting(const user_memory& m, std::size_t max_tokens) {
    std::string out = "User Context:";
    const char* labels[] = {"Work", "Personal", "Current Focus"};
    for (std::size_t i = 0; i < 3; ++i)
        if (!m.user[i].summary.empty())
            out += fmt::format("\n- {}: {}", labels[i], agentware::detail::html_escape(m.user[i].summary));
    out += "\n\nFacts:";
    std::vector<const memory_fact*> sorted;
    for (const auto& f : m.facts)
        sorted.push_back(&f);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](auto* a, auto* b) { return a->confidence > b->confidence; });
    for (const auto* f : sorted) {
        std::string next = out + "\n" + agentware::detail::fact_line(*f);
        if (memory_token_estimate(next) > max_tokens) break;
        out = std::move(next);
    }
    return out;
}

void BM_memory_injection_ours(benchmark::State& state) {
    const user_memory m = hundred_facts();
    for (auto _ : state)
        benchmark::DoNotOptimize(format_memory_for_injection(m));
}
BENCHMARK(BM_memory_injection_ours)->Name("BM_memory_injection/ours");

void BM_memory_injection_recount(benchmark::State& state) {
    const user_memory m = hundred_facts();
    for (auto _ : state)
        benchmark::DoNotOptimize(format_recounting(m, 2000));
}
BENCHMARK(BM_memory_injection_recount)->Name("BM_memory_injection/recount");

std::vector<message> conversation(int messages) {
    std::vector<message> out;
    for (int i = 0; out.size() < std::size_t(messages); ++i) {
        message h = human_message(
            i % 7 == 0
                ? fmt::format("<uploaded_files>\n- report{}.pdf\n</uploaded_files>\nPlease look at report {}",
                              i, i)
                : fmt::format("Question {}: I prefer short answers; how does the queue debounce work?", i));
        h.id = fmt::format("h{}", i);
        out.push_back(std::move(h));
        if (i % 5 == 0 && out.size() + 2 < std::size_t(messages)) {
            out.push_back(ai_message("", {tool_call{"c", "read_file", boost::json::object{{"path", "/x"}}}}));
            out.push_back(tool_message("c", "read_file", std::string(400, 'x')));
        }
        message a = ai_message(fmt::format("Answer {}: {}", i, std::string(300, 'a')));
        a.id = fmt::format("a{}", i);
        out.push_back(std::move(a));
    }
    out.resize(std::size_t(messages));
    return out;
}

void BM_memory_worker(benchmark::State& state) {
    const auto dir =
        std::filesystem::temp_directory_path() / fmt::format("agentware-memory-bench-{}", ::getpid());
    std::filesystem::remove_all(dir);
    const std::vector<message> conv = conversation(int(state.range(0)));
    const std::string answer =
        R"({"user": {"workContext": {"summary": "Works on agentware.", "shouldUpdate": true, "scope": "user", "authority": "descriptive"}},
            "history": {}, "newFacts": [{"content": "Prefers short answers", "category": "preference", "confidence": 0.9,
            "scope": "user", "durability": "durable", "authority": "descriptive"}]})";
    memory_options o;
    o.backend_config.storage_path = dir.string();
    auto clock = std::make_shared<manual_clock>(std::chrono::sys_days(std::chrono::year(2026) / 11 / 24));
    memory_manager manager(o, {.model =
                                   [&](const chat_request&) {
                                       return model_response{ai_message(answer), {}};
                                   },
                               .clock = clock,
                               .start_worker = false});
    int n = 0;
    manager.updater().set_fact_ids([&] { return fmt::format("fact_{:08}", ++n); });
    for (auto _ : state) {
        clock->advance(std::chrono::seconds(1)); // a new updatedAt: every round saves
        memory_update_item item;
        item.thread_id = "bench";
        item.user_id = "alice";
        item.agent_name = "__default__";
        item.messages = filter_messages_for_memory(conv);
        item.signals = detect_memory_signals(item.messages);
        item.bypass_watermark = true; // the whole conversation every time
        manager.updater().update(item);
    }
    std::filesystem::remove_all(dir);
}
BENCHMARK(BM_memory_worker)->Arg(200)->Unit(benchmark::kMicrosecond);

void BM_memory_filter_prompt(benchmark::State& state) {
    const std::vector<message> conv = conversation(int(state.range(0)));
    const user_memory m = hundred_facts();
    for (auto _ : state) {
        auto filtered = filter_messages_for_memory(conv);
        auto signals = detect_memory_signals(filtered);
        benchmark::DoNotOptimize(memory_update_prompt(m, filtered, signals));
    }
}
BENCHMARK(BM_memory_filter_prompt)->Arg(200)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
