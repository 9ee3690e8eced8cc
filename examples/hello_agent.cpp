// The main example: an agent with tools and middlewares answering a question,
// printing each step as it happens. It runs offline with a scripted model.
// Only the headers it uses: agentware.hpp would compile every middleware too.
#include <agentware/agent/agent.hpp>
#include <agentware/agent/memory_checkpointer.hpp>
#include <agentware/message/format.hpp>
#include <agentware/model/scripted_model.hpp>
#include <agentware/tool/make_tool.hpp>

#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <memory>

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

// Counts tool calls and failed ones. The calls of one round run concurrently,
// and so do their wrap hooks: hence the atomics (shared, as a middleware is copied into the agent).
struct tool_call_counter {
    struct counts {
        std::atomic<int> calls{0}, failed{0};
    };
    std::shared_ptr<counts> seen = std::make_shared<counts>();
    tool_response wrap_tool_call(auto& request, auto&& next) {
        tool_response r = next(request);
        ++seen->calls;
        if (r.msg.is_error()) ++seen->failed;
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
    tool_call_counter counter;
    agent a(model, tool_set(weather),
            pipeline<model_call_budget, date_in_prompt, tool_call_counter>{model_call_budget{},
                                                                           date_in_prompt{}, counter},
            options);
    a.use_checkpointer(memory_checkpointer{});

    run_config config;
    config.thread_id = "demo";
    // Each step as it happens: the model's answer, then the round's tool results (in call order).
    config.on_update = [](const agent_update& u) {
        for (const auto& m : u.messages) {
            if (m.is_ai()) fmt::print("[round {}] model: {}\n", u.round, m.text());
            for (const auto& call : m.tool_calls)
                fmt::print("  asks {}\n", call);
            if (m.is_tool())
                fmt::print("  tool {} -> {}{}\n", m.name, m.text(), m.is_error() ? " [error]" : "");
        }
    };
    fmt::print("user: Which is warmer right now, Paris or Lisbon?\n");
    auto result = a.invoke("Which is warmer right now, Paris or Lisbon?", config);
    fmt::print("answer: {}\nstopped: {} after {} model calls; {} messages in thread \"{}\"\n",
               result.answer(), to_string(result.reason), result.rounds, result.state.messages.size(),
               config.thread_id);
    fmt::print("{} tool calls, {} failed\n", counter.seen->calls.load(), counter.seen->failed.load());
    fmt::print("the model was told: {}\n", model.requests().back().system_prompt);
    return result.ok() ? 0 : 1;
}
