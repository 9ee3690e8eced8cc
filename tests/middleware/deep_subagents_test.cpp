// deep_subagents: deepagents' task tool on the subagent executor.
#include "../agent/support.hpp"

#include <agentware/middleware/detail/json_values.hpp>

#include "../support/json_errors.hpp"

#include <agentware/middleware/deep_subagents.hpp>
#include <agentware/middleware/filesystem.hpp>
#include <agentware/middleware/todo.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_to.hpp>

#include <string>
#include <vector>

namespace deep_subagents_test {

using namespace agentware;

inline message task_call(std::string id, std::string type, std::string description) {
    boost::json::object args{{"description", description}, {"subagent_type", type}};
    return ai_message("", {tool_call{std::move(id), "task", std::move(args)}});
}

inline const tool_schema& task_schema(const deep_subagents& m) { return m.tools().at(0)->schema(); }

} // namespace deep_subagents_test

using namespace deep_subagents_test;

TEST_CASE("the task tool lists the subagents in deepagents' description", "[middleware][deep_subagents]") {
    deep_subagents_options o;
    deep_subagent_spec r;
    r.name = "researcher";
    r.description = "Finds sources.";
    o.subagents.push_back(r);
    deep_subagents m(o);
    const tool_schema& s = task_schema(m);
    CHECK(s.name == "task");
    CHECK(m.available() == std::vector<std::string>{"general-purpose", "researcher"});
    CHECK_THAT(
        s.description,
        Catch::StartsWith("Launch an ephemeral subagent to handle a complex, multi-step task in an "
                          "isolated context window.\n\nAvailable agent types and the tools they have "
                          "access to:\n- general-purpose: General-purpose agent for researching complex "
                          "questions, searching for files and content, and executing multi-step tasks."));
    CHECK_THAT(s.description, Catch::Contains("access to all tools as the main agent.\n- researcher: Finds "
                                              "sources.\n\nSpecify subagent_type to select the agent."));
    CHECK_THAT(s.description, Catch::EndsWith("it has the same capabilities as the main agent."));
    CHECK(s.parameters.at("required") == boost::json::parse(R"(["description", "subagent_type"])"));
    CHECK(s.parameters.at("properties").at("subagent_type").at("description") ==
          "The type of subagent to use. Must be one of the available agent types listed in the tool "
          "description.");

    // Without general-purpose, and with a description of one's own.
    o.general_purpose_agent = false;
    o.task_description = "Delegate.\n{available_agents}\nEnd.";
    deep_subagents only(o);
    CHECK(only.available() == std::vector<std::string>{"researcher"});
    CHECK(task_schema(only).description == "Delegate.\n- researcher: Finds sources.\nEnd.");
    o.task_description = "No list here.";
    CHECK(task_schema(deep_subagents(o)).description == "No list here.");
}

