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
//   BM_agent_invoke/{whole_file,append,append_whole_state}/{10,10000}  the
//       same saves made by an agent: one `invoke` whose model calls a tool that
//       answers at once, then answers, on a thread with 10 or 10,000 messages
//       of history. The time is the whole invoke (its load replays the
//       thread); the counters are the calling thread's CPU time of the parts:
//       `round_us` from the model's first call to its second (the tool round:
//       with a result checkpointer, the save before the calls and the call's
//       result), `end_save_us` from the model's last call to the end of the
//       invoke (the final save). `append_whole_state` is the append
//       checkpointer without `save_changes`: the agent converts its whole
//       state to JSON for every save, as it did before.
#include <agentware/agent/agent.hpp>
#include <agentware/agent/append_checkpointer.hpp>
#include <agentware/agent/file_checkpointer.hpp>
#include <agentware/model/scripted_model.hpp>
#include <agentware/src.hpp>
#include <agentware/tool/make_tool.hpp>

#include <benchmark/benchmark.h>

#include <ctime>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

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

// The calling thread's CPU time, in microseconds (the disk's fsync queue on a
// loaded machine is not the code's cost).
double thread_cpu_us() {
    ::timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// A scripted model that notes when it is called: each invoke asks for one
// call of `echo`, then answers.
struct timed_model {
    scripted_model inner;
    std::shared_ptr<std::vector<double>> calls;
    model_response invoke(const chat_request& request) {
        calls->push_back(thread_cpu_us());
        return inner.invoke(request);
    }
};

// A checkpointer shared by the agent and the benchmark (which resets the
// thread). With `Incremental` false, it hides `save_changes`: the agent then
// converts its whole state to JSON for each save, as it did before.
template <class C, bool Incremental = true>
struct shared_checkpointer {
    std::shared_ptr<C> cp;
    std::optional<boost::json::value> load(std::string_view id) const { return cp->load(id); }
    void save(std::string_view id, const boost::json::value& state) { cp->save(id, state); }
    void save_changes(std::string_view id, const state_view& state)
        requires(Incremental && incremental_checkpointer<C>)
    {
        cp->save_changes(id, state);
    }
    void save_result(std::string_view id, const boost::json::value& m)
        requires result_checkpointer<C>
    {
        cp->save_result(id, m);
    }
    bool erase(std::string_view id) { return cp->erase(id); }
    std::vector<std::string> list() const { return cp->list(); }
};
static_assert(incremental_checkpointer<shared_checkpointer<append_file_checkpointer>>);
static_assert(result_checkpointer<shared_checkpointer<append_file_checkpointer, false>> &&
              !incremental_checkpointer<shared_checkpointer<append_file_checkpointer, false>>);
static_assert(!result_checkpointer<shared_checkpointer<file_checkpointer>>);

// A history of `n` agent messages: turns of question, call, result, answer.
boost::json::value agent_history(std::size_t n) {
    agent_state<pipeline<>> s;
    for (std::size_t i = 0; s.messages.size() < n; ++i) {
        s.messages.push_back(
            human_message("question number " + std::to_string(i) + ", a sentence or two long"));
        boost::json::object args;
        args["text"] = "earlier call " + std::to_string(i);
        s.messages.push_back(ai_message("", {tool_call{"call-" + std::to_string(i), "echo", args}}));
        s.messages.push_back(
            tool_message("call-" + std::to_string(i), "echo", "earlier call " + std::to_string(i)));
        s.messages.push_back(
            ai_message("answer number " + std::to_string(i) + ", which says what it has to say"));
    }
    s.messages.resize(n);
    for (auto& m : s.messages)
        m.id = make_message_id();
    return boost::json::value_from(s);
}

template <class C, bool Incremental = true>
void agent_invoke_loop(benchmark::State& st, std::shared_ptr<C> cp) {
    const auto n = static_cast<std::size_t>(st.range(0));
    const boost::json::value seed = agent_history(n);
    auto reset = [&] {
        if constexpr (requires { cp->save_snapshot("t", seed); })
            cp->save_snapshot("t", seed);
        else
            cp->save("t", seed);
    };
    reset();
    auto calls = std::make_shared<std::vector<double>>();
    boost::json::object args;
    args["text"] = "ping";
    std::vector<message> script{ai_message("", {tool_call{"call-now", "echo", args}}), ai_message("done")};
    auto echo = make_tool("echo", "Repeats the text.", boost::json::object{},
                          [](const boost::json::object& a) { return std::string(a.at("text").as_string()); });
    auto a = make_agent(timed_model{scripted_model(script, {false, true}), calls}, tool_set(echo));
    a.use_checkpointer(shared_checkpointer<C, Incremental>{cp});
    run_config cfg;
    cfg.thread_id = "t";
    double round_us = 0;
    double end_save_us = 0;
    std::size_t since_reset = 0;
    for (auto _ : st) {
        if (++since_reset == 64) { // back to the size named (4 messages an invoke)
            st.PauseTiming();
            reset();
            since_reset = 1;
            st.ResumeTiming();
        }
        calls->clear();
        auto r = a.invoke("go", cfg);
        const double end = thread_cpu_us();
        if (!r.ok() || calls->size() != 2) {
            st.SkipWithError(("the invoke did not run one tool round: " + r.error).c_str());
            break;
        }
        round_us += (*calls)[1] - (*calls)[0];
        end_save_us += end - (*calls)[1];
    }
    st.counters["round_us"] = benchmark::Counter(round_us, benchmark::Counter::kAvgIterations);
    st.counters["end_save_us"] = benchmark::Counter(end_save_us, benchmark::Counter::kAvgIterations);
}

void BM_agent_invoke_whole_file(benchmark::State& st) {
    const auto dir = bench_dir("agent-whole");
    agent_invoke_loop(st, std::make_shared<file_checkpointer>(dir));
    std::filesystem::remove_all(dir);
}

void BM_agent_invoke_append(benchmark::State& st) {
    const auto dir = bench_dir("agent-append");
    agent_invoke_loop(st, std::make_shared<append_file_checkpointer>(dir));
    std::filesystem::remove_all(dir);
}

void BM_agent_invoke_append_whole_state(benchmark::State& st) {
    const auto dir = bench_dir("agent-append-whole");
    agent_invoke_loop<append_file_checkpointer, false>(st, std::make_shared<append_file_checkpointer>(dir));
    std::filesystem::remove_all(dir);
}

} // namespace

BENCHMARK(BM_save_whole_file)->Name("BM_save/whole_file")->Arg(10)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_save_append)->Name("BM_save/append")->Arg(10)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_save_result)->Arg(10)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_agent_invoke_whole_file)
    ->Name("BM_agent_invoke/whole_file")
    ->Arg(10)
    ->Arg(10000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_agent_invoke_append)
    ->Name("BM_agent_invoke/append")
    ->Arg(10)
    ->Arg(10000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_agent_invoke_append_whole_state)
    ->Name("BM_agent_invoke/append_whole_state")
    ->Arg(10)
    ->Arg(10000)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
