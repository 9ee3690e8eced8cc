// `agentware chat`: sends a prompt to a configured model and prints the answer
// as it streams (or, with --json, the final ai message in OpenAI's format).
// `agentware replay` runs a scenario (replay_command.hpp, docs/replay.md).
// `agentware run` runs the lead agent in the terminal (run_command.hpp, docs/run.md).
//
//   agentware chat [options] [prompt...]      (no prompt or "-": read stdin)
//
// Models come from --config, else $AGENTWARE_CONFIG, else the environment:
// OPENAI_BASE_URL, OPENAI_API_KEY and AGENTWARE_MODEL.

#include "mcp_command.hpp"
#include "replay_command.hpp"
#include "run_command.hpp"
#include "serve_command.hpp"

#include <agentware/message/json.hpp>
#include <agentware/model/model_factory.hpp>

#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <exception>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::string_view usage = R"(usage: agentware chat [options] [prompt...]
       agentware replay [--check] [--base-dir DIR] SCENARIO.json   (see agentware replay --help)
       agentware mcp list --config FILE   (the tools of the MCP servers of an extensions_config.json)
       agentware run [--config config.yaml] [prompt...]   (the lead agent; see agentware run --help)
       agentware serve [--config config.yaml] [--port N]   (the agent server; see agentware serve --help)

Sends the prompt (the remaining words, or stdin when there are none or "-")
to a model and prints the answer as it streams.

options:
  -m, --model NAME        a configured model (default: the first one)
  -c, --config FILE       model configuration (default: $AGENTWARE_CONFIG)
  -s, --system TEXT       system prompt
      --json              print the final ai message as OpenAI JSON instead
      --thinking          enable thinking (the model must support it)
      --show-reasoning    print reasoning to stderr as it streams
      --no-stream         wait for the whole answer before printing
      --temperature X     sampling temperature
      --max-tokens N      answer length limit
  -h, --help              this text

Without a configuration file, OPENAI_BASE_URL (default OpenAI), OPENAI_API_KEY
and AGENTWARE_MODEL (the model id) are read from the environment.
)";

struct usage_error {
    std::string what;
};

struct options {
    std::string model;
    std::string config;
    std::string system;
    bool json = false;
    bool thinking = false;
    bool show_reasoning = false;
    bool stream = true;
    std::optional<double> temperature;
    std::optional<std::int64_t> max_tokens;
    std::vector<std::string> words;
};

/// The error on one line, whatever the provider's message contained.
std::string one_line(std::string_view text) {
    std::string out;
    for (char c : text)
        out += (c == '\n' || c == '\r') ? ' ' : c;
    return out;
}

template <class T>
T number(std::string_view flag, std::string_view text) {
    T value{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size())
        throw usage_error{fmt::format("{} expects a number (got \"{}\")", flag, text)};
    return value;
}

options parse(int argc, char** argv) {
    options o;
    std::vector<std::string_view> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "-h" || args[0] == "--help") throw usage_error{};
    if (args[0] != "chat")
        throw usage_error{fmt::format(
            "unknown command \"{}\" (the commands are \"chat\", \"run\", \"replay\" and \"mcp\")", args[0])};
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string_view a = args[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= args.size()) throw usage_error{fmt::format("{} needs a value", a)};
            return std::string(args[++i]);
        };
        if (a == "-h" || a == "--help")
            throw usage_error{};
        else if (a == "-m" || a == "--model")
            o.model = value();
        else if (a == "-c" || a == "--config")
            o.config = value();
        else if (a == "-s" || a == "--system")
            o.system = value();
        else if (a == "--json")
            o.json = true;
        else if (a == "--thinking")
            o.thinking = true;
        else if (a == "--show-reasoning")
            o.show_reasoning = true;
        else if (a == "--no-stream")
            o.stream = false;
        else if (a == "--temperature")
            o.temperature = number<double>(a, value());
        else if (a == "--max-tokens")
            o.max_tokens = number<std::int64_t>(a, value());
        else if (a == "--") {
            for (++i; i < args.size(); ++i)
                o.words.emplace_back(args[i]);
        } else if (a.size() > 1 && a.front() == '-' && a != "-")
            throw usage_error{fmt::format("unknown option \"{}\"", a)};
        else
            o.words.emplace_back(a);
    }
    return o;
}

