// The agent (agent/agent.hpp) and its blocking loop: rounds of model and tools, errors, the
// hooks in order across rounds and their jumps, and threads of conversation kept by a checkpointer.
#include <agentware/agent/agent.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

using namespace agentware;
using strings = std::vector<std::string>;

TEST_CASE("an answer without tool calls finishes the run", "[agent][loop]") {
    scripted_model model({ai_message("Hello!")});
    agent a(model, tool_set(test::echo_tool()), pipeline<>{}, agent_options{"You are terse.", {}, 4, true});
    auto r = a.invoke("Hi");
    CHECK(r.ok());
    CHECK(r.reason == stop_reason::finished);
    CHECK(r.rounds == 1);
    CHECK(test::roles(r.state.messages) == strings{"human", "ai"});
    CHECK(r.answer() == "Hello!");
    auto reqs = model.requests();
    REQUIRE(reqs.size() == 1);
    CHECK(reqs[0].system_prompt == "You are terse.");
    CHECK(reqs[0].tool_names == strings{"echo"});
    CHECK(reqs[0].messages.size() == 1);
    CHECK(r.state.messages[0].id.size() > 4); // the agent gives ids to what it stores
}

TEST_CASE("tool calls are run and their results go back to the model", "[agent][loop]") {
    scripted_model model({test::calls({test::call("c1", "echo", R"({"text":"ping"})")}), ai_message("done")});
    auto a = make_agent(model, tool_set(test::echo_tool()));
    auto r = a.invoke("echo ping");
    REQUIRE(r.ok());
    CHECK(test::roles(r.state.messages) == strings{"human", "ai", "tool", "ai"});
    const message& t = r.state.messages[2];
    CHECK(t.tool_call_id() == "c1");
    CHECK(t.name == "echo");
    CHECK(t.text() == "ping");
    CHECK_FALSE(t.is_error());
    auto reqs = model.requests();
    REQUIRE(reqs.size() == 2);
    CHECK(reqs[1].messages.size() == 3); // the second call saw the tool's answer
    // Without wrap_model_call hooks one request serves the run; it still reads the live history.
    CHECK(reqs[0].messages.size() == 1);
    CHECK(reqs[1].tool_names == strings{"echo"});
}

TEST_CASE("unknown tools, bad arguments and garbled JSON become error messages the model reads",
          "[agent][loop][errors]") {
    message garbled = test::calls({test::call("c3", "echo", R"({"text":"fine"})")});
    garbled.edit_invalid_tool_calls().push_back(
        invalid_tool_call{"c4", "echo", "{\"text\": oops", "not valid JSON"});
    scripted_model model({test::calls({test::call("c1", "search", R"({"q":"x"})"),
                                       test::call("c2", "echo", R"({"txt":"typo"})")}),
                          garbled, ai_message("sorry")});
    auto a = make_agent(model, tool_set(test::echo_tool()));
    auto r = a.invoke("go");
    REQUIRE(r.ok());
    const auto& ms = r.state.messages;
    CHECK(test::roles(ms) == strings{"human", "ai", "tool", "tool", "ai", "tool", "tool", "ai"});
    CHECK(ms[2].is_error());
    CHECK(ms[2].text() == "Error: there is no tool named \"search\". Available tools: echo.");
    CHECK(ms[3].is_error());
    CHECK_THAT(ms[3].text(), Catch::StartsWith("Error: invalid arguments for tool \"echo\": "));
    CHECK_THAT(ms[3].text(), Catch::Contains("\"text\""));
    // The garbled call is answered first, then the valid call runs.
    CHECK(ms[5].tool_call_id() == "c4");
    CHECK(ms[5].is_error());
    CHECK_THAT(ms[5].text(), Catch::Contains("not a valid JSON object"));
    CHECK(ms[6].tool_call_id() == "c3");
    CHECK(ms[6].text() == "fine");
}

