// agent_loop: the framework's cost per agent round — one model call that asks
// for one tool call, and that tool call — with the scripted model (which
// answers at once) and an echo tool, so nearly all measured time is the loop's
// own. Two pipelines (none; the 14 middlewares of hook_dispatch, here working
// on the real agent state) at history lengths of 10, 1,000 and 10,000 messages;
// beside them the coroutine loop, an 8 KB system prompt, and the floor: the
// message work of a round with no framework around it.
//
// Each iteration is one run of 100 rounds (99 with a tool call, then a final
// answer). The `per_round` counter is the time of one round.
#include <agentware/agent/agent.hpp>
#include <agentware/agent/async_loop.hpp>
#include <agentware/middleware/summarization.hpp>
#include <agentware/model/scripted_model.hpp>
#include <agentware/presets/deerflow.hpp>
#include <agentware/src.hpp>
#include <agentware/tool/make_tool.hpp>

#include <benchmark/benchmark.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>

namespace {

using namespace agentware;

constexpr std::size_t rounds_per_run = 100;

struct counter_field {
    static constexpr std::string_view name = "bench_counter";
    using value_type = std::uint64_t;
};

#define NODE(hook, id)                                                                                       \
    void hook(auto& s, runtime&) { get<counter_field>(s) = get<counter_field>(s) * 31 + id; }
#define WRAP(hook, id)                                                                                       \
    std::uint64_t hook##_count = 0;                                                                          \
    auto hook(auto& req, auto&& next) {                                                                      \
        hook##_count += id;                                                                                  \
        return next(req);                                                                                    \
    }
#define FIELDS using state_fields = fields<counter_field>;
struct thread_data {
    FIELDS NODE(before_agent, 0)
};
struct uploads {
    FIELDS NODE(before_agent, 1)
};
struct sandbox {
    FIELDS NODE(before_agent, 2) NODE(after_agent, 102)
};
struct dangling_tool_call {
    WRAP(wrap_model_call, 3)
};
struct guardrail {
    WRAP(wrap_tool_call, 4)
};
struct tool_error_handling {
    WRAP(wrap_tool_call, 5)
};
struct summarization {
    FIELDS NODE(before_model, 6)
};
struct todo {
    FIELDS NODE(before_model, 7) NODE(after_model, 107) WRAP(wrap_model_call, 207)
};
struct title {
    FIELDS NODE(after_model, 8)
};
struct memory {
    FIELDS NODE(after_agent, 9)
};
struct view_image {
    FIELDS NODE(before_model, 10)
};
struct subagent_limit {
    FIELDS NODE(after_model, 11)
};
struct loop_detection {
    FIELDS NODE(before_agent, 12) NODE(after_model, 112) NODE(after_agent, 212) WRAP(wrap_model_call, 312)
};
struct clarification {
    WRAP(wrap_tool_call, 13)
};
#undef NODE
#undef WRAP
#undef FIELDS

// The model's answers for one run: 99 tool calls, then a final answer; with
// `reported_usage`, each carries the token usage a provider reports.
std::vector<message> make_script(bool reported_usage = false) {
    std::vector<message> script;
    for (std::size_t i = 0; i + 1 < rounds_per_run; ++i) {
        boost::json::object args;
        args["text"] = "ping";
        // Providers give every call an id, as here (the agent makes one only for a model that does not).
        script.push_back(ai_message("", {tool_call{"call-" + std::to_string(i), "echo", std::move(args)}}));
    }
    script.push_back(ai_message("done"));
    if (reported_usage)
        for (message& m : script)
            m.provider.set_usage(token_usage{1000, 20, 1020});
    return script;
}

// A scripted model hands each prepared answer over (a cycling one copies it),
// so the rounds measure the loop, not the making of the model's answers.
scripted_model make_model(bool cycle = false) { return scripted_model(make_script(), {false, cycle}); }

constexpr std::string_view echo_parameters =
    R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})";

tool_set make_tools() {
    return tool_set(
        make_tool("echo", "Repeats the text.", echo_parameters,
                  [](const boost::json::object& args) { return std::string(args.at("text").as_string()); }));
}

// The same tool, asynchronous: the coroutine loop awaits it on its own thread.
tool_set make_async_tools() {
    return tool_set(make_tool("echo", "Repeats the text.", echo_parameters,
                              [](const boost::json::object& args) -> boost::asio::awaitable<std::string> {
                                  co_return std::string(args.at("text").as_string());
                              }));
}

