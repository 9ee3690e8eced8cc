// A program's main.cpp that builds an agent on the OpenAI-compatible client
// (Boost.JSON's implementation and, with separate compilation, agentware's,
// are in another file of the program).
#include <agentware/agent/agent.hpp>
#include <agentware/model/openai_chat_model.hpp>
#include <agentware/tool/make_tool.hpp>

#include <cstdio>

int main() {
    agentware::openai_config config;
    config.model = "gpt-4o-mini";
    agentware::openai_chat_model model(config);
    auto add = agentware::make_tool(
        "add", "Adds two integers.",
        R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]})",
        [](const boost::json::object& args) {
            return std::to_string(args.at("a").as_int64() + args.at("b").as_int64());
        });
    auto agent = agentware::make_agent(model, agentware::tool_set(add));
    auto result = agent.invoke("What is 2 + 40?");
    std::printf("%s\n", result.answer().c_str());
    return result.ok() ? 0 : 1;
}