TEST_CASE("the recursion limit stops the run with a clear error and keeps every message", "[agent][loop]") {
    scripted_model model({test::calls({test::call("", "echo", R"({"text":"again"})")})}, {true, true});
    auto a = make_agent(model, tool_set(test::echo_tool()));
    run_config cfg;
    cfg.recursion_limit = 5;
    auto r = a.invoke("loop forever", cfg);
    CHECK(r.reason == stop_reason::recursion_limit);
    CHECK_FALSE(r.ok());
    CHECK_THAT(r.error, Catch::Contains("recursion limit of 5 rounds"));
    CHECK(model.calls() == 5);
    CHECK(r.state.messages.size() == 1 + 5 * 2); // input, then 5 x (ai, tool)
    // Calls without ids got distinct ones, and each tool message answers its call.
    CHECK(r.state.messages[1].tool_calls[0].id != r.state.messages[3].tool_calls[0].id);
    CHECK(r.state.messages[2].tool_call_id() == r.state.messages[1].tool_calls[0].id);
}

TEST_CASE("a failing model ends the run with its error and loses no message", "[agent][loop][errors]") {
    scripted_model model({}); // no answer at all
    auto a = make_agent(model, tool_set{});
    auto r = a.invoke("anyone there?");
    CHECK(r.reason == stop_reason::error);
    CHECK_THAT(r.error, Catch::Contains("no scripted answer left"));
    REQUIRE(r.exception);
    CHECK_THROWS_AS(std::rethrow_exception(r.exception), model_error);
    CHECK(test::roles(r.state.messages) == strings{"human"});
}

TEST_CASE("a tool that throws ends the run, and its call still gets an answer", "[agent][loop][errors]") {
    auto boom =
        make_tool("boom", "Fails.", boost::json::object{}, [](const boost::json::object&) -> std::string {
            throw std::runtime_error("disk on fire");
        });
    scripted_model model(
        {test::calls({test::call("c1", "boom"), test::call("c2", "echo", R"({"text":"ok"})")}),
         ai_message("never")});
    auto a = make_agent(model, tool_set(boom, test::echo_tool()));
    auto r = a.invoke("try");
    CHECK(r.reason == stop_reason::error);
    CHECK_THAT(r.error, Catch::Contains("disk on fire"));
    const auto& ms = r.state.messages;
    REQUIRE(test::roles(ms) == strings{"human", "ai", "tool", "tool"});
    CHECK(ms[2].is_error());
    CHECK(ms[2].text() == "Error: the tool \"boom\" failed: disk on fire");
    CHECK(ms[3].text() == "ok");
}

namespace {
struct note {
    static constexpr std::string_view name = "notes";
    using value_type = std::vector<std::string>;
    static void merge(value_type& current, value_type&& update) {
        current.insert(current.end(), update.begin(), update.end());
    }
};
struct notes_middleware {
    using state_fields = fields<note>;
    void after_agent(auto& s) { get<note>(s).push_back("after_agent"); }
};
} // namespace

TEST_CASE("a tool can end the run and update other state fields", "[agent][loop][state]") {
    auto take_note = make_tool("take_note", "Stores a note.", boost::json::object{},
                               [](const boost::json::object& args, const tool_runtime& rt) {
                                   tool_output out("noted");
                                   std::string text(args.at("text").as_string());
                                   const auto* existing = rt.field<note>();
                                   std::string seen = existing ? std::to_string(existing->size()) : "none";
                                   out.update.set<note>({text + "#" + seen});
                                   out.end_run = text == "stop";
                                   return out;
                               });
    scripted_model model({test::calls({test::call("a", "take_note", R"({"text":"one"})"),
                                       test::call("b", "take_note", R"({"text":"two"})"),
                                       test::call("c", "take_note", R"({"text":"stop"})")}),
                          ai_message("unreachable")});
    auto a = make_agent(model, tool_set(take_note), notes_middleware{});
    auto r = a.invoke("note things");
    CHECK(r.reason == stop_reason::ended_by_tool);
    CHECK(model.calls() == 1);
    // Merged in call order whatever order the calls finished in.
    CHECK(r.state.get<note>() == strings{"one#0", "two#0", "stop#0", "after_agent"});
}

TEST_CASE("the tool calls of one round run concurrently, results in call order",
          "[agent][loop][concurrency]") {
    test::rendezvous meeting(3);
    auto gather = meeting.tool();
    scripted_model model({test::calls({test::call("1", "gather", R"({"n":"first"})"),
                                       test::call("2", "gather", R"({"n":"second"})"),
                                       test::call("3", "gather", R"({"n":"third"})")}),
                          ai_message("ok")});
    auto a = make_agent(model, tool_set(gather));
    auto r = a.invoke("go");
    REQUIRE(r.ok());
    CHECK(meeting.all_met());
    const auto& ms = r.state.messages;
    CHECK(ms[2].text() == "first");
    CHECK(ms[3].text() == "second");
    CHECK(ms[4].text() == "third");
}

