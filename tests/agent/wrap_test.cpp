// agent/wrap.hpp: wrap hooks written once for both loops with map_response (looks at the
// response, or answers for what the chain threw) and short_circuit (answers without `next`).
#include <agentware/agent/wrap.hpp>

#include "run_async.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>

using namespace agentware;
using strings = std::vector<std::string>;

namespace wrap_test {

// Marks the model's answer with "!" and each tool result with "?".
struct marks_responses {
    auto wrap_model_call(auto& req, auto&& next) {
        return map_response(req, next, [](model_response r) {
            r.ai.content.push_back(text_block("!"));
            return r;
        });
    }
    auto wrap_tool_call(auto& req, auto&& next) {
        return map_response(req, next, [](tool_response r) {
            r.msg.content.push_back(text_block("?"));
            return r;
        });
    }
};

// Answers in the place of a model or a tool that failed, and counts the failures it saw.
struct stands_in {
    std::shared_ptr<std::atomic<int>> failures = std::make_shared<std::atomic<int>>(0);

    auto wrap_model_call(auto& req, auto&& next) {
        return map_response(
            req, next, [](model_response r) { return r; },
            [failures = failures](std::exception_ptr) {
                ++*failures;
                model_response r;
                r.ai = ai_message("The model is unavailable.");
                return r;
            });
    }
    auto wrap_tool_call(auto& req, auto&& next) {
        return map_response(
            req, next, [](tool_response r) { return r; },
            [failures = failures, id = req.call->id, name = req.call->name](std::exception_ptr e) {
                ++*failures;
                std::string what = "unknown failure";
                try {
                    std::rethrow_exception(e);
                } catch (const std::exception& x) {
                    what = x.what();
                }
                return tool_response{tool_message(id, name, "Error: " + what, tool_status::error), {}, false};
            });
    }
};

// Answers every model call from a cache, and refuses the tool `rm`, without calling `next`.
struct answers_first {
    auto wrap_model_call(auto& req, auto&& next) {
        return short_circuit(req, next, model_response{ai_message("from the cache"), {}});
    }
};
struct refuses_rm {
    auto wrap_tool_call(auto& req, auto&& next) {
        if (req.call->name == "rm")
            return short_circuit(
                req, next,
                tool_response{
                    tool_message(req.call->id, "rm", "Error: not allowed", tool_status::error), {}, false});
        return next(req);
    }
};

inline auto failing_tool() {
    return make_tool("boom", "Fails.", boost::json::object{}, [](const boost::json::object&) -> std::string {
        throw std::runtime_error("disk on fire");
    });
}

} // namespace wrap_test

TEST_CASE("map_response changes the model's and the tools' responses, in both loops", "[agent][wrap]") {
    for (bool coroutine : {false, true}) {
        INFO((coroutine ? "coroutine loop" : "blocking loop"));
        scripted_model model(
            {test::calls({test::call("c1", "echo", R"({"text":"hi"})")}), ai_message("done")});
        auto a = make_agent(model, tool_set(test::echo_tool()), wrap_test::marks_responses{});
        auto r = coroutine ? test::run_async(a, "go") : a.invoke("go");
        REQUIRE(r.ok());
        CHECK(test::roles(r.state.messages) == strings{"human", "ai", "tool", "ai"});
        CHECK(r.state.messages[1].text() == "!"); // the first answer: its tool call, and the mark
        CHECK(r.state.messages[2].text() == "hi?");
        CHECK(r.answer() == "done!");
    }
}

TEST_CASE("map_response's on_error answers for a model and a tool that threw, in both loops",
          "[agent][wrap][errors]") {
    for (bool coroutine : {false, true}) {
        INFO((coroutine ? "coroutine loop" : "blocking loop"));
        // One answer only: the second model call throws "no scripted answer left".
        scripted_model model(
            {test::calls({test::call("c1", "boom"), test::call("c2", "echo", R"({"text":"ok"})")})});
        wrap_test::stands_in mw;
        auto a = make_agent(model, tool_set(wrap_test::failing_tool(), test::echo_tool()), mw);
        auto r = coroutine ? test::run_async(a, "go") : a.invoke("go");
        REQUIRE(r.ok());
        CHECK(*mw.failures == 2);
        CHECK(model.requests().size() == 2); // asked twice, answered once
        CHECK(model.calls() == 1);
        CHECK(test::roles(r.state.messages) == strings{"human", "ai", "tool", "tool", "ai"});
        CHECK(r.state.messages[2].text() == "Error: disk on fire");
        CHECK(r.state.messages[2].status == tool_status::error);
        CHECK(r.state.messages[3].text() == "ok");
        CHECK(r.answer() == "The model is unavailable.");
    }
}

