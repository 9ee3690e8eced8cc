// delegation: the framework's cost of one `task` delegation (issue 16) beside
// a plain run of the same agent. The subagent's model is scripted (it answers
// at once), so the measured time is the framework's: resolving the type,
// building the subagent's chain and state, one model round, classifying the
// result, the progress events and the result text. The plain run is one
// round of an agent with the same chain and model, on a fresh state.
//
// Variants: the bare subagent chain (subagent_shared_fields) and DeerFlow's
// subagent chain from configuration (make_deerflow_subagent_runner, with its
// default token budget). The `per_plain_round` counter of the delegation
// benchmarks is the ratio to BM_plain_round of the same chain (set by the
// plain benchmark run first).
#include <agentware/agent/agent.hpp>
#include <agentware/agent/async_loop.hpp>
#include <agentware/model/scripted_model.hpp>
#include <agentware/src.hpp>
#include <agentware/subagents/chain.hpp>
#include <agentware/subagents/executor.hpp>

#include <benchmark/benchmark.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>

#include <chrono>
#include <exception>
#include <memory>
#include <optional>

namespace {

using namespace agentware;

any_chat_model answering_model() {
    scripted_model::options o;
    o.record_requests = false;
    o.cycle = true;
    return any_chat_model(scripted_model({ai_message("done")}, o));
}

double plain_ns[2] = {0, 0}; // per chain: the plain round's time, for the ratio

template <class Pipeline, class Make>
void plain_round(benchmark::State& st, Make make, int which) {
    agent<any_chat_model, Pipeline> a(answering_model(), {}, make());
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : st) {
        typename agent<any_chat_model, Pipeline>::state_type state;
        state.messages.push_back(system_message("You are a subagent."));
        run_result r = a.run(state, agent_input(human_message("Find it.")));
        benchmark::DoNotOptimize(r);
    }
    const auto ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    plain_ns[which] = ns / static_cast<double>(st.iterations());
}

// `shared_io`: every delegation on one io_context (as in async_run, on the
// run's executor); otherwise each on an io_context of its own (as the
// blocking loop's task tool does).
void delegation(benchmark::State& st, subagent_runner runner, int which, bool shared_io = false) {
    subagent_executor_options o;
    o.config.agents["general-purpose"].model = "sub";
    o.model_named = [](std::string_view) { return answering_model(); };
    o.runner = std::move(runner);
    auto executor = std::make_shared<subagent_executor>(std::move(o));
    const auto start = std::chrono::steady_clock::now();
    boost::asio::io_context shared;
    for (auto _ : st) {
        std::optional<boost::asio::io_context> own;
        if (!shared_io) own.emplace();
        boost::asio::io_context& io = shared_io ? shared : *own;
        if (shared_io) io.restart();
        std::optional<subagent_result> out;
        boost::asio::co_spawn(io, executor->execute({"call_1", "look", "Find it.", "general-purpose"}, {}),
                              [&](std::exception_ptr e, subagent_result r) {
                                  if (e) std::rethrow_exception(e);
                                  out = std::move(r);
                              });
        io.run();
        std::string text = format_subagent_result_message(*out);
        benchmark::DoNotOptimize(text);
    }
    const auto ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    if (plain_ns[which] > 0)
        st.counters["per_plain_round"] = ns / static_cast<double>(st.iterations()) / plain_ns[which];
}

void BM_plain_round_bare(benchmark::State& st) {
    plain_round<pipeline<subagent_shared_fields>>(
        st, [] { return pipeline<subagent_shared_fields>{}; }, 0);
}
void BM_task_delegation_bare(benchmark::State& st) {
    delegation(st, make_subagent_runner([] { return pipeline<subagent_shared_fields>{}; }), 0);
}

const boost::json::value deerflow_config = boost::json::parse(
    R"({"dangling_tool_call": true, "tool_error_handling": true, "loop_detection": true,
        "safety_finish_reason": true, "durable_context": true, "system_message_coalescing": true})");

void BM_task_delegation_bare_shared_io(benchmark::State& st) {
    delegation(st, make_subagent_runner([] { return pipeline<subagent_shared_fields>{}; }), 0, true);
}

void BM_plain_round_deerflow(benchmark::State& st) {
    plain_round<subagent_pipeline>(
        st, [] { return make_subagent_pipeline(deerflow_config, general_purpose_subagent()); }, 1);
}
void BM_task_delegation_deerflow(benchmark::State& st) {
    delegation(st, make_deerflow_subagent_runner(deerflow_config), 1);
}
void BM_task_delegation_deerflow_shared_io(benchmark::State& st) {
    delegation(st, make_deerflow_subagent_runner(deerflow_config), 1, true);
}

} // namespace

BENCHMARK(BM_plain_round_bare);
BENCHMARK(BM_task_delegation_bare);
BENCHMARK(BM_task_delegation_bare_shared_io);
BENCHMARK(BM_plain_round_deerflow);
BENCHMARK(BM_task_delegation_deerflow);
BENCHMARK(BM_task_delegation_deerflow_shared_io);
BENCHMARK_MAIN();
