// delegation: the framework's cost of one `task` delegation (issue 16) beside
// a plain run of the same agent, and 1,000 delegations at once.
//
// The cost: the subagent's model is scripted (it answers at once), so the
// measured time is the framework's: resolving the type, building the
// subagent's chain and state, one model round, classifying the result and the
// result text. Variants, for the bare subagent chain (subagent_shared_fields)
// and DeerFlow's subagent chain from configuration
// (make_deerflow_subagent_runner, with its default token budget):
//   plain_round       one round of an agent with the same chain and model, on
//                     a fresh state (the agent itself made once);
//   plain_round_async the same round in async_run (the loop a subagent runs in);
//   fresh_agent_round the floor of a delegation: the subagent runner alone (a
//                     fresh agent, chain and state, one round in async_run);
//   task_tool_blocking the task tool as the blocking loop calls it
//                     (tool_interface::call, which keeps its io_context);
//   task_tool_async   the task tool as async_run calls it, on the run's io_context;
//   task_tool_async_listened  the same with a listener on the run's events
//                     (task_started, task_running per step, task_completed);
//   noop_tool_blocking, noop_tool_async  a tool that answers at once, called
//                     as the task tool is: what those calls cost any tool.
// Ratios to plain_round are computed from the CPU-time medians (see
// docs/benchmarks.md).
//
// The fan-out: 1,000 task calls in one answer of a parent agent in async_run
// on one thread, each subagent's model waiting 100 ms on a timer, with
// max_concurrent raised to 1,000; beside it, one delegation alone. Reported:
// the wall time and the heap in use per delegation when all of them wait
// (glibc's mallinfo2, less the heap before the run).
#include <agentware/agent/agent.hpp>
#include <agentware/agent/async_loop.hpp>
#include <agentware/model/scripted_model.hpp>
#include <agentware/presets/subagent_chain.hpp>
#include <agentware/src.hpp>
#include <agentware/subagents/executor.hpp>
#include <agentware/subagents/task_tool.hpp>

#include <benchmark/benchmark.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <malloc.h>

#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace agentware;

any_chat_model answering_model() {
    scripted_model::options o;
    o.record_requests = false;
    o.cycle = true;
    return any_chat_model(scripted_model({ai_message("done")}, o));
}

// What a delegation's model factory hands out: a handle on a client made once,
// as `model_named` does with a provider's client (a scripted model copied per
// delegation would add its script's copies to what is measured).
struct shared_model {
    std::shared_ptr<any_chat_model> client;
    model_response invoke(const chat_request& r) { return client->invoke(r); }
};

any_chat_model answering_model_handle() {
    static const auto client = std::make_shared<any_chat_model>(answering_model());
    return any_chat_model(shared_model{client});
}

const boost::json::value deerflow_config = boost::json::parse(
    R"({"dangling_tool_call": true, "tool_error_handling": true, "loop_detection": true,
        "safety_finish_reason": true, "durable_context": true, "system_message_coalescing": true})");

subagent_runner bare_runner() {
    return make_subagent_runner([] { return pipeline<subagent_shared_fields>{}; });
}
subagent_runner deerflow_runner() { return make_deerflow_subagent_runner(deerflow_config); }

template <class Pipeline, class Make>
void plain_round(benchmark::State& st, Make make) {
    agent<any_chat_model, Pipeline> a(answering_model(), {}, make());
    for (auto _ : st) {
        typename agent<any_chat_model, Pipeline>::state_type state;
        state.messages.push_back(system_message("You are a subagent."));
        run_result r = a.run(state, agent_input(human_message("Find it.")));
        benchmark::DoNotOptimize(r);
    }
}

template <class T>
T run_on(boost::asio::io_context& io, boost::asio::awaitable<T> call);

// The same round in async_run, the loop a delegation runs its subagent in.
template <class Pipeline, class Make>
void plain_round_async(benchmark::State& st, Make make) {
    agent<any_chat_model, Pipeline> a(answering_model(), {}, make());
    boost::asio::io_context io;
    for (auto _ : st) {
        typename agent<any_chat_model, Pipeline>::state_type state;
        state.messages.push_back(system_message("You are a subagent."));
        run_result r = run_on(io, a.async_run(state, agent_input(human_message("Find it."))));
        benchmark::DoNotOptimize(r);
    }
}

