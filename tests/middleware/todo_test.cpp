// todo (plan mode): the tool and its text, the prompt block, parallel calls,
// the context-loss reminder, the premature-exit guard and its cap, the
// bookkeeping per (thread, run) with before_agent's cleanup and the key cap,
// bad input.
#include "../agent/support.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/middleware/todo.hpp>
#include <agentware/model/scripted_model.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <string>
#include <string_view>
#include <vector>

using namespace agentware;
using strings = std::vector<std::string>;

namespace {

tool_call write(std::string id, std::string todos_json) {
    return test::call(std::move(id), "write_todos", R"({"todos": )" + todos_json + "}");
}

run_config plan(std::string run = "run-1") {
    run_config cfg;
    cfg.run_id = std::move(run);
    cfg.context["is_plan_mode"] = true;
    return cfg;
}

using todo_state = agent_state<pipeline<todo>>;

// A run in plan mode, as the agent builds its runtime.
runtime plan_runtime(std::string thread, std::string run) {
    runtime rt;
    rt.thread_id = std::move(thread);
    rt.run_id = std::move(run);
    rt.context["is_plan_mode"] = true;
    return rt;
}

// A history that ends in a clean final answer while `item` is still open.
todo_state open_item(std::string item) {
    todo_state s;
    s.messages = {human_message("go"), ai_message("all done")};
    get<todos_field>(s) = {{std::move(item), "pending"}};
    return s;
}

// The completion reminder wrap_model_call shows the model for this run ("" if none).
std::string delivered(todo& t, todo_state& s, runtime& rt) {
    model_request<todo_state> req;
    req.messages = cow_vector<message>(s.messages);
    req.state = &s;
    req.rt = &rt;
    std::string shown;
    t.wrap_model_call(req, [&](model_request<todo_state>& r) {
        const message& last = r.messages[r.messages.size() - 1];
        if (last.name == todo::completion_name) shown = last.text();
        return model_response{ai_message("ok"), {}};
    });
    return shown;
}

std::string reminder_for(std::string_view item) {
    return std::string(todo::completion_head) + "- [pending] " + std::string(item) + "\n" +
           std::string(todo::completion_tail);
}

} // namespace

TEST_CASE("write_todos replaces the list and answers with LangChain's text", "[middleware][todo]") {
    scripted_model model(
        {test::calls({write(
             "w1",
             R"([{"content": "Read 'spec'", "status": "in_progress"}, {"content": "B", "status": "pending"}])")}),
         test::calls({write(
             "w2",
             R"([{"content": "Read 'spec'", "status": "completed"}, {"content": "B", "status": "completed"}])")}),
         ai_message("done")});
    auto a = make_agent(model, tool_set{}, todo{});
    decltype(a)::state_type state;
    auto r = a.run(state, "plan it", plan());
    REQUIRE(r.ok());
    CHECK(get<todos_field>(state) ==
          std::vector<todo_item>{{"Read 'spec'", "completed"}, {"B", "completed"}});
    CHECK(
        state.messages[2].text() ==
        R"(Updated todo list to [{'content': "Read 'spec'", 'status': 'in_progress'}, {'content': 'B', 'status': 'pending'}])");
    // The prompt block reaches the model, after the agent's prompt.
    auto reqs = model.requests();
    CHECK(reqs[0].system_prompt.find("<todo_list_system>") != std::string::npos);
    CHECK(std::find(reqs[0].tool_names.begin(), reqs[0].tool_names.end(), "write_todos") !=
          reqs[0].tool_names.end());
}

TEST_CASE("todo outside plan mode hides its tool and does nothing", "[middleware][todo]") {
    scripted_model model({ai_message("hi")});
    auto a = make_agent(model, tool_set{}, todo{});
    decltype(a)::state_type state;
    get<todos_field>(state) = {{"open", "pending"}};
    REQUIRE(a.run(state, "hello").ok());
    auto req = model.requests().at(0);
    CHECK(req.tool_names.empty());
    CHECK(req.system_prompt.find("todo_list_system") == std::string::npos);
    CHECK(state.messages.size() == 2); // no reminder, no jump back
}

TEST_CASE("parallel write_todos calls each get the error and change nothing", "[middleware][todo]") {
    scripted_model model({test::calls({write("w1", R"([{"content": "A", "status": "pending"}])"),
                                       write("w2", R"([{"content": "B", "status": "pending"}])")}),
                          ai_message("ok")});
    auto a = make_agent(model, tool_set{}, todo{});
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "go", plan()).ok());
    CHECK(get<todos_field>(state).empty());
    REQUIRE(state.messages.size() == 5);
    for (int i : {2, 3}) {
        CHECK(state.messages[i].text() == todo::parallel_error);
        CHECK(state.messages[i].is_error());
    }
}

