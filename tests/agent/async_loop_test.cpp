// agent/async_loop.hpp: the coroutine loop (async_invoke), its concurrency on one thread, and
// asynchronous tools in both loops.
#include <agentware/agent/async_loop.hpp>

#include "run_async.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

namespace asio = boost::asio;
using namespace agentware;
using strings = std::vector<std::string>;

namespace {

// A wrap hook written once that works in both loops: it only changes the
// request and forwards whatever `next` returns.
struct tag_request {
    auto wrap_model_call(auto& req, auto&& next) {
        req.system_prompt = "tagged";
        return next(req);
    }
};

// A wrap hook that looks at the response must await it: a coroutine, which
// takes its request by value (it may outlive the caller's frame).
struct exclaim {
    asio::awaitable<model_response> wrap_model_call(auto req, auto next) {
        model_response r = co_await next(req);
        r.ai.content.push_back(text_block("!"));
        co_return r;
    }
    asio::awaitable<tool_response> wrap_tool_call(auto req, auto next) {
        tool_response r = co_await next(req);
        r.msg.content.push_back(text_block("?"));
        co_return r;
    }
};

} // namespace

TEST_CASE("async_invoke runs the same loop, with coroutine and forwarding wrap hooks", "[agent][async]") {
    scripted_model model({test::calls({test::call("c1", "echo", R"({"text":"hi"})")}), ai_message("done")});
    auto a = make_agent(model, tool_set(test::echo_tool()), tag_request{}, exclaim{});
    auto r = test::run_async(a, "go");
    REQUIRE(r.ok());
    CHECK(test::roles(r.state.messages) == strings{"human", "ai", "tool", "ai"});
    CHECK(r.state.messages[2].text() == "hi?");
    CHECK(r.answer() == "done!");
    auto reqs = model.requests();
    REQUIRE(reqs.size() == 2);
    CHECK(reqs[0].system_prompt == "tagged");
}

TEST_CASE("the forwarding hook works unchanged in the blocking loop", "[agent][async]") {
    scripted_model model({ai_message("sync")});
    auto a = make_agent(model, tool_set{}, tag_request{});
    auto r = a.invoke("go");
    REQUIRE(r.ok());
    CHECK(model.requests().at(0).system_prompt == "tagged");
}

TEST_CASE("async tool calls of one round run concurrently on the pool", "[agent][async][concurrency]") {
    test::rendezvous meeting(3);
    auto gather = meeting.tool();
    scripted_model model(
        {test::calls({test::call("1", "gather", R"({"n":"a"})"), test::call("2", "gather", R"({"n":"b"})"),
                      test::call("3", "gather", R"({"n":"c"})")}),
         ai_message("ok")});
    auto a = make_agent(model, tool_set(gather));
    auto r = test::run_async(a, "go");
    REQUIRE(r.ok());
    CHECK(meeting.all_met());
    CHECK(r.state.messages[2].text() == "a");
    CHECK(r.state.messages[4].text() == "c");
}

namespace {
// An asynchronous model that holds every call until `expected` calls wait at once.
struct gated_model {
    struct shared_gate {
        explicit shared_gate(asio::io_context& io, int expected)
            : timer(io, std::chrono::minutes(1)), expected(expected) {}
        asio::steady_timer timer;
        int expected;
        int waiting = 0;
        int peak = 0;
    };
    std::shared_ptr<shared_gate> gate;

    model_response invoke(const chat_request&) { return {ai_message("blocking answer"), {}}; }
    asio::awaitable<model_response> async_invoke(const chat_request& r) {
        auto& g = *gate;
        g.peak = std::max(g.peak, ++g.waiting);
        if (g.waiting == g.expected)
            g.timer.cancel(); // the last one in opens the gate for all
        else
            co_await g.timer.async_wait(asio::as_tuple(asio::use_awaitable));
        co_return model_response{ai_message("answer to " + r.messages.back().text()), {1, 1, 2}};
    }
};
static_assert(async_chat_model<gated_model>);
} // namespace

