// What a pipeline costs: only declared hooks are called, each exactly once
// per pass, and the whole dispatch is resolved at compile time (it runs in a
// constant expression, so nothing is left to decide at run time).
#include "trace.hpp"

#include <catch2/catch.hpp>

#include <optional>

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