TEST_CASE("a subagent sees the parent's files, not its history, and its files come back",
          "[middleware][deep_subagents]") {
    scripted_model sub(
        {test::calls({test::call("r1", "read_file", R"({"file_path": "/in.md"})"),
                      test::call("w1", "write_file", R"({"file_path": "/out.md", "content": "summary\n"})")},
                     "Wrote /out.md from /in.md."),
         ai_message("")});
    deep_subagents_options o;
    deep_subagent_spec writer;
    writer.name = "writer";
    writer.description = "Writes reports.";
    writer.system_prompt = "You write reports.";
    writer.model_instance = any_chat_model(sub);
    writer.runner = make_deep_subagent_runner([] { return pipeline<filesystem>{}; });
    o.subagents.push_back(writer);

    scripted_model parent({ai_message("Hello."), task_call("t1", "writer", "Summarise /in.md into /out.md."),
                           ai_message("Done.")});
    auto a = make_agent(parent, tool_set{}, filesystem{}, deep_subagents(o));
    decltype(a)::state_type state;
    get<files_field>(state)["/in.md"] =
        file_data{"notes\n", "utf-8", "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:00+00:00"};
    REQUIRE(a.run(state, "hi").ok());
    REQUIRE(a.run(state, "summarise").ok());

    // The subagent's first request: its prompt and the task, nothing of the parent's history.
    const auto sub_requests = sub.requests();
    REQUIRE(sub_requests.size() == 2);
    const auto& first = sub_requests[0];
    REQUIRE(first.messages.size() == 2);
    CHECK(first.messages[0].is_system());
    CHECK(first.messages[0].text() == "You write reports.");
    CHECK(first.messages[1].is_human());
    CHECK(first.messages[1].text() == "Summarise /in.md into /out.md.");
    // It read the parent's file.
    CHECK(sub_requests[1].messages[3].text() == "1  notes");

    // The answer: the last ai text (the empty final answer is passed over).
    const message& answer = state.messages[state.messages.size() - 2];
    REQUIRE(answer.is_tool());
    CHECK(answer.tool_call_id() == "t1");
    CHECK(answer.text() == "Wrote /out.md from /in.md.");
    CHECK(answer.status == tool_status::ok);
    // The file it wrote is merged into the parent's files; the parent's own file stays.
    const auto& files = get<files_field>(state);
    REQUIRE(files.count("/out.md") == 1);
    CHECK(files.at("/out.md")->content == "summary\n");
    CHECK(files.count("/in.md") == 1);
}

TEST_CASE("a subagent's tools: the named ones of the parent's, and its own", "[middleware][deep_subagents]") {
    scripted_model sub({ai_message("ok")});
    deep_subagents_options o;
    o.default_tools.add(test::echo_tool());
    o.default_tools.add(make_tool("other", "Another.", boost::json::object{},
                                  [](const boost::json::object&) { return std::string("x"); }));
    deep_subagent_spec s;
    s.name = "narrow";
    s.description = "Echoes.";
    s.tools = std::vector<std::string>{"echo"};
    s.own_tools.add(make_tool("mine", "Its own.", boost::json::object{},
                              [](const boost::json::object&) { return std::string("y"); }));
    s.model_instance = any_chat_model(sub);
    o.subagents.push_back(s);
    scripted_model parent({task_call("t1", "narrow", "Echo something."), ai_message("ok")});
    auto a = make_agent(parent, tool_set{}, deep_subagents(o));
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "go").ok());
    const auto sub_requests = sub.requests();
    REQUIRE(sub_requests.size() == 1);
    CHECK(sub_requests[0].tool_names == std::vector<std::string>{"echo", "mine"});
}

TEST_CASE("an unknown subagent type gets deepagents' answer", "[middleware][deep_subagents]") {
    deep_subagents_options o;
    deep_subagent_spec s;
    s.name = "researcher";
    s.description = "Finds sources.";
    o.subagents.push_back(s);
    scripted_model parent({task_call("t1", "writer", "Write."), ai_message("ok")});
    auto a = make_agent(parent, tool_set{}, deep_subagents(o));
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "go").ok());
    CHECK(state.messages[2].text() == "We cannot invoke subagent writer because it does not exist, the only "
                                      "allowed types are `general-purpose`, `researcher`");
}

TEST_CASE("a subagent that fails answers with an error", "[middleware][deep_subagents]") {
    // general-purpose inherits the parent's model, which has nothing left to say for it.
    scripted_model parent({task_call("t1", "general-purpose", "Look around.")});
    auto a = make_agent(parent, tool_set{}, deep_subagents{});
    decltype(a)::state_type state;
    auto r = a.run(state, "go");
    REQUIRE(state.messages.size() >= 3);
    CHECK(state.messages[2].is_tool());
    CHECK(state.messages[2].status == tool_status::error);
    CHECK_THAT(state.messages[2].text(), Catch::StartsWith("Task failed."));
    (void)r;
}