TEST_CASE("one thread keeps a thousand runs waiting on a slow model", "[agent][async][concurrency]") {
    constexpr int runs = 1000;
    asio::io_context io; // run by this thread alone
    gated_model model{std::make_shared<gated_model::shared_gate>(io, runs)};
    auto a = make_agent(model, tool_set{});
    int finished = 0;
    std::uint64_t tokens = 0;
    for (int i = 0; i < runs; ++i) {
        run_config cfg;
        cfg.thread_id = "t" + std::to_string(i);
        asio::co_spawn(io, a.async_invoke("q" + std::to_string(i), cfg),
                       [&, i](std::exception_ptr e, auto r) {
                           if (!e && r.ok() && r.answer() == "answer to q" + std::to_string(i)) ++finished;
                           tokens += r.usage.total_tokens;
                       });
    }
    io.run();
    CHECK(model.gate->peak == runs); // all were waiting at the same time
    CHECK(finished == runs);
    CHECK(tokens == 2 * runs);
}

namespace {
// An asynchronous tool that holds every call until `expected` calls wait at
// once, noting the thread each call ran on.
struct gated_tool {
    struct shared_gate {
        shared_gate(asio::io_context& io, int expected)
            : timer(io, std::chrono::minutes(1)), expected(expected) {}
        asio::steady_timer timer;
        int expected;
        int waiting = 0;
        int peak = 0;
        std::set<std::thread::id> threads;
    };
    std::shared_ptr<shared_gate> gate;

    const tool_schema& schema() const {
        static const tool_schema s{"wait", "Waits for the others.", boost::json::object{}};
        return s;
    }
    asio::awaitable<tool_output> async_call(const boost::json::object&, const tool_runtime& rt) {
        auto& g = *gate;
        g.threads.insert(std::this_thread::get_id());
        g.peak = std::max(g.peak, ++g.waiting);
        if (g.waiting == g.expected)
            g.timer.cancel();
        else
            co_await g.timer.async_wait(asio::as_tuple(asio::use_awaitable));
        co_return tool_output("waited for " + std::string(rt.tool_call_id));
    }
};
static_assert(async_tool<gated_tool> && !blocking_tool<gated_tool>);

// Calls the tool once for the human's question, then answers with what it said.
struct tool_then_answer_model {
    model_response invoke(const chat_request& r) {
        const message& last = r.messages.back();
        if (last.is_human()) return {test::calls({test::call("call-" + last.text(), "wait")}), {}};
        return {ai_message("after " + last.text()), {}};
    }
};

// An asynchronous tool made from a coroutine lambda: a timer stands for the network.
auto napping_tool() {
    return make_tool("nap", "Sleeps a little.", R"({"type":"object","properties":{"ms":{"type":"integer"}}})",
                     [](const boost::json::object& args) -> asio::awaitable<std::string> {
                         const auto ms = args.at("ms").as_int64();
                         if (ms < 0) throw std::invalid_argument("cannot sleep a negative time");
                         asio::steady_timer timer(co_await asio::this_coro::executor,
                                                  std::chrono::milliseconds(ms));
                         co_await timer.async_wait(asio::use_awaitable);
                         co_return "slept " + std::to_string(ms) + " ms";
                     });
}
} // namespace

TEST_CASE("an asynchronous tool is awaited on the caller's thread, which keeps a thousand runs waiting on it",
          "[agent][async][concurrency]") {
    constexpr int runs = 1000;
    asio::io_context io; // run by this thread alone
    gated_tool tool{std::make_shared<gated_tool::shared_gate>(io, runs)};
    auto a = make_agent(tool_then_answer_model{}, tool_set(tool));
    int finished = 0;
    for (int i = 0; i < runs; ++i) {
        const std::string q = "q" + std::to_string(i);
        asio::co_spawn(io, a.async_invoke(q), [&, q](std::exception_ptr e, auto r) {
            if (!e && r.ok() && r.answer() == "after waited for call-" + q) ++finished;
        });
    }
    io.run();
    CHECK(tool.gate->peak == runs); // every call was waiting at the same time
    CHECK(tool.gate->threads ==
          std::set<std::thread::id>{std::this_thread::get_id()}); // none went to the pool
    CHECK(finished == runs);
}

