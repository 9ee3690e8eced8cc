// checkpointer: what one save of a thread costs as its history grows.
//   BM_save/{whole_file,append}/{10,10000}  one save after a round that added
//       one message, with 10 or 10,000 messages of history before it:
//       file_checkpointer (rewrites the whole state: serialise, write a
//       temporary file, fsync, rename, fsync the directory) beside
//       append_file_checkpointer (compares the last messages, appends the new
//       one and fdatasyncs). Files under /tmp; every 64 saves the history is
//       reset to its size (not timed), so the size measured stays the size
//       named.
//   BM_save_result/{10,10000}  append_file_checkpointer recording one tool
//       call's result as the call completes (what an agent writes per call).
#include <agentware/agent/append_checkpointer.hpp>
#include <agentware/agent/file_checkpointer.hpp>

#include <benchmark/benchmark.h>

#include <boost/json/src.hpp>

#include <filesystem>
#include <random>
#include <string>

using namespace agentware;

namespace {

boost::json::object bench_message(std::size_t i) {
    return boost::json::object{
        {"type", i % 2 ? "ai" : "human"},
        {"id", "msg-" + std::to_string(i)},
        {"content", "A message of typical length in a conversation with an agent, number " +
                        std::to_string(i) +
                        ", which says what it has to say in a sentence or two and then stops."}};
}

boost::json::value history(std::size_t n) {
    boost::json::array ms;
    for (std::size_t i = 0; i < n; ++i)
        ms.push_back(bench_message(i));
    return boost::json::object{{"messages", std::move(ms)}, {"todos", boost::json::array{}}};
}

std::filesystem::path bench_dir(const char* what) {
    std::random_device rd;
    auto dir = std::filesystem::temp_directory_path() /
               ("agentware-bench-" + std::string(what) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(dir);
    return dir;
}

template <class Checkpointer>
void save_loop(benchmark::State& st, Checkpointer& cp) {
    const auto n = static_cast<std::size_t>(st.range(0));
    boost::json::value state = history(n);
    auto& ms = state.as_object()["messages"].as_array();
    cp.save("t", state);
    std::size_t since_reset = 0;
    for (auto _ : st) {
        if (++since_reset == 64) {
            st.PauseTiming();
            ms.resize(n);
            if constexpr (requires { cp.save_snapshot("t", state); })
                cp.save_snapshot("t", state);
            else
                cp.save("t", state);
            since_reset = 1;
            st.ResumeTiming();
        }
        ms.push_back(bench_message(ms.size()));
        cp.save("t", state);
    }
}

void BM_save_whole_file(benchmark::State& st) {
    const auto dir = bench_dir("whole");
    file_checkpointer cp(dir);
    save_loop(st, cp);
    std::filesystem::remove_all(dir);
}

void BM_save_append(benchmark::State& st) {
    const auto dir = bench_dir("append");
    append_file_checkpointer cp(dir);
    save_loop(st, cp);
    std::filesystem::remove_all(dir);
}

void BM_save_result(benchmark::State& st) {
    const auto dir = bench_dir("result");
    append_file_checkpointer cp(dir);
    const auto n = static_cast<std::size_t>(st.range(0));
    const boost::json::value state = history(n);
    cp.save("t", state);
    const boost::json::value result = boost::json::object{
        {"type", "tool"}, {"tool_call_id", "call_1"}, {"content", "the tool's answer, a line of text"}};
    std::size_t since_reset = 0;
    for (auto _ : st) {
        if (++since_reset == 64) {
            st.PauseTiming();
            cp.save_snapshot("t", state);
            since_reset = 1;
            st.ResumeTiming();
        }
        cp.save_result("t", result);
    }
    std::filesystem::remove_all(dir);
}

} // namespace

BENCHMARK(BM_save_whole_file)->Name("BM_save/whole_file")->Arg(10)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_save_append)->Name("BM_save/append")->Arg(10)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_save_result)->Arg(10)->Arg(10000)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