// A history of `n` messages: turns of human, ai with a tool call, tool, ai.
template <class State>
State make_history(std::size_t n) {
    State s;
    for (std::size_t i = 0; s.messages.size() < n; ++i) {
        s.messages.push_back(human_message("question number " + std::to_string(i)));
        boost::json::object args;
        args["text"] = "earlier call " + std::to_string(i);
        s.messages.push_back(ai_message("", {tool_call{"call-" + std::to_string(i), "echo", args}}));
        s.messages.push_back(
            tool_message("call-" + std::to_string(i), "echo", "earlier call " + std::to_string(i)));
        s.messages.push_back(ai_message("answer number " + std::to_string(i)));
    }
    s.messages.resize(n);
    for (auto& m : s.messages)
        m.id = make_message_id();
    return s;
}

// How a run is started: the blocking loop, or the coroutine on an io_context
// (which then runs until the run is over, on this thread).
enum class loop_kind { blocking, coroutine };

// Out of line, so that callgrind can count a run alone (see docs/benchmarks.md).
template <class Agent>
[[gnu::noinline]] run_result run_once(Agent& a, typename Agent::state_type& state, const run_config& cfg,
                                      loop_kind kind, boost::asio::io_context& io) {
    if (kind == loop_kind::blocking) return a.run(state, "go", cfg);
    std::optional<run_result> out;
    std::exception_ptr failure;
    boost::asio::co_spawn(io, a.async_run(state, "go", cfg), [&](std::exception_ptr e, run_result r) {
        failure = e;
        out = std::move(r);
    });
    io.restart();
    io.run();
    if (failure) std::rethrow_exception(failure);
    return std::move(*out);
}

