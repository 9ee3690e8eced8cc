// A first agent: a model, one tool, one middleware. (docs/getting-started.md)
// Boost.JSON's implementation is compiled in another file, src.cpp.
#include <agentware/agent/agent.hpp>
#include <agentware/model/scripted_model.hpp>
#include <agentware/tool/make_tool.hpp>

#include <cstdio>

using namespace agentware;

// A middleware: any class with one or more hooks.
struct step_logger {
    void before_model(auto& state, runtime& rt) {
        std::printf("round %zu, %zu messages so far\n", rt.round, state.messages.size());
    }
};

int main() {
    auto add = make_tool("add", "Adds two integers.",
                         R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},
                             "required":["a","b"]})",
                         [](const boost::json::object& args) {
                             return std::to_string(args.at("a").as_int64() + args.at("b").as_int64());
                         });
    // A scripted model answers with prepared messages; swap in a real one (docs/models.md).
    scripted_model model(
        {ai_message("", {tool_call{"call-1", "add", {{"a", 2}, {"b", 40}}}}), ai_message("2 + 40 = 42")});
    auto agent = make_agent(model, tool_set(add), step_logger{});
    auto result = agent.invoke("What is 2 + 40?");
    std::printf("%s (%s)\n", result.answer().c_str(), to_string(result.reason).data());
    return result.ok() ? 0 : 1;
}