template <class T>
T run_on(boost::asio::io_context& io, boost::asio::awaitable<T> call) {
    io.restart();
    std::optional<T> out;
    boost::asio::co_spawn(io, std::move(call), [&](std::exception_ptr e, T r) {
        if (e) std::rethrow_exception(e);
        out = std::move(r);
    });
    io.run();
    return std::move(*out);
}

void fresh_agent_round(benchmark::State& st, subagent_runner runner) {
    boost::asio::io_context io;
    subagent_type type = general_purpose_subagent();
    for (auto _ : st) {
        subagent_run run;
        run.task_id = "call_1";
        run.type = type;
        run.model = answering_model_handle();
        run.input = {system_message("You are a subagent."), human_message("Find it.")};
        run.config.recursion_limit = type.max_turns;
        subagent_run_outcome out = run_on(io, runner(std::move(run)));
        benchmark::DoNotOptimize(out);
    }
}

std::shared_ptr<tool_interface> task_tool_with(subagent_runner runner) {
    subagent_executor_options o;
    o.config.agents["general-purpose"].model = "sub";
    o.model_named = [](std::string_view) { return answering_model_handle(); };
    o.runner = std::move(runner);
    return make_task_tool(std::make_shared<subagent_executor>(std::move(o)));
}

const boost::json::object task_args{
    {"description", "look"}, {"prompt", "Find it."}, {"subagent_type", "general-purpose"}};

// An asynchronous tool that answers at once: measured through the same calls as
// the task tool, it is what any tool call costs there (the coroutine, the
// io_context's run, the blocking runner), which is not the delegation's.
struct noop_tool {
    const tool_schema& schema() const {
        static const tool_schema s{"noop", "Answers at once.", boost::json::object{}};
        return s;
    }
    boost::asio::awaitable<tool_output> async_call(const boost::json::object&, const tool_runtime&) {
        co_return tool_output("Task Succeeded. Result: done");
    }
};

void task_tool_blocking(benchmark::State& st, std::shared_ptr<tool_interface> tool) {
    const boost::json::object context;
    for (auto _ : st) {
        tool_runtime rt;
        rt.thread_id = "t";
        rt.run_id = "r";
        rt.tool_call_id = "call_1";
        rt.context = &context;
        tool_output out = tool->call(task_args, rt);
        benchmark::DoNotOptimize(out);
    }
}

void task_tool_blocking(benchmark::State& st, subagent_runner runner) {
    task_tool_blocking(st, task_tool_with(std::move(runner)));
}

void task_tool_async(benchmark::State& st, std::shared_ptr<tool_interface> tool, bool listened) {
    const boost::json::object context;
    std::size_t events = 0;
    const event_sink::listener listener = [&events](const boost::json::object&) { ++events; };
    boost::asio::io_context io;
    for (auto _ : st) {
        tool_runtime rt;
        rt.thread_id = "t";
        rt.run_id = "r";
        rt.tool_call_id = "call_1";
        rt.context = &context;
        if (listened) rt.events = event_sink(&listener);
        tool_output out = run_on(io, tool->async_call(task_args, rt));
        benchmark::DoNotOptimize(out);
    }
    benchmark::DoNotOptimize(events);
}

void task_tool_async(benchmark::State& st, subagent_runner runner, bool listened) {
    task_tool_async(st, task_tool_with(std::move(runner)), listened);
}

void BM_noop_tool_blocking(benchmark::State& st) { task_tool_blocking(st, share_tool(noop_tool{})); }
void BM_noop_tool_async(benchmark::State& st) { task_tool_async(st, share_tool(noop_tool{}), false); }

void BM_plain_round_bare(benchmark::State& st) {
    plain_round<pipeline<subagent_shared_fields>>(st, [] { return pipeline<subagent_shared_fields>{}; });
}
void BM_plain_round_async_bare(benchmark::State& st) {
    plain_round_async<pipeline<subagent_shared_fields>>(st,
                                                        [] { return pipeline<subagent_shared_fields>{}; });
}
void BM_fresh_agent_round_bare(benchmark::State& st) { fresh_agent_round(st, bare_runner()); }
void BM_task_tool_blocking_bare(benchmark::State& st) { task_tool_blocking(st, bare_runner()); }
void BM_task_tool_async_bare(benchmark::State& st) { task_tool_async(st, bare_runner(), false); }
void BM_task_tool_async_listened_bare(benchmark::State& st) { task_tool_async(st, bare_runner(), true); }

