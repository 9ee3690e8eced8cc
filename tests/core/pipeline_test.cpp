// pipeline.hpp: the order hooks run in, how wrap hooks nest, and what a pass costs.
#include "trace.hpp"

#include <catch2/catch.hpp>

#include <optional>

using test::recorder;
using strings = std::vector<std::string>;

TEST_CASE("before hooks run in list order and after hooks in reverse", "[pipeline][order]") {
    agentware::pipeline<recorder<'a'>, recorder<'b'>, recorder<'c'>> p;
    test::state s;
    test::runtime rt;
    p.before_agent(s, rt);
    p.before_model(s, rt);
    p.after_model(s, rt);
    p.after_agent(s, rt);
    CHECK(s.trace == strings{"a.before_agent", "b.before_agent", "c.before_agent", "a.before_model",
                             "b.before_model", "c.before_model", "c.after_model", "b.after_model",
                             "a.after_model", "c.after_agent", "b.after_agent", "a.after_agent"});
}

TEST_CASE("wrap hooks nest with the first-listed middleware outermost", "[pipeline][order][wrap]") {
    strings log;
    agentware::pipeline<recorder<'a'>, recorder<'b'>, recorder<'c'>> p{
        recorder<'a'>{&log}, recorder<'b'>{&log}, recorder<'c'>{&log}};
    test::request req{">"};
    std::string seen_by_model;
    auto out = p.wrap_model_call(req, [&](test::request& r) {
        seen_by_model = r.text;
        log.push_back("model");
        return test::response{"<"};
    });
    CHECK(seen_by_model == ">abc"); // the request flowed a -> b -> c
    CHECK(out.text == "<cba");      // the response flowed back c -> b -> a
    CHECK(log == strings{"a.wrap_model_call>", "b.wrap_model_call>", "c.wrap_model_call>", "model",
                         "c.wrap_model_call<", "b.wrap_model_call<", "a.wrap_model_call<"});
}

