#ifndef AGENTWARE_TESTS_PRESETS_LEAD_AGENT_SUPPORT_HPP
#define AGENTWARE_TESTS_PRESETS_LEAD_AGENT_SUPPORT_HPP

// Helpers for the tests of DeerFlow's agents (lead_agent, create_deerflow_agent):
// a tool that only has a name.

#include <agentware/tool/make_tool.hpp>

#include <boost/json/object.hpp>

#include <memory>
#include <string>

namespace lead_agent_test {

using namespace agentware;

inline std::shared_ptr<tool_interface> named_tool(std::string name) {
    return share_tool(make_tool(std::move(name), "A test tool.", R"({"type":"object"})",
                                [](const boost::json::object&) { return std::string("ok"); }));
}

} // namespace lead_agent_test

#endif // AGENTWARE_TESTS_PRESETS_LEAD_AGENT_SUPPORT_HPP
