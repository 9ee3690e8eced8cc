// Builds against the installed package and runs what a user's first program
// does: a pipeline, a message, a tool, and an agent with the scripted model.
// It includes the umbrella (<agentware.hpp>: Boost.JSON, Asio, fmt), so it
// proves the package's usage requirements, not only the core's; https.cpp
// proves the https component's (Beast, OpenSSL).
#include <agentware.hpp>
#include <agentware/src.hpp> // Boost.JSON's implementation, in one file of the program

#include <fmt/format.h>

#include <string>

namespace {

struct state {
    std::string trace;
};
struct first {
    void before_model(state& s) { s.trace += "1"; }
};
struct second {
    void before_model(state& s) { s.trace += "2"; }
    void after_model(state& s) { s.trace += "3"; }
};

// A middleware of the agent: counts the model calls.
struct call_counter {
    int* calls;
    void before_model(auto&) { ++*calls; }
};

} // namespace

int main() {
    agentware::pipeline<first, second> p;
    state s;
    int runtime = 0;
    p.before_model(s, runtime);
    p.after_model(s, runtime);

    // A message round-trips through its JSON form (the chat-completions wire format).
    agentware::message question = agentware::human_message("What is 2 + 40?");
    auto copy = boost::json::value_to<agentware::message>(boost::json::value_from(question));

    auto add = agentware::make_tool(
        "add", "Adds two integers.",
        R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]})",
        [](const boost::json::object& args) { return args.at("a").as_int64() + args.at("b").as_int64(); });
    agentware::scripted_model model(
        {agentware::ai_message("", {agentware::tool_call{"call-1", "add", {{"a", 2}, {"b", 40}}}}),
         agentware::ai_message("42")});
    int calls = 0;
    auto agent = agentware::make_agent(model, agentware::tool_set(add), call_counter{&calls});
    auto result = agent.invoke(copy.text());

    fmt::print("agentware test_package: pipeline {}, agent answered \"{}\" after {} model calls ({})\n",
               s.trace, result.answer(), calls, agentware::to_string(result.reason));
    return s.trace == "123" && result.ok() && result.answer() == "42" && calls == 2 ? 0 : 1;
}
