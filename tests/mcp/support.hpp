#ifndef AGENTWARE_TESTS_MCP_SUPPORT_HPP
#define AGENTWARE_TESTS_MCP_SUPPORT_HPP

// What the MCP tests share: the servers they run (the reference servers that
// cmake/install-deps.sh installs into tests/mcp/node_modules, and the fake
// server fake_server.mjs) and a look at a tool result.

#include <agentware/mcp/config.hpp>

#include <catch2/catch.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <filesystem>
#include <string>

namespace mcp_test {

using namespace std::chrono_literals;

inline const std::filesystem::path servers_dir = AGENTWARE_MCP_SERVERS_DIR;

inline std::filesystem::path node_module(const std::string& package) {
    const std::filesystem::path p =
        servers_dir / "node_modules" / "@modelcontextprotocol" / package / "dist" / "index.js";
    if (!std::filesystem::exists(p))
        FAIL(p.string() << " is missing: run cmake/install-deps.sh (it runs `npm ci` in tests/mcp)");
    return p;
}

inline agentware::mcp::server_config everything_stdio() {
    agentware::mcp::server_config c;
    c.name = "everything";
    c.command = "node";
    c.args = {node_module("server-everything").string(), "stdio"};
    c.session_init_timeout = 20s;
    c.tool_call_timeout = 20s;
    return c;
}

inline agentware::mcp::server_config fake(const std::string& mode) {
    agentware::mcp::server_config c;
    c.name = "fake";
    c.command = "node";
    c.args = {(servers_dir / "fake_server.mjs").string(), mode};
    c.session_init_timeout = 10s;
    c.tool_call_timeout = 10s;
    return c;
}

inline bool is_error(const boost::json::object& result) {
    const auto* e = result.if_contains("isError");
    return e && e->is_bool() && e->get_bool();
}

} // namespace mcp_test

#endif
