#ifndef AGENTWARE_EXAMPLES_AGENTWARE_MCP_COMMAND_HPP
#define AGENTWARE_EXAMPLES_AGENTWARE_MCP_COMMAND_HPP

// `agentware mcp list --config FILE`: starts each enabled MCP server of a
// DeerFlow extensions_config.json, prints its tools (name, description, the
// first line of the input schema) and stops it (docs/mcp.md).

#include <agentware/mcp/client.hpp>
#include <agentware/mcp/config.hpp>

#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace agentware_cli {

inline constexpr std::string_view mcp_usage = R"(usage: agentware mcp list --config FILE

Starts each enabled MCP server of FILE (DeerFlow's extensions_config.json,
its "mcpServers"), prints the tools it offers and stops it.
)";

/// The first line of a text, cut to `max` characters.
inline std::string first_line(std::string_view text, std::size_t max = 100) {
    std::string out(text.substr(0, text.find('\n')));
    if (out.size() > max) out = out.substr(0, max - 3) + "...";
    return out;
}

inline int mcp_main(const std::vector<std::string>& args) {
    std::string config;
    if (args.empty() || args[0] == "-h" || args[0] == "--help") {
        std::fputs(mcp_usage.data(), args.empty() ? stderr : stdout);
        return args.empty() ? 2 : 0;
    }
    if (args[0] != "list") {
        std::fprintf(stderr, "agentware mcp: unknown command \"%s\"\n%s", args[0].c_str(), mcp_usage.data());
        return 2;
    }
    for (std::size_t i = 1; i < args.size(); ++i) {
        if ((args[i] == "--config" || args[i] == "-c") && i + 1 < args.size())
            config = args[++i];
        else {
            std::fprintf(stderr, "agentware mcp: unexpected argument \"%s\"\n%s", args[i].c_str(),
                         mcp_usage.data());
            return 2;
        }
    }
    if (config.empty()) {
        std::fprintf(stderr, "agentware mcp: --config FILE is required\n");
        return 2;
    }
    std::vector<agentware::mcp::server_config> servers;
    try {
        servers = agentware::mcp::load_extensions_config(config);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "agentware mcp: %s\n", e.what());
        return 1;
    }
    int failures = 0;
    for (const auto& s : servers) {
        if (!s.enabled) {
            std::printf("%s: disabled\n\n", s.name.c_str());
            continue;
        }
        try {
            agentware::mcp::client c(s);
            c.connect();
            const auto tools = c.list_tools();
            std::printf("%s: %zu tools (protocol %s)\n", s.name.c_str(), tools.size(),
                        c.protocol_version().c_str());
            for (const auto& t : tools) {
                const std::string name = s.tool_name_prefix ? s.name + "_" + t.name : t.name;
                std::printf("  %s\n    %s\n    %s\n", name.c_str(), first_line(t.description).c_str(),
                            first_line(boost::json::serialize(t.input_schema)).c_str());
            }
            c.close();
        } catch (const std::exception& e) {
            ++failures;
            std::printf("%s: error: %s\n", s.name.c_str(), e.what());
        }
        std::printf("\n");
    }
    return failures == 0 ? 0 : 1;
}

} // namespace agentware_cli

#endif
