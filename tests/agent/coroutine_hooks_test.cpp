// agent/coroutine_hooks.hpp: node hooks that are coroutines, beside plain ones, run to their end
// by the blocking loop (and awaited by the coroutine loop): order, jumps, the run's model, failures.
#include <agentware/agent/coroutine_hooks.hpp>

#include "run_async.hpp"
#include "support.hpp"

#include <agentware/agent/async_loop.hpp>

#include <catch2/catch.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace asio = boost::asio;
using namespace agentware;
using strings = std::vector<std::string>;

namespace {

struct hook_trace {
    static constexpr std::string_view name = "hook_trace";
    using value_type = std::vector<std::string>;
};

template <char Name>
struct plain_hooks {
    using state_fields = fields<hook_trace>;
    static void log(auto& s, const char* hook) {
        get<hook_trace>(s).push_back(std::string(1, Name) + "." + hook);
    }
    void before_agent(auto& s) { log(s, "before_agent"); }
    void before_model(auto& s) { log(s, "before_model"); }
    void after_model(auto& s) { log(s, "after_model"); }
    void after_agent(auto& s) { log(s, "after_agent"); }
};

// Every node hook a coroutine that suspends (a post to its executor) before it records.
template <char Name>
struct awaiting_hooks {
    using state_fields = fields<hook_trace>;
    std::optional<jump_to> after_model_jump;
    static asio::awaitable<void> pause() {
        co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
    }
    static void log(auto& s, const char* hook) {
        get<hook_trace>(s).push_back(std::string(1, Name) + "." + hook);
    }
    asio::awaitable<void> before_agent(auto& s, runtime&) {
        co_await pause();
        log(s, "before_agent");
    }
    asio::awaitable<jump_to> never_called(auto&) { co_return jump_to::end; } // not a hook name: ignored
    asio::awaitable<hook_result> before_model(auto& s, runtime&) {
        co_await pause();
        log(s, "before_model");
        co_return std::nullopt;
    }
    asio::awaitable<hook_result> after_model(auto& s) {
        co_await pause();
        log(s, "after_model");
        co_return after_model_jump;
    }
    asio::awaitable<void> after_agent(auto& s, runtime&) {
        co_await pause();
        log(s, "after_agent");
    }
};

// Asks the run's model (reached through the runtime) for a note before each round.
struct asks_run_model {
    using state_fields = fields<hook_trace>;
    asio::awaitable<void> before_model(auto& s, runtime& rt) {
        REQUIRE(rt.model);
        chat_request req;
        req.messages = cow_vector<message>(std::vector<message>{human_message("note?")});
        model_response r = co_await rt.model.async_invoke(req);
        get<hook_trace>(s).push_back("note:" + r.ai.text());
    }
};

struct throws_in_coroutine {
    asio::awaitable<void> after_model(auto&) {
        co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
        throw std::runtime_error("hook failed");
    }
};

const strings mixed_order{"a.before_agent", "b.before_agent", "c.before_agent", //
                          "a.before_model", "b.before_model", "c.before_model", //
                          "c.after_model",  "b.after_model",  "a.after_model",  //
                          "c.after_agent",  "b.after_agent",  "a.after_agent"};

} // namespace

TEST_CASE("coroutine node hooks run in chain order beside plain ones, in both loops",
          "[agent][async][hooks]") {
    auto make = [] {
        return make_agent(scripted_model({ai_message("done")}), tool_set{}, plain_hooks<'a'>{},
                          awaiting_hooks<'b'>{}, plain_hooks<'c'>{});
    };
    using pipe = decltype(make())::pipeline_type;
    using st = decltype(make())::state_type;
    STATIC_REQUIRE(pipe::awaits<hooks::before_model_t, st, runtime>);
    STATIC_REQUIRE(!pipeline<plain_hooks<'a'>>::awaits<hooks::before_model_t, st, runtime>);
    SECTION("blocking") {
        auto a = make();
        auto r = a.invoke("go");
        REQUIRE(r.ok());
        CHECK(r.state.get<hook_trace>() == mixed_order);
    }
    SECTION("coroutine") {
        auto a = make();
        auto r = test::run_async(a, "go");
        REQUIRE(r.ok());
        CHECK(r.state.get<hook_trace>() == mixed_order);
    }
}

TEST_CASE("a coroutine after_model's jump stops the chain and the run", "[agent][async][hooks]") {
    awaiting_hooks<'b'> jumper;
    jumper.after_model_jump = jump_to::end;
    auto make = [&] {
        return make_agent(scripted_model({test::calls({test::call("c1", "echo", R"({"text":"x"})")})}),
                          tool_set(test::echo_tool()), plain_hooks<'a'>{}, jumper);
    };
    const strings expected{"a.before_agent", "b.before_agent", "a.before_model", "b.before_model",
                           "b.after_model",  "b.after_agent",  "a.after_agent"}; // a.after_model skipped
    auto a1 = make();
    auto r1 = a1.invoke("go");
    CHECK(r1.reason == stop_reason::ended_by_hook);
    CHECK(r1.state.get<hook_trace>() == expected);
    auto a2 = make();
    auto r2 = test::run_async(a2, "go");
    CHECK(r2.reason == stop_reason::ended_by_hook);
    CHECK(r2.state.get<hook_trace>() == expected);
}

TEST_CASE("a hook reaches the run's model through the runtime, in both loops", "[agent][async][hooks]") {
    for (bool async : {false, true}) {
        auto a =
            make_agent(scripted_model({ai_message("n1"), ai_message("done")}), tool_set{}, asks_run_model{});
        auto r = async ? test::run_async(a, "go") : a.invoke("go");
        REQUIRE(r.ok());
        CHECK(r.state.get<hook_trace>() == strings{"note:n1"});
        CHECK(r.answer() == "done");
    }
}

TEST_CASE("a coroutine hook that throws fails the run, in both loops", "[agent][async][hooks][errors]") {
    for (bool async : {false, true}) {
        auto a = make_agent(scripted_model({ai_message("done")}), tool_set{}, throws_in_coroutine{});
        auto r = async ? test::run_async(a, "go") : a.invoke("go");
        CHECK(r.reason == stop_reason::error);
        CHECK(r.error.find("hook failed") != std::string::npos);
    }
}

TEST_CASE("the pipeline runs a coroutine node hook through the runner it is given", "[agent][hooks]") {
    pipeline<plain_hooks<'a'>, awaiting_hooks<'b'>> p;
    struct st {
        std::vector<std::string> trace;
    };
    agent_state<decltype(p)> s;
    runtime rt;
    int ran = 0;
    auto runner = [&](auto coroutine) {
        ++ran;
        return detail::hook_runner().run(std::move(coroutine));
    };
    CHECK(!p.before_model(s, rt, runner));
    CHECK(ran == 1);
    CHECK(s.get<hook_trace>() == strings{"a.before_model", "b.before_model"});
}