namespace {
// The middlewares of DeerFlow's lead agent with exactly the hooks of its table.
#define RECORD(hook)                                                                                         \
    void hook(test::state& s, test::runtime&) { s.trace.push_back(std::string(name) + "." #hook); }
#define WRAP(hook)                                                                                           \
    test::response hook(test::request& r, auto&& next) {                                                     \
        r.text += std::string(name) + " ";                                                                   \
        return next(r);                                                                                      \
    }
struct thread_data {
    static constexpr const char* name = "thread_data";
    RECORD(before_agent)
};
struct uploads {
    static constexpr const char* name = "uploads";
    RECORD(before_agent)
};
struct sandbox {
    static constexpr const char* name = "sandbox";
    RECORD(before_agent) RECORD(after_agent)
};
struct dangling_tool_call {
    static constexpr const char* name = "dangling";
    WRAP(wrap_model_call)
};
struct guardrail {
    static constexpr const char* name = "guardrail";
    WRAP(wrap_tool_call)
};
struct tool_error_handling {
    static constexpr const char* name = "tool_errors";
    WRAP(wrap_tool_call)
};
struct summarization {
    static constexpr const char* name = "summarization";
    RECORD(before_model)
};
struct todo {
    static constexpr const char* name = "todo";
    RECORD(before_model) RECORD(after_model) WRAP(wrap_model_call)
};
struct title {
    static constexpr const char* name = "title";
    RECORD(after_model)
};
struct memory {
    static constexpr const char* name = "memory";
    RECORD(after_agent)
};
struct view_image {
    static constexpr const char* name = "view_image";
    RECORD(before_model)
};
struct subagent_limit {
    static constexpr const char* name = "subagent_limit";
    RECORD(after_model)
};
struct loop_detection {
    static constexpr const char* name = "loop_detection";
    RECORD(before_agent) RECORD(after_model) RECORD(after_agent) WRAP(wrap_model_call)
};
struct clarification {
    static constexpr const char* name = "clarification";
    WRAP(wrap_tool_call)
};
#undef RECORD
#undef WRAP
} // namespace

TEST_CASE("the DeerFlow chain runs in the order of its execution-flow diagram",
          "[pipeline][order][deerflow]") {
    agentware::pipeline<thread_data, uploads, sandbox, dangling_tool_call, guardrail, tool_error_handling,
                        summarization, todo, title, memory, view_image, subagent_limit, loop_detection,
                        clarification>
        p;
    test::state s;
    test::runtime rt;
    p.before_agent(s, rt);
    CHECK(s.trace == strings{"thread_data.before_agent", "uploads.before_agent", "sandbox.before_agent",
                             "loop_detection.before_agent"});
    s.trace.clear();
    p.before_model(s, rt);
    CHECK(s.trace == strings{"summarization.before_model", "todo.before_model", "view_image.before_model"});
    test::request req;
    p.wrap_model_call(req, [](test::request& r) { return test::response{r.text}; });
    CHECK(req.text == "dangling todo loop_detection ");
    s.trace.clear();
    p.after_model(s, rt);
    // The last middleware's after_model runs first.
    CHECK(s.trace == strings{"loop_detection.after_model", "subagent_limit.after_model", "title.after_model",
                             "todo.after_model"});
    test::request tool_req;
    p.wrap_tool_call(tool_req, [](test::request& r) { return test::response{r.text}; });
    CHECK(tool_req.text == "guardrail tool_errors clarification ");
    s.trace.clear();
    p.after_agent(s, rt);
    CHECK(s.trace == strings{"loop_detection.after_agent", "memory.after_agent", "sandbox.after_agent"});
}

namespace {
struct cache {
    std::vector<std::string>* log;
    bool hit = false;
    test::response wrap_model_call(test::request& r, auto&& next) {
        log->push_back("cache");
        if (hit) return test::response{"cached"};
        return next(r);
    }
};
struct retry {
    std::vector<std::string>* log;
    int attempts = 0;
    test::response wrap_model_call(test::request& r, auto&& next) {
        for (;;) {
            ++attempts;
            log->push_back("retry");
            test::response out = next(r);
            if (out.text != "fail" || attempts == 3) return out;
        }
    }
};
struct rewrite {
    test::response wrap_model_call(const test::request& r, auto next) {
        test::request changed{r.text + "+rewritten"};
        test::response out = next(changed);
        out.text = "[" + out.text + "]";
        return out;
    }
};
} // namespace

TEST_CASE("a wrap hook that does not call next short-circuits the inner layers", "[pipeline][wrap]") {
    strings log;
    agentware::pipeline<cache, retry> p{cache{&log, true}, retry{&log}};
    int model_calls = 0;
    test::request req;
    auto out = p.wrap_model_call(req, [&](test::request&) {
        ++model_calls;
        return test::response{"model"};
    });
    CHECK(out.text == "cached");
    CHECK(model_calls == 0);
    CHECK(log == strings{"cache"});
}

TEST_CASE("a wrap hook may call next several times to retry", "[pipeline][wrap]") {
    strings log;
    agentware::pipeline<cache, retry> p{cache{&log}, retry{&log}};
    int model_calls = 0;
    test::request req;
    auto out = p.wrap_model_call(req, [&](test::request&) {
        ++model_calls;
        return test::response{model_calls < 3 ? "fail" : "ok"};
    });
    CHECK(out.text == "ok");
    CHECK(model_calls == 3);
    CHECK(p.slot<retry>().attempts == 3);
    CHECK(log == strings{"cache", "retry", "retry", "retry"});
}

TEST_CASE("a wrap hook may replace the request and change the response", "[pipeline][wrap]") {
    agentware::pipeline<rewrite> p;
    test::request req{"question"};
    std::string seen;
    auto out = p.wrap_model_call(req, [&](const test::request& r) {
        seen = r.text;
        return test::response{"answer"};
    });
    CHECK(seen == "question+rewritten");
    CHECK(req.text == "question"); // the caller's request is untouched
    CHECK(out.text == "[answer]");
}

TEST_CASE("without wrap hooks the terminal is called directly", "[pipeline][wrap]") {
    struct only_before {
        void before_model(test::state&);
    };
    agentware::pipeline<only_before> p;
    test::request req{"x"};
    auto out = p.wrap_tool_call(req, [](test::request& r) { return test::response{r.text + "!"}; });
    CHECK(out.text == "x!");
    auto empty = agentware::pipeline<>{}.wrap_model_call(req, [](test::request& r) { return r.text.size(); });
    CHECK(empty == 1);
}

TEST_CASE("a pipeline tells at compile time which hooks its middlewares declare", "[pipeline][wrap]") {
    struct only_before {
        void before_model(test::state&);
    };
    using agentware::hooks::before_model_t;
    using agentware::hooks::wrap_model_call_t;
    using agentware::hooks::wrap_tool_call_t;
    STATIC_REQUIRE(agentware::pipeline<only_before, cache>::declares<wrap_model_call_t>);
    STATIC_REQUIRE(agentware::pipeline<only_before, cache>::declares<before_model_t>);
    STATIC_REQUIRE_FALSE(agentware::pipeline<only_before, cache>::declares<wrap_tool_call_t>);
    STATIC_REQUIRE_FALSE(agentware::pipeline<only_before>::declares<wrap_model_call_t>);
    STATIC_REQUIRE_FALSE(agentware::pipeline<>::declares<before_model_t>);
    // An optional slot counts: whether it is engaged is known only at run time.
    STATIC_REQUIRE(agentware::pipeline<std::optional<rewrite>>::declares<wrap_model_call_t>);
}

// What a pipeline costs: only declared hooks are called, each exactly once
// per pass, and the whole dispatch is resolved at compile time (it runs in a
// constant expression, so nothing is left to decide at run time).

namespace {

struct counts {
    int before_agent = 0, before_model = 0, after_model = 0, after_agent = 0, wrap_model = 0, wrap_tool = 0;
};
struct no_runtime {};

// Each middleware has one hook and counts its own calls.
struct only_before_model {
    int calls = 0;
    constexpr void before_model(counts& c, no_runtime&) { ++c.before_model, ++calls; }
};
struct only_after_model {
    int calls = 0;
    constexpr void after_model(counts& c, no_runtime&) { ++c.after_model, ++calls; }
};
struct only_wrap_model {
    int calls = 0;
    constexpr int wrap_model_call(int& request, auto&& next) {
        ++calls;
        return next(request) + 1;
    }
};
struct everything {
    constexpr void before_agent(counts& c) { ++c.before_agent; }
    constexpr void before_model(counts& c) { ++c.before_model; }
    constexpr void after_model(counts& c) { ++c.after_model; }
    constexpr void after_agent(counts& c) { ++c.after_agent; }
    constexpr int wrap_model_call(int& r, auto&& next) { return next(r) + 10; }
    constexpr int wrap_tool_call(int& r, auto&& next) { return next(r) + 100; }
};

using counted = agentware::pipeline<only_before_model, only_after_model, only_wrap_model, everything>;

constexpr counts one_round() {
    counted p;
    counts c;
    no_runtime rt;
    p.before_agent(c, rt);
    p.before_model(c, rt);
    int req = 0;
    c.wrap_model = p.wrap_model_call(req, [](int& r) { return r; });
    p.after_model(c, rt);
    c.wrap_tool = p.wrap_tool_call(req, [](int& r) { return r; });
    p.after_agent(c, rt);
    return c;
}

} // namespace

TEST_CASE("each hook is called once per pass, and only on middlewares that declare it", "[pipeline][cost]") {
    // Evaluated by the compiler: a dispatch that needed run-time decisions
    // (virtual calls, function pointers) could not run here.
    constexpr counts c = one_round();
    STATIC_REQUIRE(c.before_agent == 1);
    STATIC_REQUIRE(c.before_model == 2);
    STATIC_REQUIRE(c.after_model == 2);
    STATIC_REQUIRE(c.after_agent == 1);
    STATIC_REQUIRE(c.wrap_model == 11); // only_wrap_model (+1) and everything (+10)
    STATIC_REQUIRE(c.wrap_tool == 100); // only everything has wrap_tool_call

    counted p;
    counts rc;
    no_runtime rt;
    for (int i = 0; i < 5; ++i) {
        p.before_model(rc, rt);
        p.after_model(rc, rt);
        int req = 0;
        (void)p.wrap_model_call(req, [](int& r) { return r; });
    }
    CHECK(p.slot<only_before_model>().calls == 5);
    CHECK(p.slot<only_after_model>().calls == 5);
    CHECK(p.slot<only_wrap_model>().calls == 5);
    CHECK(rc.before_model == 10);
    CHECK(rc.after_model == 10);
}

TEST_CASE("a pipeline of stateless middlewares adds no storage per middleware", "[pipeline][cost]") {
    struct a {
        void before_model(counts&);
    };
    struct b {
        void after_model(counts&);
    };
    struct c {
        void after_agent(counts&);
    };
    // Hana's tuple folds empty members away (empty-base optimisation).
    STATIC_REQUIRE(sizeof(agentware::pipeline<a, b, c>) == 1);
    STATIC_REQUIRE(sizeof(agentware::pipeline<only_before_model, a, b>) == sizeof(int));
}

TEST_CASE("an empty optional slot skips all its hooks with one test per hook", "[pipeline][cost]") {
    agentware::pipeline<std::optional<only_before_model>, only_after_model> p;
    counts c;
    no_runtime rt;
    p.before_model(c, rt);
    p.after_model(c, rt);
    CHECK(c.before_model == 0);
    CHECK(c.after_model == 1);
    p.slot<only_before_model>().emplace();
    p.before_model(c, rt);
    CHECK(c.before_model == 1);
    CHECK(p.get<only_before_model>()->calls == 1);
}
