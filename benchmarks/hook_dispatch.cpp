// hook_dispatch: one agent pass (before_agent, before_model, wrap_model_call
// around the model, after_model, wrap_tool_call around one tool, after_agent)
// over the 14 middlewares of DeerFlow's lead agent, each with exactly the
// hooks of DeerFlow's execution-flow table, dispatched six ways:
//   BM_pipeline              agentware::pipeline
//   BM_hand_written          the same calls written out by hand (the floor)
//   BM_virtual               a base class with six virtual hooks, middlewares in
//                            a vector<unique_ptr<base>> (every hook called on every one)
//   BM_std_function          one vector<std::function> per hook kind (only the
//                            hooks that exist)
//   BM_pipeline_optional_off the pipeline with four of the 14 as empty optional slots
//   BM_pipeline_lambdas      the pipeline of the 14 made from lambdas
//                            (agentware::before_model(...), ...: one per hook)
// Every hook body does the same small, order-dependent work on the state.
#include <agentware/core.hpp>
#include <agentware/middleware/from_function.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace {

struct state {
    std::uint64_t acc = 1;
};
struct runtime {};
struct request {
    std::uint64_t x = 0;
};
struct response {
    std::uint64_t y = 0;
};

// The work of one hook: order-dependent, so no two calls can be merged away.
inline void touch(state& s, std::uint64_t id) { s.acc = s.acc * 31 + id; }
inline void touch(request& r, std::uint64_t id) { r.x = r.x * 31 + id; }
inline response model(request& r) { return response{r.x ^ 0x9e3779b97f4a7c15ULL}; }
inline response tool(request& r) { return response{r.x + 7}; }

// ---- (a) agentware middlewares: a hook is a plain member --------------------
#define NODE(hook, id)                                                                                       \
    void hook(state& s, runtime&) { touch(s, id); }
#define WRAP(hook, id)                                                                                       \
    response hook(request& r, auto&& next) {                                                                 \
        touch(r, id);                                                                                        \
        response out = next(r);                                                                              \
        out.y += id;                                                                                         \
        return out;                                                                                          \
    }
struct thread_data {
    NODE(before_agent, 0)
};
struct uploads {
    NODE(before_agent, 1)
};
struct sandbox {
    NODE(before_agent, 2) NODE(after_agent, 102)
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
    NODE(before_model, 6)
};
struct todo {
    NODE(before_model, 7) NODE(after_model, 107) WRAP(wrap_model_call, 207)
};
struct title {
    NODE(after_model, 8)
};
struct memory {
    NODE(after_agent, 9)
};
struct view_image {
    NODE(before_model, 10)
};
struct subagent_limit {
    NODE(after_model, 11)
};
struct loop_detection {
    NODE(before_agent, 12) NODE(after_model, 112) NODE(after_agent, 212) WRAP(wrap_model_call, 312)
};
struct clarification {
    WRAP(wrap_tool_call, 13)
};
#undef NODE
#undef WRAP

using deerflow_pipeline = agentware::pipeline<thread_data, uploads, sandbox, dangling_tool_call, guardrail,
                                              tool_error_handling, summarization, todo, title, memory,
                                              view_image, subagent_limit, loop_detection, clarification>;
using deerflow_pipeline_optional =
    agentware::pipeline<thread_data, uploads, sandbox, dangling_tool_call, guardrail, tool_error_handling,
                        std::optional<summarization>, std::optional<todo>, std::optional<title>,
                        std::optional<memory>, view_image, subagent_limit, loop_detection, clarification>;

template <class Pipeline>
std::uint64_t pipeline_pass(Pipeline& p, state& s) {
    runtime rt;
    p.before_agent(s, rt);
    p.before_model(s, rt);
    request mr{s.acc};
    response m = p.wrap_model_call(mr, model);
    s.acc += m.y;
    p.after_model(s, rt);
    request tr{s.acc};
    response t = p.wrap_tool_call(tr, tool);
    s.acc += t.y;
    p.after_agent(s, rt);
    return s.acc;
}

void BM_pipeline(benchmark::State& bs) {
    deerflow_pipeline p;
    state s;
    for (auto _ : bs) {
        benchmark::DoNotOptimize(pipeline_pass(p, s));
        benchmark::ClobberMemory();
    }
}

void BM_pipeline_optional_off(benchmark::State& bs) {
    deerflow_pipeline_optional p{
        thread_data{},         uploads{},        sandbox{},        dangling_tool_call{}, guardrail{},
        tool_error_handling{}, std::nullopt,     std::nullopt,     std::nullopt,         std::nullopt,
        view_image{},          subagent_limit{}, loop_detection{}, clarification{}};
    state s;
    for (auto _ : bs) {
        benchmark::DoNotOptimize(pipeline_pass(p, s));
        benchmark::ClobberMemory();
    }
}

// ---- (a') the same 14 made from lambdas: a middleware per hook, in list order -------
#define LNODE(hook, id) agentware::hook([](state& s, runtime&) { touch(s, id); })
#define LWRAP(hook, id)                                                                                      \
    agentware::hook([](request& r, auto&& next) {                                                            \
        touch(r, id);                                                                                        \
        response out = next(r);                                                                              \
        out.y += id;                                                                                         \
        return out;                                                                                          \
    })
