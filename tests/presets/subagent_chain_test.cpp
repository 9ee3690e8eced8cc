// DeerFlow's subagent chain: fresh guards per delegation, its order, the type's
// skills and their allowed-tools.
#include <agentware/presets/subagent_chain.hpp>

#include "../subagents/support.hpp"

#include <agentware/presets/lead_agent.hpp>
#include <agentware/subagents/task_tool.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace subagent_test {

using namespace agentware;
using namespace std::chrono_literals;

// The test cases are in the namespace too: the binary is a unity build.

TEST_CASE("DeerFlow's subagent chain runs each delegation with fresh guards", "[subagent]") {
    auto again =
        make_tool("again", "t", boost::json::object{}, [](const boost::json::object&) { return "ok"; });
    scripted_model sub({test::calls({test::call("a", "again")}, "still looking")}, {.cycle = true});
    subagent_executor_options o;
    o.config = options_from(sub_model_config);
    o.tools = tool_set(again);
    o.model_named = [sub](std::string_view) { return any_chat_model(sub); };
    o.runner = make_deerflow_subagent_runner(boost::json::parse(R"({
        "loop_detection": {"warn_threshold": 2, "hard_limit": 3},
        "tool_error_handling": true, "durable_context": true, "system_message_coalescing": true,
        "memory": true, "title": true
    })"));
    auto ex = std::make_shared<subagent_executor>(std::move(o));
    for (int i = 0; i < 2; ++i) { // the second delegation starts afresh: capped after as many rounds
        const std::size_t before = sub.calls();
        auto r = execute(*ex, {fmt::format("c{}", i), "d", "p", "general-purpose"});
        CHECK(r.status == subagent_status::completed);
        CHECK(r.stop_reason == "loop_capped");
        CHECK_THAT(
            format_subagent_result_message(r),
            Catch::StartsWith("Task Succeeded (capped: repeated tool-call loop). Result: still looking"));
        CHECK(sub.calls() - before == 3);
    }
    // The subagent chain: DeerFlow's order, the guards engaged by their sections, the budget on by default.
    auto chain = make_subagent_pipeline(boost::json::parse(R"({"loop_detection": true})"));
    CHECK(chain.enabled<loop_detection>());
    CHECK(chain.enabled<token_budget>());
    CHECK(chain.get<token_budget>()->options().max_tokens == 2000000);
    // Its order (summarization before durable_context, as in the lead's chain: docs/lead_agent.md).
    auto full = make_subagent_pipeline(boost::json::parse(R"({
        "system_message_coalescing": true, "durable_context": true, "summarization": true,
        "safety_finish_reason": true, "loop_detection": true, "tool_error_handling": true
    })"));
    CHECK(engaged_middleware_names(full) ==
          std::vector<std::string>{"subagent_shared_fields", "tool_error_handling", "loop_detection",
                                   "token_budget", "safety_finish_reason", "summarization", "durable_context",
                                   "system_message_coalescing"});
    // DeerFlow's subagents reuse the lead's base: pii_redaction after tool_result_sanitization,
    // only with `enabled: true`.
    auto redacting = make_subagent_pipeline(
        boost::json::parse(R"({"tool_result_sanitization": true, "pii_redaction": {"enabled": true}})"));
    CHECK(engaged_middleware_names(redacting) == std::vector<std::string>{"subagent_shared_fields",
                                                                          "tool_result_sanitization",
                                                                          "pii_redaction", "token_budget"});
    CHECK_FALSE(make_subagent_pipeline(boost::json::parse(R"({"pii_redaction": {"redact_phone": false}})"))
                    .enabled<pii_redaction>());
    subagent_type off;
    off.token_budget = boost::json::object{{"enabled", false}};
    CHECK_FALSE(make_subagent_pipeline(boost::json::object{}, off).enabled<token_budget>());
    CHECK_THROWS_WITH(
        make_deerflow_subagent_runner(boost::json::parse(R"({"loop_detection": {"bogus": 1}})")),
        Catch::StartsWith("loop_detection.bogus: unknown key"));
}

// Two skills of the test data: deep-research (allowed-tools: web_search, read_file) and data-analysis,
// given allowed-tools calc here.
inline subagent_skills two_skills() {
    auto catalog = std::make_shared<skill_catalog>();
    skill research;
    research.name = "deep-research";
    research.description = "Research with sources.";
    research.allowed_tools = std::vector<std::string>{"web_search", "read_file"};
    research.directory = std::string(AGENTWARE_TEST_DATA_DIR) + "/skills/public/deep-research";
    skill analysis;
    analysis.name = "data-analysis";
    analysis.description = "Analyse tabular data.";
    analysis.allowed_tools = std::vector<std::string>{"calc"};
    analysis.directory = std::string(AGENTWARE_TEST_DATA_DIR) + "/skills/public/data-analysis";
    catalog->skills = {research, analysis};
    return subagent_skills{catalog, skills_options{}};
}

// The text of the tool message answering `call_id` in a request's messages.
inline std::string tool_answer(const recorded_request& r, std::string_view call_id) {
    for (const auto& m : r.messages)
        if (m.is_tool() && m.tool_call_id() == call_id) return m.text();
    return "(none)";
}

