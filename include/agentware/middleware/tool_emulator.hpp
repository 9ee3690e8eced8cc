#ifndef AGENTWARE_MIDDLEWARE_TOOL_EMULATOR_HPP
#define AGENTWARE_MIDDLEWARE_TOOL_EMULATOR_HPP

// tool_emulator: a model plays the tools named (or all tools), so an agent can
// be tested without its real tools (LangChain's LLMToolEmulator). An emulated
// call never reaches the tool: the model is told the tool's name, its
// description and the arguments, and its answer is the tool's result. A tool
// the agent does not have can be emulated too (its description then reads
// "No description available"). When the emulator model fails, the call is
// answered with an error tool message that says so.
//
// The emulator is the model given to it, or else the run's model (`rt.model`).

#include <agentware/agent/requests.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/side_model.hpp>
#include <agentware/model/any_chat_model.hpp>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

struct tool_emulator_options {
    std::optional<std::vector<std::string>> tools; ///< none: emulate every tool
    /// The name of a configured model to emulate with (resolved by whoever builds
    /// the middleware); none: the model given in code, or the run's model.
    std::optional<std::string> model;

    static constexpr std::string_view config_section = "tool_emulator";
    friend bool operator==(const tool_emulator_options&, const tool_emulator_options&) = default;
};

struct tool_emulator {
    /// Emulates with the run's model (or `model`, when set later).
    explicit tool_emulator(tool_emulator_options o = {}) : options_(std::move(o)) {}
    /// Emulates with `emulator` (which must be a model).
    tool_emulator(any_chat_model emulator, tool_emulator_options o = {}) : options_(std::move(o)) {
        if (!emulator) throw std::invalid_argument("tool_emulator: the emulator model is empty");
        model = std::move(emulator);
    }

    /// The emulator model; none: the run's model.
    std::optional<any_chat_model> model;

    const tool_emulator_options& options() const noexcept { return options_; }

    bool emulates(std::string_view name) const {
        return !options_.tools ||
               std::find(options_.tools->begin(), options_.tools->end(), name) != options_.tools->end();
    }

    /// What the emulator model is asked.
    static std::string prompt(std::string_view name, std::string_view description,
                              const boost::json::object& args) {
        // Text kept for parity with LangChain (next.md §1.9).
        return detail::format(
            "You are emulating a tool call for testing purposes.\n\nTool: {}\nDescription: {}\n"
            "Arguments: {}\n\nGenerate a realistic response that this tool would return given these "
            "arguments.\nReturn ONLY the tool's output, no explanation or preamble. Introduce "
            "variation into your responses.",
            name, description.empty() ? std::string_view("No description available") : description,
            boost::json::serialize(args));
    }

    auto wrap_tool_call(auto& req, auto&& next) -> decltype(next(req)) {
        const tool_call& call = *req.call;
        if (!emulates(call.name)) return next(req);
        const std::string description = req.tool ? req.tool->schema().description : std::string();
        chat_request question;
        question.messages = std::vector<message>{human_message(prompt(call.name, description, call.args))};
        auto reply = [id = call.id, name = call.name](detail::side_answer a) {
            return answer(id, name, std::move(a));
        };
        if (model && *model)
            return detail::ask_instead(req, next, *model, std::move(question), std::move(reply));
        if (req.rt && req.rt->model)
            return detail::ask_instead(req, next, req.rt->model, std::move(question), std::move(reply));
        return detail::ask_instead(
            req, next, detail::missing_model{"no emulator model (none given and the run has none)"},
            chat_request{}, std::move(reply));
    }

private:
    static tool_response answer(const std::string& id, const std::string& name, detail::side_answer a) {
        if (a.failure) {
            const std::string what = a.failure_text();
            return tool_response{
                tool_message(id, name,
                             detail::format("Error: the emulator of tool '{}' failed: {}", name, what),
                             tool_status::error),
                {},
                false};
        }
        message m = tool_message(id, name, {});
        m.content = std::move(a.response->ai.content);
        m.metadata["emulated"] = true;
        return tool_response{std::move(m), {}, false};
    }

    tool_emulator_options options_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const tool_emulator_options& o) {
    jv = boost::json::object{{"tools", o.tools ? boost::json::value_from(*o.tools) : boost::json::value()},
                             {"model", o.model ? boost::json::value(*o.model) : boost::json::value()}};
}
/// Reads LangChain Python's names: `tools` (a list of names; absent or null: all)
/// and `model` (a configured model's name).
inline tool_emulator_options tag_invoke(boost::json::value_to_tag<tool_emulator_options>,
                                        const boost::json::value& jv) {
    json_reader r(jv, std::string(tool_emulator_options::config_section));
    tool_emulator_options o;
    r.read("tools", o.tools).read("model", o.model).reject_unknown_keys();
    return o;
}

} // namespace agentware

#endif
