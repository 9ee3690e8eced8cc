// todo (plan mode): the tool and its text, the prompt block, parallel calls,
// the context-loss reminder, the premature-exit guard and its cap, bad input.
#include "../agent/support.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/middleware/todo.hpp>
#include <agentware/model/scripted_model.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <string>
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

TEST_CASE("todo items read tolerantly; the options name bad keys", "[middleware][todo][options]") {
    auto items =
        json_read_as<std::vector<todo_item>>(boost::json::parse(R"([{"content": "x"}, {}])"), "todos");
    CHECK(items == std::vector<todo_item>{{"x", "pending"}, {"", "pending"}});
    CHECK_THROWS_WITH(json_read_as<todo_options>(boost::json::parse(R"({"max_tracked_runs": 0})"), "todo"),
                      Catch::Contains("todo.max_tracked_runs"));
    CHECK_THROWS_WITH(json_read_as<todo_options>(boost::json::parse(R"({"reminders": 1})"), "todo"),
                      Catch::Contains("todo.reminders"));
}