TEST_CASE("a subagent sees its type's skills, and only their allowed-tools count", "[subagent][skills]") {
    auto tool = [](std::string name) {
        return make_tool(std::move(name), "t", boost::json::object{},
                         [](const boost::json::object&) { return "ok"; });
    };
    const char* config = R"({"agents": {"general-purpose": {"model": "sub"}},
        "custom_agents": {"analyst": {"description": "Analyses.", "system_prompt": "Analyse the data.",
                                      "skills": ["data-analysis"], "model": "sub"}}})";
    // Each delegation: load a skill, call both tools, answer.
    auto delegate = [&](std::string type, std::string skill_folder) {
        scripted_model sub(
            {test::calls({test::call("r", "read_file",
                                     R"({"path": "/mnt/skills/public/)" + skill_folder + R"(/SKILL.md"})")}),
             test::calls({test::call("w", "web_search"), test::call("c", "calc")}), ai_message("done")});
        subagent_executor_options o;
        o.config = options_from(config);
        o.tools = tool_set(tool("web_search"), tool("calc"));
        o.model_named = [sub](std::string_view) { return any_chat_model(sub); };
        o.runner = make_deerflow_subagent_runner(boost::json::object{}, two_skills());
        auto ex = std::make_shared<subagent_executor>(std::move(o));
        auto r = execute(*ex, {"t1", "d", "Work.", std::move(type)});
        CHECK(r.status == subagent_status::completed);
        auto requests = sub.requests();
        REQUIRE(requests.size() == 3);
        return requests;
    };

    // The analyst's prompt: its own, then the skills block with data-analysis alone.
    auto requests = delegate("analyst", "data-analysis");
    const auto& system = requests[0].messages.front();
    REQUIRE(system.is_system());
    CHECK(system.text().starts_with("Analyse the data.\n\n<skill_system>\n"));
    CHECK(system.text().find("<location>/mnt/skills/public/data-analysis/SKILL.md</location>") !=
          std::string::npos);
    CHECK(system.text().find("deep-research") == std::string::npos);
    // Before a skill is loaded every tool is offered; after, only what data-analysis allows.
    CHECK(requests[0].tool_names == std::vector<std::string>{"web_search", "calc"});
    CHECK(tool_answer(requests[1], "r").starts_with("---\nname: data-analysis"));
    CHECK(requests[2].tool_names == std::vector<std::string>{"calc"});
    CHECK(tool_answer(requests[2], "w") ==
          "Error: Tool 'web_search' is not allowed by the active skill policy.");
    CHECK(tool_answer(requests[2], "c") == "ok");

    // A skill the type does not name grants nothing: its allowed-tools are refused (the policy fails closed).
    requests = delegate("analyst", "deep-research");
    CHECK(tool_answer(requests[1], "r").starts_with("---\nname: deep-research"));
    CHECK(requests[2].tool_names.empty());
    CHECK(tool_answer(requests[2], "w") ==
          "Error: Tool 'web_search' is not allowed by the active skill policy.");
    CHECK(tool_answer(requests[2], "c") == "Error: Tool 'calc' is not allowed by the active skill policy.");

    // A type that names no skills inherits the parent's: both in its prompt, and deep-research's tools.
    requests = delegate("general-purpose", "deep-research");
    const std::string gp = requests[0].messages.front().text();
    CHECK(gp.find("/mnt/skills/public/data-analysis/SKILL.md") != std::string::npos);
    CHECK(gp.find("/mnt/skills/public/deep-research/SKILL.md") != std::string::npos);
    CHECK(requests[2].tool_names == std::vector<std::string>{"web_search"});
    CHECK(tool_answer(requests[2], "w") == "ok");

    // The chain: the skills slots after tool_error_handling (reference §4.3), only with a catalog.
    subagent_type analyst;
    analyst.skills = std::vector<std::string>{"data-analysis"};
    auto chain =
        make_subagent_pipeline(boost::json::parse(R"({"tool_error_handling": true})"), analyst, two_skills());
    CHECK(engaged_middleware_names(chain) == std::vector<std::string>{"subagent_shared_fields",
                                                                      "tool_error_handling", "skills",
                                                                      "skill_tool_policy", "token_budget"});
    CHECK_FALSE(make_subagent_pipeline(boost::json::object{}, analyst).enabled<skills>());
}

} // namespace subagent_test

TEST_CASE("read_subagents_section checks every token_budget object as token_budget's options",
          "[subagents][chain]") {
    const auto error_of = [](std::string_view json) -> std::string {
        try {
            (void)agentware::read_subagents_section(boost::json::parse(json));
        } catch (const agentware::json_error& e) {
            return e.what();
        }
        return "";
    };
    CHECK(error_of(R"({"token_budget": {"enabled": true, "max_tokens": 5}})").empty());
    CHECK_THAT(error_of(R"({"token_budget": {"enabled": true, "max_tokenz": 5}})"),
               Catch::StartsWith("subagents.token_budget.max_tokenz: unknown key"));
    CHECK_THAT(error_of(R"({"token_budget": {"enabled": "yes"}})"),
               Catch::StartsWith("subagents.token_budget.enabled: expected true or false"));
    CHECK_THAT(error_of(R"({"agents": {"bash": {"token_budget": {"max_tokenz": 5}}}})"),
               Catch::StartsWith("subagents.agents.bash.token_budget.max_tokenz: unknown key"));
    CHECK_THAT(
        error_of(R"({"custom_agents": {"r": {"description": "d", "token_budget": {"max_tokenz": 5}}}})"),
        Catch::StartsWith("subagents.custom_agents.r.token_budget.max_tokenz: unknown key"));
}
