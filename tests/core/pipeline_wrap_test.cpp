#include "trace.hpp"

#include <catch2/catch.hpp>

using strings = std::vector<std::string>;

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