TEST_CASE("on_update receives each step as it happens", "[agent][loop]") {
    scripted_model model({test::calls({test::call("c1", "echo", R"({"text":"x"})")}), ai_message("fin")});
    auto a = make_agent(model, tool_set(test::echo_tool()));
    strings steps;
    run_config cfg;
    cfg.on_update = [&](const agent_update& u) {
        steps.push_back(fmt::format("{}#{}:{}", u.node, u.round, u.messages.size()));
    };
    auto r = a.invoke("go", cfg);
    REQUIRE(r.ok());
    CHECK(steps == strings{"model#1:1", "tools#1:1", "model#2:1"});
}

namespace {

struct trace_field {
    static constexpr std::string_view name = "trace";
    using value_type = std::vector<std::string>;
};

// Records every node hook; jumps when told to.
template <char Name>
struct tracer {
    using state_fields = fields<trace_field>;
    std::optional<jump_to> before_model_jump, after_model_jump, before_agent_jump;
    int before_model_jumps_left = 1, after_model_jumps_left = 1;

    static void log(auto& s, const char* hook) {
        get<trace_field>(s).push_back(std::string(1, Name) + "." + hook);
    }
    hook_result before_agent(auto& s, runtime&) {
        log(s, "before_agent");
        return before_agent_jump;
    }
    hook_result before_model(auto& s, runtime&) {
        log(s, "before_model");
        if (before_model_jump && before_model_jumps_left-- > 0) return before_model_jump;
        return {};
    }
    hook_result after_model(auto& s, runtime&) {
        log(s, "after_model");
        if (after_model_jump && after_model_jumps_left-- > 0) return after_model_jump;
        return {};
    }
    void after_agent(auto& s, runtime&) { log(s, "after_agent"); }
};

} // namespace

TEST_CASE("hooks run in order across the rounds of a run", "[agent][hooks]") {
    scripted_model model({test::calls({test::call("c1", "echo", R"({"text":"x"})")}), ai_message("done")});
    auto a = make_agent(model, tool_set(test::echo_tool()), tracer<'a'>{}, tracer<'b'>{});
    auto r = a.invoke("go");
    REQUIRE(r.ok());
    CHECK(r.state.get<trace_field>() ==
          strings{"a.before_agent", "b.before_agent",                                   // once
                  "a.before_model", "b.before_model", "b.after_model", "a.after_model", // round 1
                  "a.before_model", "b.before_model", "b.after_model", "a.after_model", // round 2
                  "b.after_agent", "a.after_agent"});                                   // once
}

TEST_CASE("a jump to end from before_model skips the model but still runs after_agent",
          "[agent][hooks][jump]") {
    scripted_model model({ai_message("never")});
    tracer<'a'> a_mw;
    a_mw.before_model_jump = jump_to::end;
    auto a = make_agent(model, tool_set{}, a_mw, tracer<'b'>{});
    auto r = a.invoke("go");
    CHECK(r.reason == stop_reason::ended_by_hook);
    CHECK(model.calls() == 0);
    CHECK(r.state.get<trace_field>() ==
          strings{"a.before_agent", "b.before_agent", "a.before_model", "b.after_agent", "a.after_agent"});
}

TEST_CASE("a jump to model from after_model goes back through before_model", "[agent][hooks][jump]") {
    scripted_model model({ai_message("first try"), ai_message("second try")});
    tracer<'b'> b_mw;
    b_mw.after_model_jump = jump_to::model;
    auto a = make_agent(model, tool_set{}, tracer<'a'>{}, b_mw);
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::finished);
    CHECK(model.calls() == 2);
    CHECK(r.answer() == "second try");
    CHECK(r.state.get<trace_field>() == strings{"a.before_agent", "b.before_agent", "a.before_model",
                                                "b.before_model",
                                                "b.after_model", // b jumped: a.after_model skipped
                                                "a.before_model", "b.before_model", "b.after_model",
                                                "a.after_model", "b.after_agent", "a.after_agent"});
}