TEST_CASE("the state a subagent receives leaves out messages and todos", "[middleware][deep_subagents]") {
    agent_state<pipeline<filesystem, todo>> s;
    s.messages.push_back(human_message("secret history"));
    get<todos_field>(s) = {todo_item{"plan", "pending"}};
    get<files_field>(s)["/a"] = file_data{"x", "utf-8", "t", "t"};
    s.unknown_fields["structured_response"] = "r";
    s.unknown_fields["extra"] = 1;
    boost::json::object j = agentware::detail::deep_state_json(s);
    CHECK_FALSE(j.contains("messages"));
    CHECK_FALSE(j.contains("todos"));
    CHECK_FALSE(j.contains("structured_response"));
    CHECK(j.contains("files"));
    CHECK(j.at("extra") == 1);
}

TEST_CASE("deep_subagents options from JSON", "[middleware][deep_subagents][options]") {
    auto o = boost::json::value_to<deep_subagents_options>(boost::json::parse(R"({
        "subagents": [{"name": "critic", "description": "Reviews.", "system_prompt": "Be harsh.",
                       "tools": ["read_file"], "model": "small", "max_turns": 7, "timeout_seconds": 30}],
        "general_purpose_agent": false, "system_prompt": "Delegate wisely.", "max_concurrent": 2})"));
    REQUIRE(o.subagents.size() == 1);
    CHECK(o.subagents[0].name == "critic");
    CHECK(o.subagents[0].tools == std::vector<std::string>{"read_file"});
    CHECK(o.subagents[0].model == "small");
    CHECK(o.subagents[0].max_turns == 7u);
    CHECK(o.subagents[0].timeout == std::chrono::milliseconds(30000));
    CHECK_FALSE(o.general_purpose_agent);
    CHECK(o.system_prompt == "Delegate wisely.");
    CHECK(o.max_concurrent == 2);
    // And back.
    auto again = boost::json::value_to<deep_subagents_options>(boost::json::value_from(o));
    CHECK(again.subagents[0].description == "Reviews.");
    CHECK(again.max_concurrent == 2);

    CHECK_THAT(test_support::read_error<deep_subagents_options>(R"({"bogus": 1})"),
               Catch::StartsWith("deep_subagents.bogus: unknown key"));
    CHECK_THAT(test_support::read_error<deep_subagents_options>(R"({"subagents": [{"name": "a"}]})"),
               Catch::Contains("description"));
    CHECK_THAT(test_support::read_error<deep_subagents_options>(
                   R"({"subagents": [{"name": "a", "description": "d", "tool": []}]})"),
               Catch::Contains("tool: unknown key"));
    CHECK_THAT(test_support::read_error<deep_subagents_options>(R"({"max_concurrent": 0})"),
               Catch::StartsWith("deep_subagents.max_concurrent: must be at least 1"));
    CHECK_THAT(
        test_support::read_error<deep_subagents_options>(
            R"({"subagents": [{"name": "a", "description": "d"}, {"name": "a", "description": "e"}]})"),
        Catch::Contains("two subagents are named \"a\""));
}

TEST_CASE("the deep prompt is appended only when configured", "[middleware][deep_subagents]") {
    scripted_model parent({ai_message("ok"), ai_message("ok")});
    agent_options ao;
    ao.system_prompt = "Base.";
    deep_subagents_options o;
    o.system_prompt = "Use task for big jobs.";
    auto a = make_agent(parent, tool_set{}, deep_subagents(o));
    a.options() = ao;
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "go").ok());
    CHECK(parent.requests()[0].system_prompt == "Base.\n\nUse task for big jobs.");
    auto b = make_agent(parent, tool_set{}, deep_subagents{});
    b.options() = ao;
    decltype(b)::state_type s2;
    REQUIRE(b.run(s2, "go").ok());
    CHECK(parent.requests()[1].system_prompt == "Base.");
}