TEST_CASE("an asynchronous tool made from a coroutine works in both loops", "[agent][async]") {
    auto script = [] {
        return std::vector<message>{test::calls({test::call("c1", "nap", R"({"ms":2})")}),
                                    ai_message("rested")};
    };
    SECTION("asynchronous loop") {
        scripted_model model(script());
        auto a = make_agent(model, tool_set(napping_tool()));
        auto r = test::run_async(a, "go");
        REQUIRE(r.ok());
        CHECK(r.state.messages[2].text() == "slept 2 ms");
        CHECK(r.answer() == "rested");
    }
    SECTION("blocking loop: the tool runs on an io_context of its own") {
        scripted_model model(script());
        auto a = make_agent(model, tool_set(napping_tool()));
        auto r = a.invoke("go");
        REQUIRE(r.ok());
        CHECK(r.state.messages[2].text() == "slept 2 ms");
    }
}

TEST_CASE("an asynchronous tool's failures are answered as a blocking tool's are", "[agent][async][errors]") {
    SECTION("several calls in a round") {
        scripted_model model(
            {test::calls({test::call("c1", "nap", R"({"ms":-1})"), test::call("c2", "nap", R"({"ms":"x"})"),
                          test::call("c3", "nap", R"({"ms":1})")}),
             ai_message("never")});
        auto a = make_agent(model, tool_set(napping_tool()));
        auto r = test::run_async(a, "go");
        CHECK(r.reason == stop_reason::error);
        CHECK_THAT(r.error, Catch::Contains("cannot sleep a negative time"));
        const auto& ms = r.state.messages;
        REQUIRE(test::roles(ms) == strings{"human", "ai", "tool", "tool", "tool"});
        CHECK(ms[2].text() == "Error: the tool \"nap\" failed: cannot sleep a negative time");
        CHECK(ms[3].is_error()); // the schema wants an integer: answered without running the tool
        CHECK_THAT(ms[3].text(), Catch::StartsWith("Error: invalid arguments for tool \"nap\""));
        CHECK(ms[4].text() == "slept 1 ms");
    }
    SECTION("the round's only call (awaited without a group)") {
        scripted_model model({test::calls({test::call("c1", "nap", R"({"ms":-1})")}), ai_message("never")});
        auto a = make_agent(model, tool_set(napping_tool()));
        auto r = test::run_async(a, "go");
        CHECK(r.reason == stop_reason::error);
        const auto& ms = r.state.messages;
        REQUIRE(test::roles(ms) == strings{"human", "ai", "tool"});
        CHECK(ms[2].text() == "Error: the tool \"nap\" failed: cannot sleep a negative time");
        CHECK(model.calls() == 1);
    }
}

namespace {
// An asynchronous tool that makes a timer on the executor of its first call
// and waits on it in every later one, as a tool that keeps a connection would:
// it works only if the blocking loop's context outlives each call.
struct timer_keeping_tool {
    std::optional<asio::steady_timer> timer; // the tool's own: it goes before the contexts that serve it
    std::shared_ptr<int> waits = std::make_shared<int>(0);

    const tool_schema& schema() const {
        static const tool_schema s{"keep", "Waits on a timer it keeps.", boost::json::object{}};
        return s;
    }
    asio::awaitable<tool_output> async_call(const boost::json::object&, const tool_runtime&) {
        if (!timer) timer.emplace(co_await asio::this_coro::executor);
        timer->expires_after(std::chrono::milliseconds(1));
        co_await timer->async_wait(asio::use_awaitable);
        co_return tool_output("waited " + std::to_string(++*waits));
    }
};
} // namespace

TEST_CASE("the blocking loop calls an asynchronous tool on a context that outlives each call",
          "[agent][async]") {
    scripted_model model({test::calls({test::call("c1", "keep")}), test::calls({test::call("c2", "keep")}),
                          ai_message("done")});
    timer_keeping_tool tool;
    auto waits = tool.waits;
    auto a = make_agent(model, tool_set(std::move(tool)));
    auto r = a.invoke("go");
    REQUIRE(r.ok());
    CHECK(*waits == 2);
    CHECK(r.state.messages[4].text() == "waited 2");
    CHECK(r.answer() == "done");
}