void BM_plain_round_deerflow(benchmark::State& st) {
    plain_round<subagent_pipeline>(
        st, [] { return make_subagent_pipeline(deerflow_config, general_purpose_subagent()); });
}
void BM_plain_round_async_deerflow(benchmark::State& st) {
    plain_round_async<subagent_pipeline>(
        st, [] { return make_subagent_pipeline(deerflow_config, general_purpose_subagent()); });
}
void BM_fresh_agent_round_deerflow(benchmark::State& st) { fresh_agent_round(st, deerflow_runner()); }
void BM_task_tool_blocking_deerflow(benchmark::State& st) { task_tool_blocking(st, deerflow_runner()); }
void BM_task_tool_async_deerflow(benchmark::State& st) { task_tool_async(st, deerflow_runner(), false); }
void BM_task_tool_async_listened_deerflow(benchmark::State& st) {
    task_tool_async(st, deerflow_runner(), true);
}

// --- 1,000 at once -------------------------------------------------------

// Counts the subagents' model calls that wait, and notes the heap in use when
// the last expected one starts waiting.
struct fan_out_probe {
    std::size_t expected = 0;
    std::size_t waiting = 0;
    std::size_t heap_at_peak = 0;
};

// A model that answers after `delay` on a timer: it holds no thread meanwhile.
struct waiting_model {
    std::chrono::milliseconds delay{100};
    std::shared_ptr<fan_out_probe> probe;

    model_response invoke(const chat_request&) {
        throw std::logic_error("waiting_model is asynchronous only");
    }
    boost::asio::awaitable<model_response> async_invoke(const chat_request&) {
        boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, delay);
        if (++probe->waiting == probe->expected) probe->heap_at_peak = mallinfo2().uordblks;
        co_await t.async_wait(boost::asio::use_awaitable);
        --probe->waiting;
        co_return model_response{ai_message("done"), {}};
    }
};

void BM_concurrent_delegations(benchmark::State& st) {
    const auto n = static_cast<std::size_t>(st.range(0));
    auto probe = std::make_shared<fan_out_probe>();
    probe->expected = n;
    subagent_executor_options o;
    o.config.max_concurrent = n;
    o.config.agents["general-purpose"].model = "sub";
    o.model_named = [probe](std::string_view) {
        return any_chat_model(waiting_model{std::chrono::milliseconds(100), probe});
    };
    auto executor = std::make_shared<subagent_executor>(std::move(o));
    std::vector<tool_call> calls;
    for (std::size_t i = 0; i < n; ++i)
        calls.push_back(tool_call{"call_" + std::to_string(i), "task", task_args});
    double per_delegation = 0;
    std::size_t completed = 0;
    for (auto _ : st) {
        st.PauseTiming();
        agent<scripted_model, pipeline<subagent_shared_fields>> lead(
            scripted_model({ai_message("", calls), ai_message("all done")}), tool_set(task_tool(executor)));
        boost::asio::io_context io(1);
        const std::size_t heap_before = mallinfo2().uordblks;
        probe->heap_at_peak = 0;
        st.ResumeTiming();
        auto r = run_on(io, lead.async_invoke("go"));
        st.PauseTiming();
        completed = 0;
        for (const auto& m : r.state.messages)
            if (m.is_tool() && m.text().starts_with("Task Succeeded")) ++completed;
        if (completed != n) st.SkipWithError("not every delegation completed");
        per_delegation = static_cast<double>(probe->heap_at_peak - heap_before) / static_cast<double>(n);
        st.ResumeTiming();
    }
    st.counters["heap_per_delegation_kb"] = per_delegation / 1024.0;
    st.counters["completed"] = static_cast<double>(completed);
}

} // namespace

BENCHMARK(BM_noop_tool_blocking);
BENCHMARK(BM_noop_tool_async);
BENCHMARK(BM_plain_round_bare);
BENCHMARK(BM_plain_round_async_bare);
BENCHMARK(BM_fresh_agent_round_bare);
BENCHMARK(BM_task_tool_blocking_bare);
BENCHMARK(BM_task_tool_async_bare);
BENCHMARK(BM_task_tool_async_listened_bare);
BENCHMARK(BM_plain_round_deerflow);
BENCHMARK(BM_plain_round_async_deerflow);
BENCHMARK(BM_fresh_agent_round_deerflow);
BENCHMARK(BM_task_tool_blocking_deerflow);
BENCHMARK(BM_task_tool_async_deerflow);
BENCHMARK(BM_task_tool_async_listened_deerflow);
BENCHMARK(BM_concurrent_delegations)
    ->Arg(1)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);
BENCHMARK_MAIN();
