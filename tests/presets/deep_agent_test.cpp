// make_deep_agent: the deep chain, its summarization, the tool policy applied, the options.
#include <agentware/presets/deep_agent.hpp>

#include "../support/json_errors.hpp"

#include "../agent/support.hpp"

#include <agentware/middleware/detail/json_values.hpp>

#include <agentware/agent/memory_checkpointer.hpp>
#include <agentware/filesystem/disk_backend.hpp>
#include <agentware/presets/tool_policy.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <type_traits>
#include <vector>

#include <unistd.h>

namespace deep_agent_test {

using namespace agentware;

inline std::vector<std::string> tool_names(const recorded_request& r) { return r.tool_names; }

struct deep_agent_test_marker {
    std::shared_ptr<int> calls = std::make_shared<int>(0);
    void before_model(auto&) { ++*calls; }
};

// Records how many messages the history holds when its before_model runs.
struct deep_agent_history_probe {
    std::shared_ptr<std::vector<std::size_t>> seen = std::make_shared<std::vector<std::size_t>>();
    void before_model(auto& state) { seen->push_back(state.messages.size()); }
};

// Two write_file rounds, then a final answer: the third model call comes
// after five messages, over a trigger of four.
inline scripted_model two_rounds() {
    return scripted_model(
        {test::calls({test::call("w1", "write_file", R"({"file_path": "/a.md", "content": "a"})")}),
         test::calls({test::call("w2", "write_file", R"({"file_path": "/b.md", "content": "b"})")}),
         ai_message("done")});
}

inline deep_agent_options small_summarization() {
    deep_agent_options o;
    o.subagents.reset();
    o.summarization->trigger = {context_size{context_size::kind::messages, 4}};
    o.summarization->keep = context_size{context_size::kind::messages, 2};
    o.summarization_model = any_chat_model(scripted_model({ai_message("Wrote a.md.")}));
    return o;
}

} // namespace deep_agent_test

using namespace deep_agent_test;

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

TEST_CASE("make_deep_agent keeps the Swift seed's order: summarization after the caller's middlewares, "
          "ask_user and review",
          "[deep_agent]") {
    scripted_model model({ai_message("ok")});
    deep_agent_options o;
    deep_agent_history_probe probe;
    auto a = make_deep_agent(model, tool_set{}, o, probe);
    static_assert(
        std::is_same_v<
            decltype(a)::pipeline_type,
            pipeline<std::optional<todo_list>, filesystem, std::optional<deep_subagents>, patch_tool_calls,
                     std::optional<search_tools>, std::optional<text_tools>, std::optional<git_tools>,
                     std::optional<shell_tools>, deep_agent_history_probe, std::optional<ask_user>,
                     std::optional<human_in_the_loop>, std::optional<tool_approval>,
                     std::optional<summarization>, std::optional<prompt_caching>>>);
    // On by default, with deepagents' settings for an unknown window, and the offload.
    REQUIRE(a.middleware().enabled<summarization>());
    CHECK(a.middleware().get<summarization>()->options() == deepagents_summarization_options());
    CHECK(a.middleware().get<summarization>()->offload);

    // A model whose window is known: 85 % of it, keep 10 %.
    model_info info;
    info.max_input_tokens = 200000;
    auto windowed = make_deep_agent(any_chat_model(scripted_model({ai_message("ok")}), info), tool_set{}, o);
    CHECK(windowed.middleware().get<summarization>()->options() == deepagents_summarization_options(200000));
    // Options of one's own keep their trigger and get the window for their fractions.
    deep_agent_options own;
    own.summarization = summarization_options{};
    own.summarization->trigger = {context_size{context_size::kind::fraction, 0.5}};
    auto mine = make_deep_agent(any_chat_model(scripted_model({ai_message("ok")}), info), tool_set{}, own);
    CHECK(mine.middleware().get<summarization>()->options().trigger == own.summarization->trigger);
    CHECK(mine.middleware().get<summarization>()->options().max_input_tokens == 200000);
    // Off, and on without the offload.
    deep_agent_options off;
    off.summarization.reset();
    CHECK_FALSE(make_deep_agent(model, tool_set{}, off).middleware().enabled<summarization>());
    deep_agent_options no_file;
    no_file.conversation_history_dir.clear();
    CHECK_FALSE(make_deep_agent(model, tool_set{}, no_file).middleware().get<summarization>()->offload);
}

