// make_deep_agent and the tool policy.
#include "../agent/support.hpp"

#include <agentware/middleware/detail/json_values.hpp>

#include <agentware/agent/memory_checkpointer.hpp>
#include <agentware/presets/deep_agent.hpp>
#include <agentware/presets/tool_policy.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace deep_agent_test {

using namespace agentware;

inline std::vector<std::string> tool_names(const recorded_request& r) { return r.tool_names; }

inline std::string policy_error(std::string_view json) {
    try {
        (void)boost::json::value_to<tool_policy>(boost::json::parse(json));
    } catch (const json_error& e) {
        return e.what();
    }
    return "no error";
}

inline std::string deep_error(std::string_view json) {
    try {
        (void)boost::json::value_to<deep_agent_options>(boost::json::parse(json));
    } catch (const json_error& e) {
        return e.what();
    }
    return "no error";
}

struct deep_agent_test_marker {
    std::shared_ptr<int> calls = std::make_shared<int>(0);
    void before_model(auto&) { ++*calls; }
};

} // namespace deep_agent_test

using namespace deep_agent_test;

TEST_CASE("a tool policy expands against the catalog", "[deep_agent][tool_policy]") {
    tool_policy p;
    // Defaults: the catalog asks for shell and execute.
    auto e = p.expand();
    CHECK(e.mode_of("shell") == tool_approval_mode::ask);
    CHECK(e.mode_of("execute") == tool_approval_mode::ask);
    CHECK(e.mode_of("read_file") == tool_approval_mode::allow);
    CHECK(e.disabled_tools.empty());

    p.disabled_middleware = {"web", "git"};
    p.disabled_tools = {"delete"};
    p.approvals = {{"write_file", tool_approval_mode::ask},
                   {"shell", tool_approval_mode::deny},
                   {"fetch", tool_approval_mode::ask}};
    e = p.expand();
    CHECK_FALSE(e.enabled("web"));
    CHECK(e.enabled("search"));
    CHECK_FALSE(e.offered("fetch"));
    CHECK_FALSE(e.offered("git_log"));
    CHECK_FALSE(e.offered("delete"));
    CHECK(e.offered("grep"));
    CHECK(e.mode_of("write_file") == tool_approval_mode::ask);
    CHECK(e.mode_of("shell") == tool_approval_mode::deny);  // the policy wins over the catalog
    CHECK(e.mode_of("fetch") == tool_approval_mode::allow); // switched off: no mode
    CHECK_FALSE(e.approvals.contains("fetch"));

    // A tool two capabilities offer stays while one of them is on.
    p = {};
    p.disabled_middleware = {"search"};
    e = p.expand();
    CHECK_FALSE(e.offered("tree"));
    CHECK(e.offered("grep")); // the filesystem offers it too

    // The container sandbox switches off what runs host commands.
    p = {};
    p.sandbox = sandbox_mode::container;
    e = p.expand();
    CHECK_FALSE(e.enabled("shell"));
    CHECK_FALSE(e.enabled("git"));
    CHECK_FALSE(e.offered("shell"));
    CHECK(e.enabled("filesystem"));

    // Extra defaults sit between the catalog's and the policy's.
    p = {};
    p.approvals = {{"deploy", tool_approval_mode::deny}};
    e = p.expand(default_capability_catalog(),
                 {{"deploy", tool_approval_mode::ask}, {"publish", tool_approval_mode::ask}});
    CHECK(e.mode_of("deploy") == tool_approval_mode::deny);
    CHECK(e.mode_of("publish") == tool_approval_mode::ask);

    // Wired to tool_approval and human_in_the_loop.
    auto handler = e.handler();
    CHECK(handler(tool_call{"1", "deploy", {}}) == tool_approval_decision::deny);
    CHECK(handler(tool_call{"2", "publish", {}}) == tool_approval_decision::ask_user);
    CHECK(handler(tool_call{"3", "read_file", {}}) == tool_approval_decision::approve);
    auto review = e.interrupt_on();
    CHECK(review.interrupt_on.contains("publish"));
    CHECK(review.interrupt_on.contains("shell"));
    CHECK_FALSE(review.interrupt_on.contains("deploy"));
}

