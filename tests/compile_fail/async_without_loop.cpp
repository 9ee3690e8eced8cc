// The coroutine loop has a header of its own: calling async_invoke without it
// is a compile error that names the header.
#include <agentware/agent/agent.hpp>
#include <agentware/model/scripted_model.hpp>

int main() {
    agentware::scripted_model model({agentware::ai_message("hi")});
    auto a = agentware::make_agent(model, agentware::tool_set());
    auto run = a.async_invoke("hello");
    (void)run;
}
