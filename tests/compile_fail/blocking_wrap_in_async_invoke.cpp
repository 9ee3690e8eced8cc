// The blocking form of a wrap hook that looks at the response cannot run in
// async_invoke, where `next` returns an awaitable: the message says so.
#include <agentware.hpp>

struct add_signature {
    agentware::model_response wrap_model_call(auto& request, auto&& next) {
        agentware::model_response r = next(request);
        r.ai.content.push_back(agentware::text_block("-- sent by agentware"));
        return r;
    }
};

boost::asio::awaitable<void> run() {
    agentware::scripted_model model({agentware::ai_message("hello")});
    auto agent = agentware::make_agent(model, agentware::tool_set{}, add_signature{});
    co_await agent.async_invoke("hi");
}
