// openai_agent.cpp's agent behind the agent server (the LangGraph API, the
// file store): what embedding the server adds to a program's main.cpp.
#include <agentware/agent/agent.hpp>
#include <agentware/model/openai_chat_model.hpp>
#include <agentware/server/file_store.hpp>
#include <agentware/server/server.hpp>
#include <agentware/tool/make_tool.hpp>

#include <cstdio>

int main() {
    agentware::openai_config config;
    config.model = "gpt-4o-mini";
    agentware::openai_chat_model model(config);
    auto make = [model] {
        auto add = agentware::make_tool(
            "add", "Adds two integers.",
            R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]})",
            [](const boost::json::object& args) {
                return std::to_string(args.at("a").as_int64() + args.at("b").as_int64());
            });
        return agentware::make_agent(model, agentware::tool_set(add));
    };
    agentware::server::file_store store("data");
    agentware::server::agent_server server(store, {agentware::server::make_assistant("agent", make)});
    server.listen();
    std::printf("%s\n", server.url().c_str());
    server.run();
}
