// durable_context: the delegation ledger (capture, merge rule, run tags), the
// projection into requests, and subagent_limit counting from the ledger.
#include "../agent/support.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/middleware/durable_context.hpp>
#include <agentware/middleware/subagent_limit.hpp>
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

namespace {

tool_call task_call(std::string id, std::string description, std::string type = "general-purpose") {
    tool_call c;
    c.id = std::move(id);
    c.name = "task";
    c.args = boost::json::object{{"description", description}, {"prompt", "do it"}, {"subagent_type", type}};
    return c;
}

delegation_entry entry(std::string id, std::string status, std::string run = "r1") {
    delegation_entry e;
    e.id = std::move(id);
    e.status = std::move(status);
    e.run_id = std::move(run);
    e.created_at = "2026-11-23T09:00:00Z";
    return e;
}

// The task tool: answers as DeerFlow's does.
auto fake_task_tool() {
    return make_tool(
        "task", "Delegates.",
        R"({"type":"object","properties":{"description":{"type":"string"},"prompt":{"type":"string"},)"
        R"("subagent_type":{"type":"string"}},"required":["description","prompt","subagent_type"]})",
        [](const boost::json::object& args) {
            return "Task Succeeded. Result: did " + std::string(args.at("description").as_string());
        });
}

} // namespace

TEST_CASE("the delegations field folds updates in by id; terminal statuses stay; 50 kept",
          "[middleware][durable_context]") {
    std::vector<delegation_entry> ledger{entry("a", "in_progress"), entry("b", "completed")};
    auto newer = entry("a", "completed", "");
    newer.created_at = "later";
    newer.result_brief = "done";
    delegations_field::merge(ledger, {newer, entry("b", "in_progress"), entry("c", "in_progress")});
    REQUIRE(ledger.size() == 3);
    CHECK(ledger[0].status == "completed");
    CHECK(ledger[0].created_at == "2026-11-23T09:00:00Z"); // the original stamp
    CHECK(ledger[0].run_id == "r1");                       // kept when the update has none
    CHECK(ledger[1].status == "completed");                // not overwritten by in_progress
    std::vector<delegation_entry> many;
    for (int i = 0; i < 60; ++i)
        many.push_back(entry("t" + std::to_string(i), "in_progress"));
    delegations_field::merge(ledger, std::move(many));
    CHECK(ledger.size() == 50);
    CHECK(ledger.back().id == "t59");
    CHECK(count_run_delegations(ledger, "r1") == 50);
    CHECK(count_run_delegations(ledger, "r2") == 0);
    // The JSON form reads back.
    auto back = boost::json::value_to<std::vector<delegation_entry>>(boost::json::value_from(ledger));
    CHECK(back == ledger);
    CHECK_THROWS_AS(
        json_read_as<delegation_entry>(boost::json::parse(R"({"status": "x"})"), "delegations[0]"),
        json_error);
}

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

TEST_CASE("durable_context shows nothing when there is nothing to show; leading system messages stay first",
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

TEST_CASE("subagent_limit counts a run's delegations from the ledger, which survives summarization",
          "[middleware][durable_context][subagent_limit]") {
    subagent_limit_options lo;
    lo.max_total_per_run = 2;
    // The ledger says this run already delegated twice (their calls are gone from the history).
    scripted_model model({test::calls({task_call("t3", "third")}), ai_message("fine")});
    auto a = make_agent(model, tool_set(fake_task_tool()), durable_context{}, subagent_limit(lo));
    decltype(a)::state_type state;
    get<delegations_field>(state) = {entry("t1", "completed", "run-9"), entry("t2", "completed", "run-9"),
                                     entry("old", "completed", "run-1")};
    run_config cfg;
    cfg.run_id = "run-9";
    auto r = a.run(state, "more", cfg);
    REQUIRE(r.ok());
    CHECK(r.context.at("stop_reason") == "subagent_limit_capped");
    const message* answer = nullptr;
    for (const auto& m : state.messages)
        if (m.is_ai()) {
            answer = &m;
            break;
        }
    REQUIRE(answer);
    CHECK(answer->tool_calls.empty());
    // Another run starts with its own budget.
    scripted_model model2({test::calls({task_call("t4", "fourth")}), ai_message("fine")});
    a.model() = model2;
    cfg.run_id = "run-10";
    auto r2 = a.run(state, "again", cfg);
    REQUIRE(r2.ok());
    CHECK_FALSE(r2.context.contains("stop_reason"));
    CHECK(count_run_delegations(get<delegations_field>(state), "run-10") == 1);
}
