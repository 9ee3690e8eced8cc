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
//   BM_save/{postgres,langgraph_postgres}/{10,10000}  one save after a round
//       that added a message, on a PostgreSQL 15 server of the benchmark's own
//       (tests/support/postgres_server.hpp): a save as a run of `agentware
//       serve --database` makes it (its state brought up to the agent's, the
//       change written by server::postgres_store) beside LangGraph's
//       PostgresSaver (@langchain/langgraph-checkpoint-postgres,
//       benchmarks/server/checkpoint_postgres.mjs, in node: one `put` with the
//       messages channel). Every 64 saves the history starts again at its size.
//   BM_save/postgres_whole_state/{10,10000}  the store given the whole state
//       instead (a client's state update, a fork).
//   BM_bytes_per_round/{postgres,langgraph_postgres}  a thread of 1,000 rounds
//       (two messages and one checkpoint each) written from empty in a fresh
//       database: the tables' size on disk afterwards (pg_total_relation_size,
//       TOAST and indexes included) per round, in the counter `bytes_per_round`.
//   The LangGraph side needs benchmarks/server/install.sh (npm); without it it
//   is skipped with a note.
#include <agentware/agent/agent.hpp>
#include <agentware/agent/append_checkpointer.hpp>
#include <agentware/agent/file_checkpointer.hpp>
#include <agentware/model/scripted_model.hpp>
#include <agentware/src.hpp>
#include <agentware/tool/make_tool.hpp>

#include <benchmark/benchmark.h>

#if AGENTWARE_BENCH_POSTGRES
#include "../tests/support/postgres_server.hpp"
#include "skipped.hpp"

#include <agentware/postgres/pool_thread.hpp>
#include <agentware/server/detail/saved_state.hpp>
#include <agentware/server/postgres_schema.hpp>
#include <agentware/server/postgres_store.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#endif

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

#if AGENTWARE_BENCH_POSTGRES
// --- PostgreSQL -------------------------------------------------------------

// A fresh database on the benchmark's own server, and a pool on a thread of its own.
struct bench_database {
    std::string name;
    std::string conninfo;
    std::unique_ptr<postgres::pool_thread> pool;

    explicit bench_database(const std::string& what) {
        static int made = 0;
        auto& server = test::postgres_server::shared();
        name = "bench_" + what + "_" + std::to_string(::getpid()) + "_" + std::to_string(++made);
        {
            postgres::pool_thread admin(postgres::pool_options{.conninfo = server.conninfo(), .size = 1});
            admin.wait(admin.query("CREATE DATABASE " + name));
        }
        conninfo = server.conninfo(name);
        pool =
            std::make_unique<postgres::pool_thread>(postgres::pool_options{.conninfo = conninfo, .size = 2});
    }
    /// node-postgres's form of the same database (Unix socket folder as host).
    std::string uri() const {
        return "postgresql://agentware@/" + name +
               "?host=" + test::postgres_server::shared().socket_dir().string();
    }
    std::size_t bytes_on_disk(const std::vector<std::string>& tables) {
        std::string sql = "SELECT (0";
        for (const auto& t : tables)
            sql += " + coalesce(pg_total_relation_size(to_regclass('" + t + "')), 0)";
        sql += ")::bigint AS n";
        auto r = pool->wait(pool->query(sql));
        return static_cast<std::size_t>(r.as<std::int64_t>(0, "n"));
    }
};

boost::json::object pg_checkpoint(const std::string& thread_id, std::size_t step, boost::json::value values) {
    boost::json::object c;
    c["checkpoint_id"] = thread_id + "-" + std::to_string(step);
    c["parent_checkpoint_id"] = step == 0 ? boost::json::value(nullptr)
                                          : boost::json::value(thread_id + "-" + std::to_string(step - 1));
    c["thread_id"] = thread_id;
    c["run_id"] = "run-" + thread_id;
    c["created_at"] = "2026-11-29T00:00:00Z";
    c["step"] = step;
    c["source"] = "loop";
    c["metadata"] = boost::json::object{{"step", step}};
    c["values"] = std::move(values);
    return c;
}