TEST_CASE("a tool policy in JSON", "[deep_agent][tool_policy][options]") {
    auto p = boost::json::value_to<tool_policy>(boost::json::parse(
        R"({"disabled_middleware": ["web"], "disabled_tools": ["delete"], "approvals": {"write_file": "ask",
            "shell": "deny"}, "sandbox": "container", "sandbox_image": "alpine:3"})"));
    CHECK(p.disabled_middleware.contains("web"));
    CHECK(p.disabled_tools.contains("delete"));
    CHECK(p.approvals.at("write_file") == tool_approval_mode::ask);
    CHECK(p.sandbox == sandbox_mode::container);
    CHECK(p.sandbox_image == "alpine:3");
    CHECK(boost::json::value_to<tool_policy>(boost::json::value_from(p)) == p);

    CHECK_THAT(policy_error(R"({"approval": {}})"), Catch::StartsWith("policy.approval: unknown key"));
    CHECK_THAT(policy_error(R"({"approvals": {"shell": "maybe"}})"),
               Catch::StartsWith("policy.approvals.shell: expected \"allow\", \"ask\" or \"deny\""));
    CHECK_THAT(policy_error(R"({"sandbox": "docker"})"),
               Catch::StartsWith("policy.sandbox: expected \"off\" or \"container\""));
    CHECK_THAT(policy_error(R"({"disabled_tools": "delete"})"),
               Catch::StartsWith("policy.disabled_tools: expected an array"));
}

TEST_CASE("make_deep_agent composes the deep chain", "[deep_agent]") {
    scripted_model model(
        {test::calls({test::call("w1", "write_file", R"({"file_path": "/a.md", "content": "hi\n"})")}),
         ai_message("written")});
    deep_agent_options o;
    o.system_prompt = "You are deep.";
    o.ask_user = true;
    auto a = make_deep_agent(model, tool_set(test::echo_tool()), o);
    using pipeline_t = decltype(a)::pipeline_type;
    static_assert(pipeline_t::contains<filesystem>);
    static_assert(pipeline_t::contains<deep_subagents>);
    CHECK(a.middleware().enabled<deep_subagents>());
    CHECK_FALSE(a.middleware().enabled<todo_list>());
    CHECK_FALSE(a.middleware().enabled<human_in_the_loop>());
    CHECK_FALSE(a.middleware().enabled<tool_approval>());
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "write it").ok());
    const auto names = tool_names(model.requests()[0]);
    for (std::string_view t :
         {"echo", "ls", "read_file", "write_file", "edit_file", "glob", "grep", "task", "ask_user"})
        CHECK(std::find(names.begin(), names.end(), t) != names.end());
    CHECK(std::find(names.begin(), names.end(), "execute") == names.end()); // the state backend cannot run
    CHECK(model.requests()[0].system_prompt.starts_with("You are deep.\n\n## Filesystem tools"));
    CHECK(get<files_field>(state).at("/a.md")->content == "hi\n");
}

TEST_CASE("make_deep_agent splices the caller's middlewares in after patch_tool_calls", "[deep_agent]") {
    scripted_model model({ai_message("ok")});
    deep_agent_options o;
    o.subagents.reset();
    deep_agent_test_marker marker;
    auto a = make_deep_agent(model, tool_set{}, o, marker);
    using list = decltype(a)::pipeline_type;
    static_assert(list::contains<deep_agent_test_marker>);
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "go").ok());
    CHECK(*marker.calls == 1);
    const auto names = tool_names(model.requests()[0]);
    CHECK(std::find(names.begin(), names.end(), "task") == names.end());
}

TEST_CASE("the policy takes tools away and gates the rest", "[deep_agent][tool_policy]") {
    scripted_model model(
        {test::calls({test::call("d1", "edit_file",
                                 R"({"file_path": "/a.md", "old_string": "a", "new_string": "b"})"),
                      test::call("e1", "echo", R"({"text": "x"})")}),
         ai_message("done")});
    deep_agent_options o;
    o.policy = tool_policy{};
    o.policy->disabled_tools = {"delete", "task", "glob"};
    o.policy->approvals = {{"edit_file", tool_approval_mode::deny}};
    auto a = make_deep_agent(model, tool_set(test::echo_tool()), o);
    CHECK_FALSE(a.middleware().enabled<deep_subagents>());
    CHECK(a.middleware().enabled<tool_approval>());
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "go").ok());
    const auto names = tool_names(model.requests()[0]);
    for (std::string_view t : {"delete", "task", "glob"})
        CHECK(std::find(names.begin(), names.end(), t) == names.end());
    CHECK(std::find(names.begin(), names.end(), "edit_file") != names.end()); // offered, refused at dispatch
    CHECK(state.messages[2].status == tool_status::error);
    CHECK(state.messages[2].text() == "User rejected the tool call for `edit_file` with id d1");
    CHECK(state.messages[3].text() == "x");

    deep_agent_options bad;
    bad.policy = tool_policy{};
    bad.policy->disabled_tools = {"read_file"};
    CHECK_THROWS_WITH(make_deep_agent(model, tool_set{}, bad), Catch::Contains("switches off read_file"));
    bad.policy->disabled_tools.clear();
    bad.policy->disabled_middleware = {"filesystem"};
    CHECK_THROWS_WITH(make_deep_agent(model, tool_set{}, bad),
                      Catch::Contains("switches off the filesystem"));
}