TEST_CASE("a jump to end from before_agent skips the loop", "[agent][hooks][jump]") {
    scripted_model model({ai_message("never")});
    tracer<'a'> a_mw;
    a_mw.before_agent_jump = jump_to::end;
    auto a = make_agent(model, tool_set{}, a_mw);
    auto r = a.invoke("go");
    CHECK(r.reason == stop_reason::ended_by_hook);
    CHECK(model.calls() == 0);
    CHECK(r.state.get<trace_field>() == strings{"a.before_agent", "a.after_agent"});
}

TEST_CASE("invoking the same thread again continues its conversation", "[agent][threads]") {
    scripted_model model(
        {ai_message("first answer"), ai_message("second answer"), ai_message("other thread")});
    auto a = make_agent(model, tool_set{});
    memory_checkpointer store;
    a.use_checkpointer(store);
    run_config t1;
    t1.thread_id = "t1";
    run_config t2;
    t2.thread_id = "t2";
    REQUIRE(a.invoke("one", t1).ok());
    auto again = a.invoke("two", t1);
    REQUIRE(again.ok());
    CHECK(test::roles(again.state.messages) == strings{"human", "ai", "human", "ai"});
    CHECK(again.first_new_message == 2);
    CHECK(again.new_messages().size() == 2);
    auto other = a.invoke("three", t2);
    CHECK(test::roles(other.state.messages) == strings{"human", "ai"});
    auto reqs = model.requests();
    REQUIRE(reqs.size() == 3);
    CHECK(reqs[1].messages.size() == 3);
    CHECK(reqs[2].messages.size() == 1);
    CHECK(store.list() == strings{"t1", "t2"});
}

TEST_CASE("a directory checkpointer lets a new agent continue a thread", "[agent][threads]") {
    auto dir = std::filesystem::temp_directory_path() /
               ("agentware-threads-" + std::to_string(std::random_device{}()));
    {
        auto a = make_agent(scripted_model({ai_message("remembered")}), tool_set{});
        a.use_checkpointer(file_checkpointer(dir));
        run_config cfg;
        cfg.thread_id = "conversation-1";
        REQUIRE(a.invoke("remember this", cfg).ok());
    }
    scripted_model model({ai_message("yes")});
    auto b = make_agent(model, tool_set{});
    b.use_checkpointer(file_checkpointer(dir));
    run_config cfg;
    cfg.thread_id = "conversation-1";
    auto r = b.invoke("do you remember?", cfg);
    REQUIRE(r.ok());
    CHECK(test::roles(r.state.messages) == strings{"human", "ai", "human", "ai"});
    CHECK(r.state.messages[1].text() == "remembered");
    CHECK(model.requests().at(0).messages.size() == 3);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a bad thread id is an error result, not a crash", "[agent][threads][errors]") {
    auto a = make_agent(scripted_model({ai_message("x")}), tool_set{});
    a.use_checkpointer(memory_checkpointer{});
    run_config cfg;
    cfg.thread_id = "../../etc";
    auto r = a.invoke("hi", cfg);
    CHECK(r.reason == stop_reason::error);
    CHECK_THAT(r.error, Catch::Contains("invalid thread id"));
}

namespace {
// Answers from the conversation alone, so concurrent runs cannot take each other's answers.
struct call_then_answer_model {
    model_response invoke(const chat_request& r) {
        if (r.messages.back().is_tool()) return {ai_message("ok"), {}};
        return {test::calls({test::call("", "echo", R"({"text":"x"})")}), {}};
    }
};
} // namespace

TEST_CASE("one agent serves concurrent runs on different threads", "[agent][threads][concurrency]") {
    call_then_answer_model model;
    auto a = make_agent(model, tool_set(test::echo_tool()));
    memory_checkpointer store;
    a.use_checkpointer(store);
    constexpr int workers = 6, turns = 10;
    std::vector<std::thread> threads;
    std::vector<int> good(workers, 0);
    for (int w = 0; w < workers; ++w)
        threads.emplace_back([&, w] {
            run_config cfg;
            cfg.thread_id = "worker-" + std::to_string(w);
            for (int t = 0; t < turns; ++t)
                if (a.invoke("turn " + std::to_string(t), cfg).ok()) ++good[static_cast<std::size_t>(w)];
        });
    for (auto& t : threads)
        t.join();
    for (int w = 0; w < workers; ++w) {
        CHECK(good[static_cast<std::size_t>(w)] == turns);
        auto saved = store.load("worker-" + std::to_string(w));
        REQUIRE(saved);
        CHECK(saved->at("messages").as_array().size() == turns * 4);
    }
}
