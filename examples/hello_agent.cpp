// The main example: an agent with tools and middlewares answering a question,
// printing each step as it happens. It runs offline with a scripted model.
// Only the headers it uses: agentware.hpp would compile every middleware too.
#include <agentware/agent/agent.hpp>
#include <agentware/agent/checkpointer.hpp>
#include <agentware/message/format.hpp>
#include <agentware/model/scripted_model.hpp>
#include <agentware/tool/make_tool.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <map>

using namespace agentware;

// Counts model calls and stops the run (jump to end) past a budget.
struct model_call_budget {
    std::size_t max_calls = 8;
    hook_result before_model(auto&, runtime& rt) {
        if (rt.round > max_calls) return jump_to::end;
        return {};
    }
};

// Adds the date to the system prompt of every model call (request only).
struct date_in_prompt {
    std::string today = "2026-11-22";
    auto wrap_model_call(auto& request, auto&& next) {
        request.system_prompt += "\nToday is " + today + ".";
        return next(request);
    }
};

// Logs every tool call and how it went.
struct tool_logger {
    tool_response wrap_tool_call(auto& request, auto&& next) {
        tool_response r = next(request);
        fmt::print("  tool {}({}) -> {}{}\n", request.call->name, boost::json::serialize(request.call->args),
                   r.msg.text(), r.msg.is_error() ? " [error]" : "");
        return r;
    }
};

int main() {
    const std::map<std::string, int, std::less<>> temperatures{{"Paris", 11}, {"Lisbon", 17}, {"Oslo", 2}};
    auto weather =
        make_tool("weather", "Current temperature in a city, in degrees Celsius.",
                  R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})",
                  [&](const boost::json::object& args) -> tool_output {
                      std::string_view city = args.at("city").as_string();
                      auto it = temperatures.find(city);
                      if (it == temperatures.end())
                          return tool_output::error(fmt::format("no data for {}", city));
                      return fmt::format("{} °C", it->second);
                  });

    // What a model would answer; with a real model (docs/models.md) the same code runs.
    scripted_model model({
        ai_message("Let me check both cities.", {tool_call{"c1", "weather", {{"city", "Paris"}}},
                                                 tool_call{"c2", "weather", {{"city", "Lisbon"}}}}),
        ai_message("Lisbon is warmer: 17 °C against 11 °C in Paris."),
    });

    agent_options options;
    options.system_prompt = "You are a helpful assistant. Use tools for facts.";
    agent a(model, tool_set(weather), pipeline<model_call_budget, date_in_prompt, tool_logger>{}, options);
    a.use_checkpointer(memory_checkpointer{});

    run_config config;
    config.thread_id = "demo";
    config.on_update = [](const agent_update& u) {
        for (const auto& m : u.messages)
            if (m.is_ai()) fmt::print("[round {}] {}\n", u.round, m);
    };
    fmt::print("user: Which is warmer right now, Paris or Lisbon?\n");
    auto result = a.invoke("Which is warmer right now, Paris or Lisbon?", config);
    fmt::print("answer: {}\nstopped: {} after {} model calls; {} messages in thread \"{}\"\n",
               result.answer(), to_string(result.reason), result.rounds, result.state.messages.size(),
               config.thread_id);
    fmt::print("the model was told: {}\n", model.requests().back().system_prompt);
    return result.ok() ? 0 : 1;
}
