#ifndef AGENTWARE_TESTS_MIDDLEWARE_DELEGATIONS_SUPPORT_HPP
#define AGENTWARE_TESTS_MIDDLEWARE_DELEGATIONS_SUPPORT_HPP

// Helpers for the tests of the delegation ledger and what reads it
// (delegations, durable_context, subagent_limit): a task call, a ledger entry,
// and a task tool that answers as DeerFlow's does.

#include "../agent/support.hpp"

#include <agentware/thread/delegations.hpp>

#include <boost/json/object.hpp>

#include <string>

namespace delegations_test {

using namespace agentware;

inline tool_call task_call(std::string id, std::string description, std::string type = "general-purpose") {
    tool_call c;
    c.id = std::move(id);
    c.name = "task";
    c.args = boost::json::object{{"description", description}, {"prompt", "do it"}, {"subagent_type", type}};
    return c;
}

inline delegation_entry entry(std::string id, std::string status, std::string run = "r1") {
    delegation_entry e;
    e.id = std::move(id);
    e.status = std::move(status);
    e.run_id = std::move(run);
    e.created_at = "2026-11-23T09:00:00Z";
    return e;
}

// The task tool: answers as DeerFlow's does.
inline auto fake_task_tool() {
    return make_tool(
        "task", "Delegates.",
        R"({"type":"object","properties":{"description":{"type":"string"},"prompt":{"type":"string"},)"
        R"("subagent_type":{"type":"string"}},"required":["description","prompt","subagent_type"]})",
        [](const boost::json::object& args) {
            return "Task Succeeded. Result: did " + std::string(args.at("description").as_string());
        });
}

} // namespace delegations_test

#endif // AGENTWARE_TESTS_MIDDLEWARE_DELEGATIONS_SUPPORT_HPP
