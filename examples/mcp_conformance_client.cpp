// A client for the MCP conformance suite (@modelcontextprotocol/conformance).
// The suite starts a test server for each scenario, runs this program with
// the server's URL as its last argument and the scenario's name in
// MCP_CONFORMANCE_SCENARIO, and then checks what the server saw. The program
// does what any agent does with a server: connects over Streamable HTTP,
// lists the tools and calls each one, with arguments made from the tool's
// schema, and accepts an elicitation form with its defaults. (docs/mcp.md)
#include <agentware/mcp/client.hpp>
#include <agentware/mcp/tools.hpp>

#include <boost/json/serialize.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace mcp = agentware::mcp;

namespace {

/// A value for each property of a JSON Schema object: its default when it
/// has one, else a plain value of its type.
boost::json::object values_for(const boost::json::object& schema) {
    boost::json::object out;
    const auto* props = schema.if_contains("properties");
    if (props == nullptr || !props->is_object()) return out;
    for (const auto& [name, prop] : props->get_object()) {
        if (!prop.is_object()) continue;
        const auto& p = prop.get_object();
        if (const auto* d = p.if_contains("default")) {
            out[name] = *d;
            continue;
        }
        const auto* type = p.if_contains("type");
        const std::string t = type && type->is_string() ? std::string(type->get_string()) : "string";
        if (t == "integer" || t == "number")
            out[name] = 2;
        else if (t == "boolean")
            out[name] = true;
        else if (t == "object")
            out[name] = values_for(p);
        else if (t == "array")
            out[name] = boost::json::array{};
        else
            out[name] = "agentware";
    }
    return out;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s <server url>   (the scenario in MCP_CONFORMANCE_SCENARIO)\n",
                     argv[0]);
        return 2;
    }
    const char* scenario = std::getenv("MCP_CONFORMANCE_SCENARIO");
    std::printf("scenario %s against %s\n", scenario ? scenario : "(none)", argv[argc - 1]);

    mcp::server_config server;
    server.name = "conformance";
    server.type = mcp::transport_type::http;
    server.url = argv[argc - 1];
    server.tool_call_timeout = std::chrono::seconds(10); // within the suite's 30 s for a scenario
    mcp::client_options options;
    options.client_name = "agentware-conformance-client";
    options.on_elicitation = [](const boost::json::object& params) {
        boost::json::object schema;
        if (const auto* s = params.if_contains("requestedSchema"); s && s->is_object())
            schema = s->get_object();
        return boost::json::object{{"action", "accept"}, {"content", values_for(schema)}};
    };
    options.on_event = [](const mcp::mcp_event& e) {
        std::printf("%s %s\n", e.method.c_str(), boost::json::serialize(e.params).c_str());
    };
    try {
        mcp::client client(server, options);
        client.connect();
        std::printf("connected: %s, protocol %s\n", boost::json::serialize(client.server_info()).c_str(),
                    client.protocol_version().c_str());
        for (const auto& tool : client.list_tools()) {
            const auto args = values_for(tool.input_schema);
            const auto out = mcp::to_tool_output(client.call_tool(tool.name, args));
            std::printf("%s(%s) -> %s%s\n", tool.name.c_str(), boost::json::serialize(args).c_str(),
                        out.status == agentware::tool_status::error ? "error: " : "", out.text().c_str());
        }
        client.close();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