// Only the run is timed (manual timing: pausing the timer costs more than a
// round). Between runs the history is cut back to its starting length and
// (unless the model cycles) the model gets a fresh script.
template <class Agent>
void run_rounds(benchmark::State& bs, Agent& a, bool cycling_model = false,
                loop_kind kind = loop_kind::blocking, bool reported_usage = false) {
    boost::asio::io_context io;
    const auto history = static_cast<std::size_t>(bs.range(0));
    auto state = make_history<typename Agent::state_type>(history);
    state.messages.reserve(history + 2 * rounds_per_run + 2);
    const std::vector<message> script = make_script(reported_usage);
    run_config cfg;
    cfg.run_id = "bench";
    for (auto _ : bs) {
        const auto start = std::chrono::steady_clock::now();
        run_result r = run_once(a, state, cfg, kind, io);
        bs.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        if (r.rounds != rounds_per_run || !r.ok()) {
            const std::string why = "the run did not do the expected rounds (" + std::to_string(r.rounds) +
                                    " rounds; " + std::string(to_string(r.reason)) + " " + r.error + ")";
            bs.SkipWithError(why.c_str());
            break;
        }
        state.messages.resize(history);
        if (!cycling_model) a.model() = scripted_model(script, {false, false});
    }
    bs.counters["per_round"] = benchmark::Counter(static_cast<double>(bs.iterations() * rounds_per_run),
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    bs.counters["history"] = static_cast<double>(history);
}

void BM_agent_loop_no_middleware(benchmark::State& bs) {
    auto a = make_agent(make_model(), make_tools());
    run_rounds(bs, a);
}

// The coroutine loop (async_run) on an io_context on this thread. A blocking
// tool runs on the agent's pool, so each of its rounds crosses threads twice;
// an asynchronous tool is awaited on this thread.
void BM_agent_loop_no_middleware_coroutine_blocking_tool(benchmark::State& bs) {
    auto a = make_agent(make_model(), make_tools());
    run_rounds(bs, a, false, loop_kind::coroutine);
}

void BM_agent_loop_no_middleware_coroutine_async_tool(benchmark::State& bs) {
    auto a = make_agent(make_model(), make_async_tools());
    run_rounds(bs, a, false, loop_kind::coroutine);
}

// The same, with a model that copies each answer out of its script (as a
// model that builds its answer would): the difference is that copy.
void BM_agent_loop_no_middleware_copying_model(benchmark::State& bs) {
    auto a = make_agent(make_model(true), make_tools());
    run_rounds(bs, a, true);
}

auto make_agent_with_14_middlewares() {
    return make_agent(make_model(), make_tools(), thread_data{}, uploads{}, sandbox{}, dangling_tool_call{},
                      guardrail{}, tool_error_handling{}, summarization{}, todo{}, title{}, memory{},
                      view_image{}, subagent_limit{}, loop_detection{}, clarification{});
}

void BM_agent_loop_14_middlewares(benchmark::State& bs) {
    auto a = make_agent_with_14_middlewares();
    run_rounds(bs, a);
}

// The same with an 8 KB system prompt, the size of a real lead agent's. Its
// wrap_model_call hooks make the loop build a request each round; the request
// borrows the prompt, so the prompt's length should not show.
void BM_agent_loop_14_middlewares_8kb_prompt(benchmark::State& bs) {
    auto a = make_agent_with_14_middlewares();
    a.options().system_prompt = std::string(8192, 'p');
    run_rounds(bs, a);
}

// The floor under any agent loop built on agentware's message type: only the
// message work a round cannot skip, with no framework around it. The model's
// answer is moved out of the script and into the history under a fresh id; the
// echo tool's text becomes a tool message (the call's id and name copied, the
// text in one content block) that is appended the same way. No tool lookup, no
// argument validation, no lock, no hooks. The no-middleware loop's time divided
// by this one is what the framework adds.
// Out of line, so that callgrind can count it alone.
[[gnu::noinline]] void play_message_work(std::vector<message>& script, std::vector<message>& messages) {
    auto echo = [](const boost::json::object& args) { return std::string(args.at("text").as_string()); };
    for (message& answer : script) {
        model_response response{std::move(answer), {}};
        detail::append_message(messages, std::move(response.ai));
        const message& ai = messages.back();
        if (ai.tool_calls.empty()) break;
        const tool_call& call = ai.tool_calls.front();
        message tool;
        tool.type = role::tool;
        tool.set_tool_call_id(call.id);
        tool.name = call.name;
        tool.content.emplace_back().text = echo(call.args);
        detail::append_message(messages, std::move(tool));
    }
}

void BM_message_work_only(benchmark::State& bs) {
    const auto history = static_cast<std::size_t>(bs.range(0));
    auto state = make_history<agent_state<pipeline<>>>(history);
    state.messages.reserve(history + 2 * rounds_per_run + 2);
    const std::vector<message> prepared = make_script();
    for (auto _ : bs) {
        std::vector<message> script = prepared; // untimed, as the loop's fresh model is
        const auto start = std::chrono::steady_clock::now();
        play_message_work(script, state.messages);
        bs.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        if (state.messages.size() != history + 2 * rounds_per_run - 1) {
            bs.SkipWithError("the rounds did not append the expected messages");
            break;
        }
        state.messages.resize(history);
    }
    bs.counters["per_round"] = benchmark::Counter(static_cast<double>(bs.iterations() * rounds_per_run),
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    bs.counters["history"] = static_cast<double>(history);
}

// The real summarization middleware with a trigger that does not fire (a
// token threshold far above any history): LangChain recounts the history's
// tokens before every call; ours keeps a running total, so a round should cost
// the same at 10 and 10,000 messages. Its before_model is a coroutine hook,
// which the blocking loop runs to its end on a private io_context each round.
void BM_agent_loop_summarization(benchmark::State& bs) {
    agentware::summarization_options o;
    o.trigger = {{agentware::context_size::kind::tokens, 1e12}};
    auto a = make_agent(make_model(), make_tools(), agentware::summarization(o));
    run_rounds(bs, a);
}

// DeerFlow's whole lead chain (include/agentware/presets/deerflow.hpp) with
// every optional slot engaged, as a scenario of the replay would build it:
// thread directories and the sandbox under a temporary directory, memory with
// its manager (no background worker: each run's conversation is queued, and
// the queue keeps the latest one per thread), dynamic_context reading that
// manager, and scripted helper models for summarization and title. The limits
// that would end a run of 99 identical echo calls (loop detection, call
// limits, the token budget) are set above it, so that every hook runs every
// round and the run does its 100 rounds; summarization's token trigger does
// not fire. The model's answers carry reported usage, as a provider's do (an
// answer without it is estimated by token_accounting and token_budget from
// the whole request, which costs in proportion to the history).
constexpr std::string_view lead_chain_sections = R"({
    "input_sanitization": true, "tool_output": true, "tool_result_sanitization": true,
    "pii_redaction": {"enabled": true}, "thread_data": true, "uploads": true, "sandbox": true, "dangling_tool_call": true,
    "llm_call": true, "guardrails": true, "sandbox_audit": true, "read_before_write": true,
    "tool_error_handling": true, "dynamic_context": true,
    "summarization": {"trigger": [{"type": "tokens", "value": 1000000000000}]},
    "durable_context": true, "todo": true, "token_usage": true, "title": true,
    "memory": {"backend_config": {"storage_path": ""}}, "view_image": true,
    "system_message_coalescing": true, "subagents": true,
    "loop_detection": {"warn_threshold": 1000, "hard_limit": 1000, "tool_freq_warn": 1000,
                       "tool_freq_hard_limit": 1000},
    "token_budget": {"max_tokens": 1000000000000}, "terminal_response": true, "model_length_finish_reason": true,
    "safety_finish_reason": true, "pii": {"rules": [{"pii_type": "email"}]}, "context_editing": true,
    "model_call_limit": {"run_limit": 1000}, "tool_call_limit": {"run_limit": 1000}, "clarification": true,
    "moderation": {"check_input": true, "check_output": true, "api_key_env": ""},
    "llm_tool_selector": true, "prompt_caching": {"unsupported_model_behavior": "ignore"},
    "tool_emulator": {"tools": ["never_called"]}, "tool_retry": true, "model_retry": true,
    "model_fallback": {"models": ["backup"]}, "human_in_the_loop": {"interrupt_on": {"never_called": true}}
})";