template <class... M>
auto make_pipeline(M... m) {
    return agentware::pipeline<M...>{std::move(m)...};
}
inline auto lambda_pipeline() {
    return make_pipeline(LNODE(before_agent, 0), LNODE(before_agent, 1), LNODE(before_agent, 2),
                         LNODE(after_agent, 102), LWRAP(wrap_model_call, 3), LWRAP(wrap_tool_call, 4),
                         LWRAP(wrap_tool_call, 5), LNODE(before_model, 6), LNODE(before_model, 7),
                         LNODE(after_model, 107), LWRAP(wrap_model_call, 207), LNODE(after_model, 8),
                         LNODE(after_agent, 9), LNODE(before_model, 10), LNODE(after_model, 11),
                         LNODE(before_agent, 12), LNODE(after_model, 112), LNODE(after_agent, 212),
                         LWRAP(wrap_model_call, 312), LWRAP(wrap_tool_call, 13));
}
#undef LNODE
#undef LWRAP

void BM_pipeline_lambdas(benchmark::State& bs) {
    auto p = lambda_pipeline();
    state s;
    for (auto _ : bs) {
        benchmark::DoNotOptimize(pipeline_pass(p, s));
        benchmark::ClobberMemory();
    }
}

// ---- (b) the same calls by hand -----------------------------------------------
std::uint64_t hand_written_pass(state& s) {
    touch(s, 0), touch(s, 1), touch(s, 2), touch(s, 12); // before_agent, list order
    touch(s, 6), touch(s, 7), touch(s, 10);              // before_model, list order
    request mr{s.acc};
    touch(mr, 3), touch(mr, 207), touch(mr, 312); // wrap_model_call, outermost first
    response m = model(mr);
    m.y += 312, m.y += 207, m.y += 3;
    s.acc += m.y;
    touch(s, 112), touch(s, 11), touch(s, 8), touch(s, 107); // after_model, reverse
    request tr{s.acc};
    touch(tr, 4), touch(tr, 5), touch(tr, 13); // wrap_tool_call
    response t = tool(tr);
    t.y += 13, t.y += 5, t.y += 4;
    s.acc += t.y;
    touch(s, 212), touch(s, 9), touch(s, 102); // after_agent, reverse
    return s.acc;
}

void BM_hand_written(benchmark::State& bs) {
    state s;
    for (auto _ : bs) {
        benchmark::DoNotOptimize(hand_written_pass(s));
        benchmark::ClobberMemory();
    }
}

// ---- (c) the classic runtime chain: virtual hooks ----------------------------
using next_fn = std::function<response(request&)>;
struct virtual_middleware {
    virtual ~virtual_middleware() = default;
    virtual void before_agent(state&, runtime&) {}
    virtual void before_model(state&, runtime&) {}
    virtual void after_model(state&, runtime&) {}
    virtual void after_agent(state&, runtime&) {}
    virtual response wrap_model_call(request& r, const next_fn& next) { return next(r); }
    virtual response wrap_tool_call(request& r, const next_fn& next) { return next(r); }
};
#define VNODE(hook, id)                                                                                      \
    void hook(state& s, runtime&) override { touch(s, id); }
#define VWRAP(hook, id)                                                                                      \
    response hook(request& r, const next_fn& next) override {                                                \
        touch(r, id);                                                                                        \
        response out = next(r);                                                                              \
        out.y += id;                                                                                         \
        return out;                                                                                          \
    }
struct v_thread_data : virtual_middleware {
    VNODE(before_agent, 0)
};
struct v_uploads : virtual_middleware {
    VNODE(before_agent, 1)
};
struct v_sandbox : virtual_middleware {
    VNODE(before_agent, 2) VNODE(after_agent, 102)
};
struct v_dangling_tool_call : virtual_middleware {
    VWRAP(wrap_model_call, 3)
};
struct v_guardrail : virtual_middleware {
    VWRAP(wrap_tool_call, 4)
};
struct v_tool_error_handling : virtual_middleware {
    VWRAP(wrap_tool_call, 5)
};
struct v_summarization : virtual_middleware {
    VNODE(before_model, 6)
};
struct v_todo : virtual_middleware {
    VNODE(before_model, 7) VNODE(after_model, 107) VWRAP(wrap_model_call, 207)
};
struct v_title : virtual_middleware {
    VNODE(after_model, 8)
};
struct v_memory : virtual_middleware {
    VNODE(after_agent, 9)
};
struct v_view_image : virtual_middleware {
    VNODE(before_model, 10)
};
struct v_subagent_limit : virtual_middleware {
    VNODE(after_model, 11)
};
struct v_loop_detection : virtual_middleware {
    VNODE(before_agent, 12) VNODE(after_model, 112) VNODE(after_agent, 212) VWRAP(wrap_model_call, 312)
};
struct v_clarification : virtual_middleware {
    VWRAP(wrap_tool_call, 13)
};
#undef VNODE
#undef VWRAP

struct virtual_chain {
    std::vector<std::unique_ptr<virtual_middleware>> list;