TEST_CASE("the deep agent's summarization offloads the history to the state backend", "[deep_agent]") {
    scripted_model model = two_rounds();
    deep_agent_history_probe probe;
    auto a = make_deep_agent(model, tool_set{}, small_summarization(), probe);
    decltype(a)::state_type state;
    run_config cfg;
    cfg.thread_id = "deep-t";
    REQUIRE(a.run(state, "write two files", cfg).ok());
    REQUIRE(model.requests().size() == 3);
    // The caller's middleware ran before the compaction: it saw the whole history.
    CHECK(*probe.seen == std::vector<std::size_t>{1, 3, 5});
    const auto requests = model.requests();
    const auto& third = requests[2].messages;
    REQUIRE(third.size() == 4); // the summary, the user's message, the last call and its result
    CHECK(third[0].text().starts_with(
        "You are in the middle of a conversation that has been summarized.\n\nThe full conversation history "
        "has been saved to /conversation_history/deep-t.md should you need"));
    CHECK(third[0].text().ends_with("<summary>\nWrote a.md.\n</summary>"));
    CHECK(third[1].text() == "write two files");
    const auto& files = get<files_field>(state);
    REQUIRE(files.count("/conversation_history/deep-t.md") == 1);
    const std::string history = files.at("/conversation_history/deep-t.md")->content;
    CHECK(history.find("AI: \nTool: Updated file /a.md") != std::string::npos);
    CHECK(history.find("/b.md") == std::string::npos); // kept, not offloaded
    CHECK(files.at("/a.md")->content == "a");
    CHECK(files.at("/b.md")->content == "b");
}

TEST_CASE("the deep agent's summarization offloads to the agent's own backend", "[deep_agent]") {
    const auto root =
        std::filesystem::temp_directory_path() / ("agentware-deep-offload-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root);
    scripted_model model = two_rounds();
    deep_agent_options o = small_summarization();
    o.backend = [b = any_backend(disk_backend(root.string()))](const tool_runtime&) { return b; };
    auto a = make_deep_agent(model, tool_set{}, o);
    decltype(a)::state_type state;
    run_config cfg;
    cfg.thread_id = "disk-t";
    REQUIRE(a.run(state, "write two files", cfg).ok());
    CHECK(get<files_field>(state).empty());
    std::ifstream in(root / "conversation_history" / "disk-t.md");
    const std::string history((std::istreambuf_iterator<char>(in)), {});
    CHECK(history.find("Tool: Updated file /a.md") != std::string::npos);
    CHECK(std::filesystem::exists(root / "b.md"));
    CHECK(model.requests()[2].messages[0].text().find("saved to /conversation_history/disk-t.md") !=
          std::string::npos);
    std::filesystem::remove_all(root);
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

    CHECK(o.summarization == deepagents_summarization_options()); // on unless switched off
    CHECK(again.summarization == o.summarization);

    // summarization's keys override deepagents' settings; true is those settings, false is off.
    auto keep3 = boost::json::value_to<deep_agent_options>(
        boost::json::parse(R"({"summarization": {"keep": {"type": "messages", "value": 3}}})"));
    REQUIRE(keep3.summarization);
    CHECK(keep3.summarization->keep == context_size{context_size::kind::messages, 3});
    CHECK(keep3.summarization->trigger == deepagents_summarization_options().trigger);
    CHECK(keep3.summarization->summary_as_message);
    CHECK(boost::json::value_to<deep_agent_options>(boost::json::parse(R"({"summarization": true})"))
              .summarization == deepagents_summarization_options());
    CHECK_FALSE(boost::json::value_to<deep_agent_options>(boost::json::parse(R"({"summarization": false})"))
                    .summarization);
    CHECK(boost::json::value_to<deep_agent_options>(boost::json::parse(R"({"conversation_history_dir": ""})"))
              .conversation_history_dir.empty());
    CHECK_THAT(test_support::read_error<deep_agent_options>(
                   R"({"summarization": {"keep": {"type": "turns", "value": 1}}})"),
               Catch::StartsWith("deep_agent.summarization.keep.type"));

    CHECK_THAT(test_support::read_error<deep_agent_options>(R"({"bogus": 1})"),
               Catch::StartsWith("deep_agent.bogus: unknown key"));
    CHECK_THAT(test_support::read_error<deep_agent_options>(R"({"filesystem": {"grep_max_cnt": 1}})"),
               Catch::StartsWith("deep_agent.filesystem.grep_max_cnt: unknown key"));
    CHECK_THAT(test_support::read_error<deep_agent_options>(R"({"policy": {"sandbox": 3}})"),
               Catch::StartsWith("deep_agent.policy.sandbox"));
    CHECK_THAT(test_support::read_error<deep_agent_options>(R"({"subagents": {"max_turns": 0}})"),
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
