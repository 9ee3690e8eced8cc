// Middleware from a function: each hook made from a lambda runs where the
// member hook would, composes with others, and a wrong signature is refused.
#include "../agent/run_async.hpp"
#include "../agent/support.hpp"

#include <agentware/middleware/from_function.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace agentware;

TEST_CASE("hooks from lambdas run in LangChain's order", "[middleware][from_function]") {
    auto log = std::make_shared<std::vector<std::string>>();
    scripted_model model({test::calls({test::call("c1", "echo", R"({"text":"x"})")}), ai_message("done")});
    auto a = make_agent(
        model, tool_set(test::echo_tool()),
        before_agent([log](auto&, runtime&) { log->push_back("before_agent"); }),
        before_model(
            [log](auto& state) { log->push_back("before_model " + std::to_string(state.messages.size())); }),
        wrap_model_call([log](auto& req, auto&& next) {
            log->push_back("wrap_model_call");
            return next(req);
        }),
        after_model([log](auto&, runtime& rt) { log->push_back("after_model " + std::to_string(rt.round)); }),
        wrap_tool_call([log](auto& req, auto&& next) {
            log->push_back("wrap_tool_call " + req.call->name);
            return next(req);
        }),
        after_agent([log](auto&) { log->push_back("after_agent"); }));
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::finished);
    CHECK(*log == std::vector<std::string>{"before_agent", "before_model 1", "wrap_model_call",
                                           "after_model 1", "wrap_tool_call echo", "before_model 3",
                                           "wrap_model_call", "after_model 2", "after_agent"});
}

TEST_CASE("a node hook from a lambda may jump, dynamic_system_prompt sets each call's prompt",
          "[middleware][from_function]") {
    scripted_model model({ai_message("one"), ai_message("two")});
    auto a = make_agent(model, tool_set{}, dynamic_system_prompt([](const auto& state, const runtime& rt) {
                            return "You are talking to " + rt.thread_id + " (" +
                                   std::to_string(state.messages.size()) + " messages)";
                        }),
                        before_model([](auto& state, runtime&) -> hook_result {
                            if (state.messages.size() > 2) return jump_to::end;
                            return std::nullopt;
                        }));
    a.use_checkpointer(memory_checkpointer{});
    run_config cfg;
    cfg.thread_id = "ana";
    CHECK(a.invoke("hi", cfg).answer() == "one");
    CHECK(model.requests().at(0).system_prompt == "You are talking to ana (1 messages)");
    auto r = a.invoke("again", cfg);
    CHECK(r.answer() == "one"); // ended before the model
    CHECK(model.calls() == 1);
}

TEST_CASE("hooks from lambdas in the coroutine loop", "[middleware][from_function][async]") {
    scripted_model model({ai_message("done")});
    int seen = 0;
    auto a =
        make_agent(model, tool_set{}, after_model([&seen](auto&) { ++seen; }),
                   dynamic_system_prompt([](const auto&, const runtime&) { return std::string("async"); }));
    auto r = test::run_async(a, "go");
    CHECK(r.answer() == "done");
    CHECK(seen == 1);
    CHECK(model.requests().at(0).system_prompt == "async");
}

// A lambda with the wrong signature is refused at compile time, with the
// pipeline's message naming the hook (see tests/compile_fail/).
template <class M, class S>
concept runs_before_model = requires(M m, S s, runtime rt) { m.before_model(s, rt); };
static_assert(!runs_before_model<before_model_fn<void (*)(int)>, basic_state<type_list<>>>);
static_assert(
    runs_before_model<before_model_fn<void (*)(basic_state<type_list<>>&)>, basic_state<type_list<>>>);