struct lead_chain_env {
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("agentware-lead-chain-bench-" + std::to_string(::getpid()));
    lead_chain_env() { std::filesystem::create_directories(dir); }
    ~lead_chain_env() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
};

void BM_agent_loop_lead_chain(benchmark::State& bs) {
    lead_chain_env env;
    deerflow_pipeline chain = make_deerflow_pipeline(boost::json::parse(lead_chain_sections));
    std::size_t engaged = 0;
    // The skills slots, as the lead agent engages them when it has a skill catalog (here an empty one).
    const auto catalog = std::make_shared<const skill_catalog>();
    chain.slot<agentware::skill_tool_policy>().emplace(catalog, "/mnt/skills");
    chain.slot<agentware::skills>().emplace(skills_options{}, catalog);
    chain.for_each_enabled([&](const auto&) { ++engaged; });
    // todo_list is LangChain's alternative to DeerFlow's todo (both offer write_todos): a chain has one.
    if (engaged != deerflow_pipeline::size - 1) {
        bs.SkipWithError("not every slot of the lead chain is engaged (all but todo_list)");
        return;
    }
    // The models and the endpoint the sections name, scripted: the tool selector keeps echo, the
    // moderation endpoint flags nothing, and the fallback and emulator models are never asked.
    chain.get<agentware::llm_tool_selector>()->model =
        any_chat_model(scripted_model({ai_message(R"({"tools": ["echo"]})")}, {false, true}));
    chain.get<agentware::tool_emulator>()->model =
        any_chat_model(scripted_model({ai_message("emulated")}, {false, true}));
    chain.get<agentware::model_fallback>()->set_models(
        {any_chat_model(scripted_model({ai_message("fallback")}, {false, true}))});
    chain.get<agentware::moderation>()->set_check(
        [](const std::string&, const std::string&) { return moderation_result{}; });
    chain.get<agentware::thread_data>()->options.base_dir = env.dir.string();
    memory_options mo = chain.get<agentware::memory>()->manager()->options();
    mo.backend_config.storage_path = env.dir.string();
    auto manager = std::make_shared<memory_manager>(
        mo, memory_manager_setup{.model =
                                     [](const chat_request&) {
                                         return model_response{ai_message("{}"), {}};
                                     },
                                 .start_worker = false});
    chain.slot<agentware::memory>().emplace(manager);
    chain.get<agentware::dynamic_context>()->manager = manager;
    // The helper models: scripted, cycling (neither is asked while the trigger
    // does not fire and the thread is past its first exchange).
    chain.get<agentware::summarization>()->model =
        any_chat_model(scripted_model({ai_message("A summary.")}, {false, true}));
    chain.get<agentware::title>()->model =
        any_chat_model(scripted_model({ai_message("A title")}, {false, true}));
    agent<scripted_model, deerflow_pipeline> a(scripted_model(make_script(true), {false, false}),
                                               make_tools(), std::move(chain));
    run_rounds(bs, a, false, loop_kind::blocking, true);
}

} // namespace

BENCHMARK(BM_message_work_only)->Arg(10)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_agent_loop_no_middleware)
    ->Arg(10)
    ->Arg(1000)
    ->Arg(10000)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_agent_loop_no_middleware_coroutine_blocking_tool)
    ->Arg(10)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_agent_loop_no_middleware_coroutine_async_tool)
    ->Arg(10)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_agent_loop_no_middleware_copying_model)->Arg(10)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_agent_loop_14_middlewares)
    ->Arg(10)
    ->Arg(1000)
    ->Arg(10000)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_agent_loop_summarization)->Arg(10)->Arg(10000)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_agent_loop_lead_chain)->Arg(10)->Arg(10000)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_agent_loop_14_middlewares_8kb_prompt)->Arg(10)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
