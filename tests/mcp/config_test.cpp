// mcp/config.hpp: the servers of DeerFlow's extensions_config.json, and errors naming the key.
#include <agentware/mcp/config.hpp>

#include <agentware/mcp/tools.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <cstdlib>

using namespace agentware;
using namespace std::chrono_literals;

TEST_CASE("extensions_config.json", "[mcp][config]") {
    ::setenv("AGENTWARE_MCP_TEST_KEY", "secret", 1);
    const auto doc = boost::json::parse(R"({
        "mcpServers": {
            "fs": {"enabled": true, "type": "stdio", "command": "npx", "args": ["-y", "x"],
                   "env": {"TOKEN": "$AGENTWARE_MCP_TEST_KEY"}, "tool_call_timeout": 5},
            "remote": {"type": "http", "url": "http://127.0.0.1:1/mcp",
                       "headers": {"Authorization": "Bearer ${AGENTWARE_MCP_TEST_KEY}"}, "tool_name_prefix": false},
            "off": {"enabled": false, "command": "nothing"}
        },
        "skills": {}
    })");
    const auto servers = mcp::read_extensions_config(doc);
    REQUIRE(servers.size() == 3);
    CHECK(servers[0].name == "fs");
    CHECK(servers[0].env.at("TOKEN") == "secret");
    CHECK(servers[0].tool_call_timeout == 5s);
    CHECK(servers[1].type == mcp::transport_type::http);
    CHECK(servers[1].headers.at("Authorization") == "Bearer secret");
    CHECK_FALSE(servers[1].tool_name_prefix);
    CHECK_FALSE(servers[2].enabled);
    mcp::mcp_toolkit none({servers[2]}); // disabled: not started
    CHECK(none.tools().empty());

    const auto bad = [](const char* text) { return mcp::read_extensions_config(boost::json::parse(text)); };
    CHECK_THROWS_WITH(bad(R"({"mcpServers": {"a": {"type": "ftp"}}})"), Catch::Contains("mcpServers.a.type"));
    CHECK_THROWS_WITH(bad(R"({"mcpServers": {"a": {"command": "x", "argz": []}}})"),
                      Catch::Contains("mcpServers.a.argz: unknown key"));
    CHECK_THROWS_WITH(bad(R"({"mcpServers": {"a": {"type": "http"}}})"), Catch::Contains("mcpServers.a.url"));
    CHECK_THROWS_WITH(bad(R"({"mcpServers": {"a": {"command": 3}}})"),
                      Catch::Contains("mcpServers.a.command"));
    CHECK_THROWS_WITH(bad(R"({"mcpServers": {"a": {"type": "sse", "url": "http://x"}}})"),
                      Catch::Contains("legacy HTTP+SSE"));
}
