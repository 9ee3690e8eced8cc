// A middleware whose `tools` member cannot be called as `tools()` returning
// tools: the agent refuses it rather than ignoring it.
#include <agentware/agent/agent.hpp>
#include <agentware/model/scripted_model.hpp>

struct bad_tools_hook {
    int tools(int n) const { return n; }
};

int main() {
    agentware::scripted_model model({});
    agentware::agent a(model, agentware::tool_set{}, agentware::pipeline<bad_tools_hook>{});
    (void)a;
}