// One save as a run of `agentware serve --database` makes it (run_execution):
// the agent's state seen through a view, the run's saved state brought up to
// it (the new message converted, the last 32 compared), and the change
// written as the thread's next checkpoint. `whole_state`: the same save
// handing the store the whole state instead, as a client's state update or
// a fork does (the store compares and writes the delta, and frees the state
// it replaced).
void save_postgres(benchmark::State& st, bool whole_state) {
    const auto n = static_cast<std::size_t>(st.range(0));
    try {
        bench_database db("save");
        db.pool->wait(server::postgres_schema::migrate(db.pool->db()));
        server::postgres_store store(db.pool->db(), db.pool->executor());
        boost::json::value state = history(n);
        auto& agent_state = state.as_object();
        auto& ms = agent_state["messages"].as_array();
        boost::json::value saved; // the run's copy of what it saved last
        std::vector<boost::json::value> no_results;
        std::size_t thread = 0, step = 0, since_reset = 64;
        std::string thread_id;
        for (auto _ : st) {
            if (since_reset == 64) { // a new thread at the size named (its first save not timed)
                ms.resize(n);
                thread_id = "t" + std::to_string(++thread);
                step = 0;
                saved = state;
                db.pool->wait(store.add_checkpoint(pg_checkpoint(thread_id, step++, state)));
                since_reset = 0;
            }
            ++since_reset;
            ms.push_back(bench_message(ms.size()));
            if (whole_state) {
                auto record =
                    pg_checkpoint(thread_id, step++, state); // the caller's copy: not the store's cost
                const auto start = std::chrono::steady_clock::now();
                db.pool->wait(store.add_checkpoint(std::move(record)));
                st.SetIterationTime(
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
                continue;
            }
            const auto start = std::chrono::steady_clock::now();
            auto changes = server::detail::advance_saved_state(
                saved.as_object(), no_results, agentware::detail::json_state_view(agent_state, ms));
            auto record = pg_checkpoint(thread_id, step++, nullptr);
            record.erase("values");
            record["changes"] = std::move(changes);
            db.pool->wait(store.add_checkpoint(std::move(record)));
            st.SetIterationTime(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
    } catch (const std::exception& e) {
        st.SkipWithError(e.what());
    }
}

void BM_save_postgres(benchmark::State& st) { save_postgres(st, false); }
void BM_save_postgres_whole_state(benchmark::State& st) { save_postgres(st, true); }

// Runs benchmarks/server/checkpoint_postgres.mjs with `args`; its JSON line, or nothing when not installed.
std::optional<boost::json::object> langgraph_saver(benchmark::State& st, const std::string& args) {
    const std::filesystem::path dir = AGENTWARE_CHECKPOINT_BENCH_JS_DIR;
    if (!std::filesystem::exists(dir / "node_modules/@langchain/langgraph-checkpoint-postgres")) {
        const std::string note = "skipped: @langchain/langgraph-checkpoint-postgres is not installed "
                                 "(benchmarks/server/install.sh)";
        bench::skip_with_note(st, "checkpointer_bench", note);
        return std::nullopt;
    }
    const std::string command = "cd '" + dir.string() + "' && node checkpoint_postgres.mjs " + args;
    std::FILE* out = ::popen(command.c_str(), "r");
    if (out == nullptr) throw std::runtime_error("cannot run node");
    std::string text;
    char buffer[4096];
    while (std::fgets(buffer, sizeof buffer, out) != nullptr)
        text += buffer;
    const int status = ::pclose(out);
    if (status != 0) throw std::runtime_error("checkpoint_postgres.mjs " + args + " failed: " + text);
    return boost::json::parse(text).as_object();
}

void BM_save_langgraph_postgres(benchmark::State& st) {
    const auto n = static_cast<std::size_t>(st.range(0));
    try {
        bench_database db("langgraph_save");
        // Saves in rounds of 64 on a fresh thread, as ours.
        const std::size_t saves = n >= 10000 ? 64 : 256;
        const auto figures =
            langgraph_saver(st, "save '" + db.uri() + "' " + std::to_string(n) + " " + std::to_string(saves));
        for (auto _ : st)
            st.SetIterationTime(figures ? figures->at("us_per_save").to_number<double>() / 1e6 : 0);
    } catch (const std::exception& e) {
        st.SkipWithError(e.what());
    }
}

constexpr std::size_t long_thread_rounds = 1000;

void BM_bytes_per_round_postgres(benchmark::State& st) {
    try {
        bench_database db("bytes");
        db.pool->wait(server::postgres_schema::migrate(db.pool->db()));
        server::postgres_store store(db.pool->db(), db.pool->executor());
        const std::vector<std::string> tables{"agentware_checkpoints"};
        const std::size_t before = db.bytes_on_disk(tables);
        boost::json::value state = history(0);
        auto& ms = state.as_object()["messages"].as_array();
        const auto start = std::chrono::steady_clock::now();
        for (std::size_t round = 0; round < long_thread_rounds; ++round) {
            ms.push_back(bench_message(ms.size()));
            ms.push_back(bench_message(ms.size()));
            db.pool->wait(store.add_checkpoint(pg_checkpoint("long", round, state)));
        }
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double bytes = static_cast<double>(db.bytes_on_disk(tables) - before);
        for (auto _ : st)
            st.SetIterationTime(seconds / long_thread_rounds);
        st.counters["bytes_per_round"] = bytes / long_thread_rounds;
    } catch (const std::exception& e) {
        st.SkipWithError(e.what());
    }
}

void BM_bytes_per_round_langgraph_postgres(benchmark::State& st) {
    try {
        bench_database db("langgraph_bytes");
        const auto figures =
            langgraph_saver(st, "bytes '" + db.uri() + "' " + std::to_string(long_thread_rounds));
        for (auto _ : st)
            st.SetIterationTime(figures ? figures->at("us_per_round").to_number<double>() / 1e6 : 0);
        if (figures) st.counters["bytes_per_round"] = figures->at("bytes_per_round").to_number<double>();
    } catch (const std::exception& e) {
        st.SkipWithError(e.what());
    }
}
#endif

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

#if AGENTWARE_BENCH_POSTGRES
BENCHMARK(BM_save_postgres)
    ->Name("BM_save/postgres")
    ->Arg(10)
    ->Arg(10000)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_save_postgres_whole_state)
    ->Name("BM_save/postgres_whole_state")
    ->Arg(10)
    ->Arg(10000)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_save_langgraph_postgres)
    ->Name("BM_save/langgraph_postgres")
    ->Arg(10)
    ->Arg(10000)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_bytes_per_round_postgres)
    ->Name("BM_bytes_per_round/postgres")
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_bytes_per_round_langgraph_postgres)
    ->Name("BM_bytes_per_round/langgraph_postgres")
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
#endif

BENCHMARK_MAIN();
