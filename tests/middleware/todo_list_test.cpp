// todo_list (LangChain's TodoListMiddleware): always on by default, its
// configurable prompt and tool description, the parallel-call error, the
// context switch, the options' JSON form, and DeerFlow's todo built on it.
#include "../agent/support.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/middleware/todo.hpp>
#include <agentware/middleware/todo_list.hpp>
#include <agentware/model/scripted_model.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

using namespace agentware;

namespace todo_list_test {

inline tool_call write_call(std::string id, std::string todos_json) {
    return test::call(std::move(id), "write_todos", R"({"todos": )" + todos_json + "}");
}

inline bool offers(const std::vector<std::string>& names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

} // namespace todo_list_test

TEST_CASE("todo_list plans in every run with LangChain's texts", "[middleware][todo_list]") {
    scripted_model model(
        {test::calls({todo_list_test::write_call("w1", R"([{"content": "A", "status": "in_progress"}])")}),
         ai_message("done")});
    auto a = make_agent(model, tool_set{}, todo_list{});
    a.options().system_prompt = "Be brief.";
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "go").ok());
    CHECK(get<todos_field>(state) == std::vector<todo_item>{{"A", "in_progress"}});
    CHECK(state.messages[2].text() == "Updated todo list to [{'content': 'A', 'status': 'in_progress'}]");
    const auto reqs = model.requests();
    CHECK(reqs[0].system_prompt == "Be brief.\n\n" + std::string(todo_list_options::default_system_prompt));
    CHECK(todo_list_test::offers(reqs[0].tool_names, "write_todos"));
    // The finished list does not send the model back: that is DeerFlow's guard, not LangChain's.
    CHECK(reqs.size() == 2);
}

TEST_CASE("todo_list's prompt and description are options, an empty prompt adds nothing",
          "[middleware][todo_list]") {
    todo_list_options o;
    o.system_prompt = "";
    o.tool_description = "Keep a plan.";
    todo_list mw(o);
    REQUIRE(mw.tools().size() == 1);
    CHECK(mw.tools()[0]->schema().description == "Keep a plan.");
    scripted_model model({ai_message("hi")});
    auto a = make_agent(model, tool_set{}, mw);
    a.options().system_prompt = "P";
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "go").ok());
    CHECK(model.requests()[0].system_prompt == "P");
}

TEST_CASE("todo_list answers parallel writes with LangChain's error", "[middleware][todo_list]") {
    scripted_model model(
        {test::calls({todo_list_test::write_call("w1", R"([{"content": "A", "status": "pending"}])"),
                      todo_list_test::write_call("w2", R"([{"content": "B", "status": "pending"}])")}),
         ai_message("ok")});
    auto a = make_agent(model, tool_set{}, todo_list{});
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "go").ok());
    CHECK(get<todos_field>(state).empty());
    for (int i : {2, 3}) {
        CHECK(
            state.messages[i].text() ==
            "Error: The `write_todos` tool should never be called multiple times in parallel. Please call it "
            "only once per model invocation to update the todo list.");
        CHECK(state.messages[i].is_error());
    }
}

TEST_CASE("todo_list with active_when acts only in runs whose context sets it", "[middleware][todo_list]") {
    todo_list_options o;
    o.active_when = "planning";
    scripted_model model({ai_message("a"), ai_message("b")});
    auto a = make_agent(model, tool_set{}, todo_list(o));
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "off").ok());
    run_config on;
    on.context["planning"] = true;
    REQUIRE(a.run(state, "on", on).ok());
    const auto reqs = model.requests();
    CHECK_FALSE(todo_list_test::offers(reqs[0].tool_names, "write_todos"));
    CHECK(reqs[0].system_prompt.find("write_todos") == std::string::npos);
    CHECK(todo_list_test::offers(reqs[1].tool_names, "write_todos"));
}

TEST_CASE("DeerFlow's todo is todo_list configured for plan mode", "[middleware][todo_list][todo]") {
    STATIC_REQUIRE(std::is_base_of_v<todo_list, todo>);
    todo_options o;
    o.plan_mode_key = "plan";
    todo t(o);
    CHECK(t.list_options().active_when == "plan");
    CHECK(t.list_options().system_prompt == todo::system_prompt_block);
    CHECK(t.list_options().tool_description == todo::tool_description);
    CHECK(t.tools()[0]->schema().description == todo::tool_description);
    CHECK(todo::parallel_error == todo_list::parallel_error);
}

TEST_CASE("todo_list options in JSON name bad keys and types", "[middleware][todo_list][options]") {
    auto o = json_read_as<todo_list_options>(
        boost::json::parse(R"({"system_prompt": "S", "tool_description": "D", "active_when": "k"})"),
        "todo_list");
    CHECK(o.system_prompt == "S");
    CHECK(o.tool_description == "D");
    CHECK(o.active_when == "k");
    CHECK(json_read_as<todo_list_options>(boost::json::value_from(o), "todo_list") == o);
    CHECK(json_read_as<todo_list_options>(boost::json::parse("{}"), "todo_list") == todo_list_options{});
    CHECK_THROWS_WITH(json_read_as<todo_list_options>(boost::json::parse(R"({"prompt": "x"})"), "todo_list"),
                      Catch::Contains("todo_list.prompt"));
    CHECK_THROWS_WITH(
        json_read_as<todo_list_options>(boost::json::parse(R"({"system_prompt": 3})"), "todo_list"),
        Catch::Contains("todo_list.system_prompt"));
}
