// Subagent types and their configuration: built-ins, custom types, the override
// precedence, the tools a type gets, errors naming the key's path.
#include <agentware/subagents/config.hpp>

#include "support.hpp"

#include <agentware/middleware/subagent_limit.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace subagent_test {

using namespace agentware;
using namespace std::chrono_literals;

// The test cases are in the namespace too: the binary is a unity build.

TEST_CASE("subagent types: built-ins, custom types and the override precedence", "[subagent]") {
    auto o = options_from(R"({
        "timeout_seconds": 600, "max_turns": 40, "max_total_per_run": 5,
        "agents": {"bash": {"timeout_seconds": 30}, "researcher": {"max_turns": 7, "model": "big"}},
        "custom_agents": {"researcher": {"description": "Reads.", "system_prompt": "Read.", "tools": ["read_file"],
                                         "timeout_seconds": 120}}
    })");
    subagent_registry reg(o, /*allow_bash=*/true);
    CHECK(reg.available() == std::vector<std::string>{"general-purpose", "bash", "researcher"});

    auto gp = reg.resolve("general-purpose");
    REQUIRE(gp);
    CHECK(gp->timeout == 600s); // global, built-ins only
    CHECK(gp->max_turns == 40);
    CHECK(gp->model == "inherit");
    CHECK(gp->disallowed_tools == std::vector<std::string>{"task", "ask_clarification", "present_files"});
    auto bash = reg.resolve("bash");
    CHECK(bash->timeout == 30s); // per-agent override wins over global
    CHECK(bash->max_turns == 40);
    CHECK(*bash->tools == std::vector<std::string>{"bash", "ls", "read_file", "write_file", "str_replace"});
    auto custom = reg.resolve("researcher");
    CHECK(custom->timeout == 120s); // its own; the global applies to built-ins only
    CHECK(custom->max_turns == 7);  // per-agent override
    CHECK(custom->model == "big");
    CHECK_FALSE(reg.resolve("nobody"));

    // Without bash (the default), `bash` is hidden and refused.
    subagent_registry no_bash(o);
    CHECK(no_bash.available() == std::vector<std::string>{"general-purpose", "researcher"});
    CHECK(no_bash.refused("bash"));

    // Defaults: DeerFlow's.
    subagent_registry defaults;
    CHECK(defaults.resolve("general-purpose")->timeout == 1800s);
    CHECK(defaults.resolve("general-purpose")->max_turns == 150);
    CHECK(defaults.options().max_concurrent == 3);
    subagents_options with_custom = options_from(R"({"custom_agents": {"x": {}}})");
    CHECK(subagent_registry(with_custom).resolve("x")->max_turns == 50);
    CHECK(subagent_registry(with_custom).resolve("x")->timeout == 900s);

    // Tools: allowlist, then denylist, in the given order.
    tool_set all;
    for (const char* n : {"bash", "read_file", "task", "ls", "web_search"})
        all.add(make_tool(n, "t", boost::json::object{},
                          [](const boost::json::object&) { return std::string(); }));
    CHECK(subagent_tools(all, *bash).names() == "bash, read_file, ls");
    CHECK(subagent_tools(all, *gp).names() == "bash, read_file, ls, web_search");

    // The section round-trips, and shares its keys with subagent_limit.
    CHECK(boost::json::value_to<subagents_options>(boost::json::value_from(o)) == o);
    auto limits = boost::json::value_to<subagent_limit_options>(boost::json::parse(
        R"({"max_total_per_run": 5, "timeout_seconds": 600, "custom_agents": {}, "agents": {}})"));
    CHECK(limits.max_total_per_run == 5);
}

TEST_CASE("subagent configuration errors name the key's path", "[subagent]") {
    auto error_of = [](std::string_view json) {
        try {
            (void)options_from(json);
        } catch (const json_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK_THAT(error_of(R"({"timeout_seconds": "x"})"),
               Catch::StartsWith("subagents.timeout_seconds: expected a non-negative number"));
    CHECK_THAT(error_of(R"({"bogus": 1})"), Catch::StartsWith("subagents.bogus: unknown key"));
    CHECK_THAT(error_of(R"({"custom_agents": {"r": {"max_turn": 3}}})"),
               Catch::StartsWith("subagents.custom_agents.r.max_turn: unknown key"));
    CHECK_THAT(error_of(R"({"custom_agents": {"r": {"tools": "bash"}}})"),
               Catch::StartsWith("subagents.custom_agents.r.tools: expected an array"));
    CHECK_THAT(error_of(R"({"agents": {"bash": {"max_turns": -1}}})"),
               Catch::StartsWith("subagents.agents.bash.max_turns: expected a non-negative integer"));
    CHECK_THAT(error_of(R"({"agents": {"bash": {"model": 3}}})"),
               Catch::StartsWith("subagents.agents.bash.model: expected a string"));
    CHECK_THAT(error_of(R"({"max_concurrent": 0})"),
               Catch::StartsWith("subagents.max_concurrent: must be at least 1"));
}

} // namespace subagent_test