std::string prompt_of(const options& o) {
    if (o.words.empty() || (o.words.size() == 1 && o.words[0] == "-"))
        return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    std::string prompt;
    for (const auto& w : o.words)
        prompt += (prompt.empty() ? "" : " ") + w;
    return prompt;
}

int chat(const options& o) {
    const agentware::model_registry registry = o.config.empty()
                                                   ? agentware::model_registry::load_default()
                                                   : agentware::model_registry::from_file(o.config);
    agentware::any_chat_model model = registry.create_chat_model(o.model, o.thinking);

    const std::string prompt = prompt_of(o);
    if (prompt.find_first_not_of(" \t\r\n") == std::string::npos) throw usage_error{"the prompt is empty"};

    const std::vector<agentware::message> history{agentware::human_message(prompt)};
    agentware::chat_request request;
    request.messages = agentware::cow_vector<agentware::message>(history);
    request.system_prompt = o.system;
    request.settings.temperature = o.temperature;
    request.settings.max_tokens = o.max_tokens;

    bool printed = false;
    if (o.stream && !o.json) {
        request.stream.on_text = [&](std::string_view delta) {
            std::fwrite(delta.data(), 1, delta.size(), stdout);
            std::fflush(stdout);
            printed = true;
        };
        if (o.show_reasoning)
            request.stream.on_reasoning = [](std::string_view delta) {
                std::fwrite(delta.data(), 1, delta.size(), stderr);
                std::fflush(stderr);
            };
    }

    const agentware::model_response response = model.invoke(request);
    if (o.json) {
        agentware::wire_options wire;
        wire.include_reasoning = true;
        std::fputs(boost::json::serialize(agentware::to_openai_wire(response.ai, wire)).c_str(), stdout);
        std::fputc('\n', stdout);
        return 0;
    }
    if (!printed) {
        if (o.show_reasoning && !response.ai.reasoning().empty())
            std::fprintf(stderr, "%.*s\n", static_cast<int>(response.ai.reasoning().size()),
                         response.ai.reasoning().data());
        std::fputs(response.ai.text().c_str(), stdout);
    }
    std::fputc('\n', stdout);
    // An answer that is only tool calls would otherwise print nothing at all.
    for (const auto& call : response.ai.tool_calls)
        std::fprintf(stderr, "[tool call] %s %s\n", call.name.c_str(),
                     boost::json::serialize(call.args).c_str());
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::string_view(argv[1]) == "replay")
        return agentware_cli::replay_main(std::vector<std::string>(argv + 2, argv + argc));
    if (argc > 1 && std::string_view(argv[1]) == "run")
        return agentware_cli::run_main(std::vector<std::string>(argv + 2, argv + argc));
    if (argc > 1 && std::string_view(argv[1]) == "serve")
        return agentware_cli::serve_main(std::vector<std::string>(argv + 2, argv + argc));
    if (argc > 1 && std::string_view(argv[1]) == "mcp")
        return agentware_cli::mcp_main(std::vector<std::string>(argv + 2, argv + argc));
    try {
        return chat(parse(argc, argv));
    } catch (const usage_error& e) {
        if (e.what.empty()) {
            std::fputs(usage.data(), stdout);
            return argc > 1 ? 0 : 2;
        }
        std::fprintf(stderr, "agentware: %s (see agentware --help)\n", e.what.c_str());
        return 2;
    } catch (const agentware::model_error& e) {
        std::fprintf(stderr, "agentware: error: %s\n", one_line(e.what()).c_str());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "agentware: error: %s\n", one_line(e.what()).c_str());
        return 1;
    }
}