TEST_CASE("map_response without on_error lets what the chain throws through, in both loops",
          "[agent][wrap][errors]") {
    for (bool coroutine : {false, true}) {
        INFO((coroutine ? "coroutine loop" : "blocking loop"));
        scripted_model model({}); // the model throws
        auto a = make_agent(model, tool_set{}, wrap_test::marks_responses{});
        auto r = coroutine ? test::run_async(a, "go") : a.invoke("go");
        CHECK(r.reason == stop_reason::error);
        CHECK_THAT(r.error, Catch::Contains("no scripted answer left"));
        CHECK(test::roles(r.state.messages) == strings{"human"});
    }
}

TEST_CASE("an interrupt passes map_response's on_error and pauses the run, in both loops",
          "[agent][wrap][interrupt]") {
    for (bool coroutine : {false, true}) {
        INFO((coroutine ? "coroutine loop" : "blocking loop"));
        auto ask = make_tool(
            "ask", "Asks the user.", boost::json::object{},
            [](const boost::json::object&, const tool_runtime& rt) {
                boost::json::value answer = rt.interrupt(boost::json::object{{"question", "color?"}});
                return "answer: " + std::string(answer.as_string());
            });
        scripted_model model({test::calls({test::call("c1", "ask")}), ai_message("all done")});
        wrap_test::stands_in mw;
        auto a = make_agent(model, tool_set(ask), mw);
        a.use_checkpointer(memory_checkpointer{});
        run_config cfg;
        cfg.thread_id = "wrap-interrupt";
        auto paused = coroutine ? test::run_async(a, "go", cfg) : a.invoke("go", cfg);
        REQUIRE(paused.reason == stop_reason::interrupted);
        REQUIRE(paused.interrupts.size() == 1);
        CHECK(paused.interrupts[0].id == "c1");
        CHECK(*mw.failures == 0); // a pause is not a failure
        auto done = coroutine ? test::resume_async(a, resume{"blue"}, cfg) : a.invoke(resume{"blue"}, cfg);
        REQUIRE(done.reason == stop_reason::finished);
        CHECK(done.state.messages[2].text() == "answer: blue");
        CHECK(done.answer() == "all done");
        CHECK(*mw.failures == 0);
    }
}

TEST_CASE("short_circuit answers without calling the next handler, in both loops", "[agent][wrap]") {
    for (bool coroutine : {false, true}) {
        INFO((coroutine ? "coroutine loop" : "blocking loop"));
        scripted_model model({}); // would throw if it were called
        auto a = make_agent(model, tool_set{}, wrap_test::answers_first{});
        auto r = coroutine ? test::run_async(a, "go") : a.invoke("go");
        REQUIRE(r.ok());
        CHECK(model.calls() == 0);
        CHECK(r.answer() == "from the cache");

        auto rm_runs = std::make_shared<std::atomic<int>>(0);
        auto rm =
            make_tool("rm", "Removes files.", boost::json::object{}, [rm_runs](const boost::json::object&) {
                ++*rm_runs;
                return std::string("removed");
            });
        scripted_model tool_model(
            {test::calls({test::call("c1", "rm"), test::call("c2", "echo", R"({"text":"hi"})")}),
             ai_message("ok")});
        auto b = make_agent(tool_model, tool_set(rm, test::echo_tool()), wrap_test::refuses_rm{});
        auto s = coroutine ? test::run_async(b, "go") : b.invoke("go");
        REQUIRE(s.ok());
        CHECK(*rm_runs == 0);
        CHECK(s.state.messages[2].text() == "Error: not allowed");
        CHECK(s.state.messages[2].status == tool_status::error);
        CHECK(s.state.messages[3].text() == "hi");
    }
}