TEST_CASE("a todo list that is not a list is a tool error, not a crash", "[middleware][todo][errors]") {
    scripted_model model(
        {test::calls({test::call("w1", "write_todos", R"({"todos": "buy milk"})")}), ai_message("ok")});
    auto a = make_agent(model, tool_set{}, todo{});
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "go", plan()).ok());
    CHECK(state.messages[2].is_error());
    CHECK(get<todos_field>(state).empty());
}

TEST_CASE("the context-loss reminder appears once when the list's calls are gone", "[middleware][todo]") {
    // Items stay open, so the guard sends the model back twice: three answers.
    scripted_model model({ai_message("a"), ai_message("b"), ai_message("c")});
    auto a = make_agent(model, tool_set{}, todo{});
    decltype(a)::state_type state;
    get<todos_field>(state) = {{"Write report", "in_progress"}, {"", ""}};
    REQUIRE(a.run(state, "continue", plan()).ok());
    const message& reminder = state.messages[1];
    CHECK(reminder.name == "todo_reminder");
    CHECK(reminder.metadata.at("hide_from_ui") == true);
    CHECK(reminder.text() == "<system_reminder>\nYour todo list from earlier is no longer visible in the "
                             "current context window, but "
                             "it is still active. Here is the current state:\n\n- [in_progress] Write "
                             "report\n- [pending] \n\nContinue "
                             "tracking and updating this todo list as you work. Call `write_todos` whenever "
                             "the status of any item "
                             "changes.\n</system_reminder>");
    // The guard sends the model back (items open); the reminder is not added twice.
    std::size_t reminders = 0;
    for (const auto& m : state.messages)
        reminders += m.name == "todo_reminder";
    CHECK(reminders == 1);
}

TEST_CASE("the premature-exit guard sends the model back at most twice per run, with the open items",
          "[middleware][todo]") {
    scripted_model model(
        {ai_message("done?"), ai_message("really done"), ai_message("final"), ai_message("next run")});
    todo t;
    auto a = make_agent(model, tool_set{}, t);
    decltype(a)::state_type state;
    state.messages.push_back(human_message("start"));
    state.messages.push_back(test::calls({write("w0", "[]")}));
    state.messages.push_back(tool_message("w0", "write_todos", "Updated todo list to []"));
    get<todos_field>(state) = {{"A", "completed"}, {"B", "pending"}};
    auto r = a.run(state, "finish", plan());
    REQUIRE(r.ok());
    CHECK(r.rounds == 3);
    auto reqs = model.requests();
    REQUIRE(reqs.size() == 3);
    const message& shown = reqs[1].messages.back();
    CHECK(shown.name == "todo_completion_reminder");
    CHECK(shown.text() ==
          "<system_reminder>\nYou have incomplete todo items that must be finished before giving "
          "your final response:\n\n- [pending] B\n\nPlease continue working on these tasks. Call "
          "`write_todos` to mark items as completed as you finish them, and only respond when all "
          "items are done.\n</system_reminder>");
    // Request only: not stored.
    for (const auto& m : state.messages)
        CHECK(m.name != "todo_completion_reminder");
    runtime finished;
    finished.thread_id = "default";
    finished.run_id = "run-1";
    CHECK(t.pending_reminders(finished) == 0);
    // A new run has its own two.
    auto r2 = a.run(state, "again", plan("run-2"));
    REQUIRE(r2.reason == stop_reason::error); // the script ran out: the guard asked again
}

TEST_CASE("todo items read tolerantly, the options name bad keys", "[middleware][todo][options]") {
    auto items =
        json_read_as<std::vector<todo_item>>(boost::json::parse(R"([{"content": "x"}, {}])"), "todos");
    CHECK(items == std::vector<todo_item>{{"x", "pending"}, {"", "pending"}});
    CHECK_THROWS_WITH(json_read_as<todo_options>(boost::json::parse(R"({"max_tracked_runs": 0})"), "todo"),
                      Catch::Contains("todo.max_tracked_runs"));
    CHECK_THROWS_WITH(json_read_as<todo_options>(boost::json::parse(R"({"reminders": 1})"), "todo"),
                      Catch::Contains("todo.reminders"));
}

