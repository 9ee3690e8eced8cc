// durable_context: the delegation ledger's capture and run tags, the projection
// into requests (skills included), its caps.
#include <agentware/middleware/durable_context.hpp>

#include "../skills/support.hpp"
#include "delegations_support.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/middleware/skills.hpp>
#include <agentware/middleware/skills_from_folders.hpp>
#include <agentware/model/scripted_model.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <chrono>
#include <string>
#include <vector>

using namespace agentware;
using strings = std::vector<std::string>;

using namespace delegations_test;

TEST_CASE("durable_context records a run's delegations and projects the summary and the ledger",
          "[middleware][durable_context]") {
    scripted_model model({test::calls({task_call("t1", "Survey <the> docs")}), ai_message("all done")});
    durable_context dc;
    dc.clock = [] {
        return std::chrono::sys_days(std::chrono::year(2026) / 11 / 23) + std::chrono::hours(9);
    };
    auto a = make_agent(model, tool_set(fake_task_tool()), dc);
    decltype(a)::state_type state;
    get<summary_text_field>(state) = "Earlier: the user wants a report & charts.";
    run_config cfg;
    cfg.run_id = "run-1";
    auto r = a.run(state, "write the report", cfg);
    REQUIRE(r.ok());
    const auto& ledger = get<delegations_field>(state);
    REQUIRE(ledger.size() == 1);
    CHECK(ledger[0].id == "t1");
    CHECK(ledger[0].run_id == "run-1");
    CHECK(ledger[0].status == "completed");
    CHECK(ledger[0].description == "Survey <the> docs");
    CHECK(ledger[0].subagent_type == "general-purpose");
    CHECK(ledger[0].created_at == "2026-11-23T09:00:00Z");
    CHECK(ledger[0].result_brief == "Task Succeeded. Result: did Survey <the> docs");

    auto requests = model.requests();
    REQUIRE(requests.size() == 2);
    // Request 1: the summary only (no delegation yet), right at the front.
    const auto& first = requests[0].messages;
    REQUIRE(first.size() == 3);
    CHECK(first[0].is_system());
    CHECK(first[0].text() == durable_context::authority_contract);
    CHECK(first[1].is_human());
    CHECK(first[1].name == "durable_context");
    CHECK(first[1].text() ==
          "<durable_context_data>\n## Conversation summary so far\nEarlier: the user wants a "
          "report &amp; charts.\n</durable_context_data>");
    // Request 2: the ledger too, escaped.
    std::string second = requests[1].messages[1].text();
    INFO(second);
    CHECK(second.find(
              "## Work already delegated\n- [completed] Survey &lt;the&gt; docs (via general-purpose) -> "
              "Task Succeeded. Result: did Survey &lt;the&gt; docs") != std::string::npos);
    // The stored history has none of it.
    for (const auto& m : state.messages)
        CHECK(m.name != "durable_context");
}

TEST_CASE("durable_context shows nothing when there is nothing to show, leading system messages stay first",
          "[middleware][durable_context]") {
    durable_context dc;
    CHECK(dc.project("", {}).empty());
    CHECK(dc.project("  \n", {}).empty());
    scripted_model model({ai_message("ok")});
    auto a = make_agent(model, tool_set{}, dc);
    decltype(a)::state_type state;
    state.messages.push_back(system_message("sys"));
    get<summary_text_field>(state) = "s";
    REQUIRE(a.run(state, "hi").ok());
    const auto requests = model.requests();
    const auto& sent = requests.at(0).messages;
    REQUIRE(sent.size() == 4);
    CHECK(sent[0].text() == "sys");
    CHECK(sent[1].text() == durable_context::authority_contract);
    CHECK(sent[3].text() == "hi");
}

TEST_CASE("durable_context caps the projected summary and ledger", "[middleware][durable_context]") {
    durable_context_options o;
    o.max_summary_chars = 10;
    o.max_ledger_chars = 60;
    o.max_brief_chars = 5;
    durable_context dc(o);
    std::vector<delegation_entry> ledger;
    for (int i = 0; i < 5; ++i) {
        auto e = entry("t" + std::to_string(i), "completed");
        e.description = "job " + std::to_string(i);
        e.subagent_type = "bash";
        e.result_brief = "result text";
        ledger.push_back(e);
    }
    std::string text = dc.project(std::string(100, 'x'), ledger);
    INFO(text);
    CHECK(text.find("## Conversation summary so far\nxxxxxxxxxx\n") != std::string::npos);
    CHECK(text.find("- [completed] job 4 (via bash) -> resul") != std::string::npos); // newest first
    CHECK(text.find("job 0") == std::string::npos);                                   // past the cap
}

TEST_CASE("durable_context lists the skills of skill_context when the state has the field", "[skills]") {
    scripted_model model(
        {test::calls(
             {test::call("r1", "read_file",
                         R"({"description":"load","path":"/mnt/skills/public/deep-research/SKILL.md"})")}),
         ai_message("done")});
    auto read_file = make_tool("read_file", "Reads a file.", R"({"type":"object"})",
                               [](const boost::json::object&) { return std::string("sandbox file"); });
    auto a = make_agent(model, tool_set(read_file), durable_context{}, skills(skillstest::fixture_options()));
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "research this").ok());
    auto requests = model.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[0].messages.size() == 1); // nothing to project yet
    const std::string data = requests[1].messages[1].text();
    CHECK(data ==
          "<durable_context_data>\n## Active skills (loaded earlier - re-read the file before applying its "
          "instructions)\n- deep-research: Research a question in depth &lt;with sources&gt; &amp; cite each "
          "claim. -> /mnt/skills/public/deep-research/SKILL.md\n</durable_context_data>");
    // Without the field (no skills middleware), the projection is as before.
    CHECK(durable_context{}.project("", {}).empty());
}