    virtual_chain() {
        list.push_back(std::make_unique<v_thread_data>());
        list.push_back(std::make_unique<v_uploads>());
        list.push_back(std::make_unique<v_sandbox>());
        list.push_back(std::make_unique<v_dangling_tool_call>());
        list.push_back(std::make_unique<v_guardrail>());
        list.push_back(std::make_unique<v_tool_error_handling>());
        list.push_back(std::make_unique<v_summarization>());
        list.push_back(std::make_unique<v_todo>());
        list.push_back(std::make_unique<v_title>());
        list.push_back(std::make_unique<v_memory>());
        list.push_back(std::make_unique<v_view_image>());
        list.push_back(std::make_unique<v_subagent_limit>());
        list.push_back(std::make_unique<v_loop_detection>());
        list.push_back(std::make_unique<v_clarification>());
    }
    response model_at(std::size_t i, request& r) {
        if (i == list.size()) return model(r);
        return list[i]->wrap_model_call(r, [this, i](request& q) { return model_at(i + 1, q); });
    }
    response tool_at(std::size_t i, request& r) {
        if (i == list.size()) return tool(r);
        return list[i]->wrap_tool_call(r, [this, i](request& q) { return tool_at(i + 1, q); });
    }
    std::uint64_t pass(state& s) {
        runtime rt;
        for (auto& m : list)
            m->before_agent(s, rt);
        for (auto& m : list)
            m->before_model(s, rt);
        request mr{s.acc};
        s.acc += model_at(0, mr).y;
        for (auto it = list.rbegin(); it != list.rend(); ++it)
            (*it)->after_model(s, rt);
        request tr{s.acc};
        s.acc += tool_at(0, tr).y;
        for (auto it = list.rbegin(); it != list.rend(); ++it)
            (*it)->after_agent(s, rt);
        return s.acc;
    }
};

void BM_virtual(benchmark::State& bs) {
    virtual_chain chain;
    state s;
    for (auto _ : bs) {
        benchmark::DoNotOptimize(chain.pass(s));
        benchmark::ClobberMemory();
    }
}

// ---- (d) std::function chains: one list per hook kind ----------------------------
struct function_chain {
    using node = std::function<void(state&, runtime&)>;
    using wrap = std::function<response(request&, const next_fn&)>;
    std::vector<node> before_agent, before_model, after_model, after_agent; // after_* stored in run order
    std::vector<wrap> wrap_model, wrap_tool;

    static node n(std::uint64_t id) {
        return [id](state& s, runtime&) { touch(s, id); };
    }
    static wrap w(std::uint64_t id) {
        return [id](request& r, const next_fn& next) {
            touch(r, id);
            response out = next(r);
            out.y += id;
            return out;
        };
    }
    function_chain() {
        before_agent = {n(0), n(1), n(2), n(12)};
        before_model = {n(6), n(7), n(10)};
        wrap_model = {w(3), w(207), w(312)};
        after_model = {n(112), n(11), n(8), n(107)};
        wrap_tool = {w(4), w(5), w(13)};
        after_agent = {n(212), n(9), n(102)};
    }
    response run(const std::vector<wrap>& chain, std::size_t i, request& r, response (*terminal)(request&)) {
        if (i == chain.size()) return terminal(r);
        return chain[i](r, [&, i](request& q) { return run(chain, i + 1, q, terminal); });
    }
    std::uint64_t pass(state& s) {
        runtime rt;
        for (auto& f : before_agent)
            f(s, rt);
        for (auto& f : before_model)
            f(s, rt);
        request mr{s.acc};
        s.acc += run(wrap_model, 0, mr, model).y;
        for (auto& f : after_model)
            f(s, rt);
        request tr{s.acc};
        s.acc += run(wrap_tool, 0, tr, tool).y;
        for (auto& f : after_agent)
            f(s, rt);
        return s.acc;
    }
};

void BM_std_function(benchmark::State& bs) {
    function_chain chain;
    state s;
    for (auto _ : bs) {
        benchmark::DoNotOptimize(chain.pass(s));
        benchmark::ClobberMemory();
    }
}

// All six compute the same thing; refuse to report figures if they do not.
bool variants_agree() {
    deerflow_pipeline p;
    auto l = lambda_pipeline();
    virtual_chain v;
    function_chain f;
    state a, b, c, d, e;
    for (int i = 0; i < 3; ++i) {
        pipeline_pass(p, a);
        hand_written_pass(b);
        v.pass(c);
        f.pass(d);
        pipeline_pass(l, e);
    }
    return a.acc == b.acc && b.acc == c.acc && c.acc == d.acc && d.acc == e.acc;
}

} // namespace

BENCHMARK(BM_hand_written);
BENCHMARK(BM_pipeline);
BENCHMARK(BM_pipeline_optional_off);
BENCHMARK(BM_pipeline_lambdas);
BENCHMARK(BM_virtual);
BENCHMARK(BM_std_function);

int main(int argc, char** argv) {
    if (!variants_agree()) {
        std::fprintf(stderr,
                     "hook_dispatch: the variants compute different results; figures would be meaningless\n");
        return 1;
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
