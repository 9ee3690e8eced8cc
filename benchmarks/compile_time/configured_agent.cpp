// A main.cpp that builds its model from configuration (model_factory.hpp)
// and gives the agent the sandbox's file tools (DeerFlow's sandbox, local mode).
#include <agentware/agent/agent.hpp>
#include <agentware/middleware/sandbox.hpp>
#include <agentware/middleware/thread_data.hpp>
#include <agentware/model/model_factory.hpp>

#include <cstdio>

int main() {
    agentware::any_chat_model model = agentware::create_chat_model();
    auto agent =
        agentware::make_agent(model, agentware::tool_set(), agentware::thread_data{}, agentware::sandbox{});
    auto result = agent.invoke("List the files of the workspace.");
    std::printf("%s\n", result.answer().c_str());
    return result.ok() ? 0 : 1;
}