TEST_CASE("todo reminders are kept per thread: one thread's count and queue never reach another",
          "[middleware][todo]") {
    todo t;
    // The same run id in two threads: still two keys.
    runtime a = plan_runtime("thread-a", "run-1");
    runtime b = plan_runtime("thread-b", "run-1");
    todo_state sa = open_item("A's item");
    todo_state sb = open_item("B's item");
    CHECK(t.after_model(sa, a) == jump_to::model);
    CHECK(t.after_model(sa, a) == jump_to::model);
    CHECK_FALSE(t.after_model(sa, a)); // thread a used its two
    CHECK(t.pending_reminders(a) == 2);
    CHECK(t.pending_reminders(b) == 0);
    // Thread b has its own two, whatever thread a did.
    CHECK(t.after_model(sb, b) == jump_to::model);
    CHECK(t.pending_reminders(b) == 1);
    // Each request gets its own thread's reminder only (a's two are the same text: shown once).
    CHECK(delivered(t, sb, b) == reminder_for("B's item"));
    CHECK(t.pending_reminders(a) == 2);
    CHECK(delivered(t, sa, a) == reminder_for("A's item"));
    CHECK(delivered(t, sa, a).empty()); // delivered once
    CHECK(t.after_model(sb, b) == jump_to::model);
    CHECK_FALSE(t.after_model(sb, b));
}

TEST_CASE("todo's before_agent drops the thread's other runs, not the run itself nor other threads",
          "[middleware][todo]") {
    todo t;
    runtime a1 = plan_runtime("thread-a", "run-1");
    runtime a2 = plan_runtime("thread-a", "run-2");
    runtime b1 = plan_runtime("thread-b", "run-1");
    todo_state sa = open_item("A");
    todo_state sb = open_item("B");
    REQUIRE(t.after_model(sa, a1) == jump_to::model);
    REQUIRE(t.after_model(sa, a1) == jump_to::model);
    REQUIRE_FALSE(t.after_model(sa, a1));
    REQUIRE(t.after_model(sb, b1) == jump_to::model);
    // Run 2 of thread a starts: run 1's queue and count are gone.
    t.before_agent(sa, a2);
    CHECK(t.pending_reminders(a1) == 0);
    CHECK(t.pending_reminders(b1) == 1);
    CHECK(t.after_model(sa, a1) == jump_to::model); // counted afresh
    // A run starting again keeps its own entry.
    t.before_agent(sb, b1);
    CHECK(t.pending_reminders(b1) == 1);
    // after_agent forgets the finished run only.
    t.after_agent(sb, b1);
    CHECK(t.pending_reminders(b1) == 0);
    CHECK(t.pending_reminders(a1) == 1);
}

TEST_CASE("todo keeps at most max_tracked_runs keys, dropping the least recently touched",
          "[middleware][todo]") {
    CHECK(todo_options{}.max_tracked_runs == 4096);
    SECTION("two keys: the third evicts the one touched longest ago") {
        todo_options o;
        o.max_tracked_runs = 2;
        todo t(o);
        runtime r1 = plan_runtime("t1", "r"), r2 = plan_runtime("t2", "r"), r3 = plan_runtime("t3", "r");
        todo_state s = open_item("x");
        REQUIRE(t.after_model(s, r1) == jump_to::model);
        REQUIRE(t.after_model(s, r2) == jump_to::model);
        REQUIRE(t.after_model(s, r1) == jump_to::model); // r1 touched again: r2 is now the oldest
        REQUIRE(t.after_model(s, r3) == jump_to::model);
        CHECK(t.pending_reminders(r1) == 2);
        CHECK(t.pending_reminders(r2) == 0); // evicted
        CHECK(t.pending_reminders(r3) == 1);
    }
    SECTION("one key: an evicted run's count is forgotten, so it may be reminded again") {
        todo_options o;
        o.max_tracked_runs = 1;
        todo t(o);
        runtime r1 = plan_runtime("t1", "r"), r2 = plan_runtime("t2", "r");
        todo_state s = open_item("x");
        REQUIRE(t.after_model(s, r1) == jump_to::model);
        REQUIRE(t.after_model(s, r1) == jump_to::model);
        REQUIRE_FALSE(t.after_model(s, r1));
        REQUIRE(t.after_model(s, r2) == jump_to::model);
        CHECK(t.pending_reminders(r1) == 0);
        CHECK(t.pending_reminders(r2) == 1);
        CHECK(t.after_model(s, r1) == jump_to::model);
        CHECK(t.pending_reminders(r2) == 0);
    }
}