TEST_CASE("an ask approval pauses the deep agent and the resume decides", "[deep_agent][tool_policy]") {
    scripted_model model(
        {test::calls({test::call("w1", "write_file", R"({"file_path": "/a.md", "content": "x"})")}),
         ai_message("done")});
    deep_agent_options o;
    o.subagents.reset();
    o.policy = tool_policy{};
    o.policy->approvals = {{"write_file", tool_approval_mode::ask}};
    auto a = make_deep_agent(model, tool_set{}, o);
    a.use_checkpointer(memory_checkpointer{});
    run_config cfg;
    cfg.thread_id = "t";
    auto first = a.invoke("write", cfg);
    REQUIRE(first.reason == stop_reason::interrupted);
    auto second = a.invoke(resume{boost::json::parse(R"({"decisions": [{"type": "approve"}]})")}, cfg);
    REQUIRE(second.ok());
    CHECK(get<files_field>(second.state).at("/a.md")->content == "x");
}

TEST_CASE("deep agent options from JSON", "[deep_agent][options]") {
    auto o = boost::json::value_to<deep_agent_options>(boost::json::parse(R"({
        "system_prompt": "Be deep.", "todo": true, "subagents": false,
        "filesystem": {"grep_max_count": 5}, "interrupt_on": {"write_file": true},
        "policy": {"disabled_tools": ["delete"]}, "ask_user": true, "prompt_caching": false})"));
    CHECK(o.system_prompt == "Be deep.");
    CHECK(o.todo.has_value());
    CHECK_FALSE(o.subagents.has_value());
    CHECK(o.filesystem.grep_max_count == 5);
    REQUIRE(o.human_in_the_loop);
    CHECK(o.human_in_the_loop->interrupt_on.contains("write_file"));
    REQUIRE(o.policy);
    CHECK(o.policy->disabled_tools.contains("delete"));
    CHECK(o.ask_user);
    auto again = boost::json::value_to<deep_agent_options>(boost::json::value_from(o));
    CHECK(again.filesystem.grep_max_count == 5);
    CHECK(again.human_in_the_loop->interrupt_on.contains("write_file"));

    CHECK_THAT(deep_error(R"({"bogus": 1})"), Catch::StartsWith("deep_agent.bogus: unknown key"));
    CHECK_THAT(deep_error(R"({"filesystem": {"grep_max_cnt": 1}})"),
               Catch::StartsWith("deep_agent.filesystem.grep_max_cnt: unknown key"));
    CHECK_THAT(deep_error(R"({"policy": {"sandbox": 3}})"), Catch::StartsWith("deep_agent.policy.sandbox"));
    CHECK_THAT(deep_error(R"({"subagents": {"max_turns": 0}})"),
               Catch::StartsWith("deep_agent.subagents.max_turns: must be at least 1"));
}

TEST_CASE("make_deep_agent engages the host capabilities the options and the policy allow", "[deep_agent]") {
    scripted_model model({ai_message("ok")});
    deep_agent_options o;
    o.subagents.reset();
    o.search = search_tools_options{};
    o.search->root_dir = std::filesystem::temp_directory_path().string();
    o.git = git_tools_options{};
    o.git->root_dir = o.search->root_dir;
    o.policy = tool_policy{};
    o.policy->disabled_middleware = {"git"};
    o.policy->disabled_tools = {"tree"};
    auto a = make_deep_agent(model, tool_set{}, o);
    CHECK(a.middleware().enabled<search_tools>());
    CHECK_FALSE(a.middleware().enabled<git_tools>());
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "go").ok());
    const auto names = tool_names(model.requests()[0]);
    CHECK(std::count(names.begin(), names.end(), "grep") == 1); // the host's grep replaces the filesystem's
    CHECK(std::count(names.begin(), names.end(), "glob") == 1);
    CHECK(std::count(names.begin(), names.end(), "tree") == 0);
    CHECK(std::count(names.begin(), names.end(), "git_log") == 0);
}
