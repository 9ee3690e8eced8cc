#ifndef AGENTWARE_MIDDLEWARE_LLM_TOOL_SELECTOR_HPP
#define AGENTWARE_MIDDLEWARE_LLM_TOOL_SELECTOR_HPP

// llm_tool_selector: before each model call, a (cheaper) model picks the
// tools relevant to the user's last message, and only those are offered
// (LangChain's LLMToolSelectorMiddleware): the first `max_tools` the selector
// ranks (kept in the order they were offered), plus the `always_include`
// tools (not counted).
//
// The selector is asked with one tool, `ToolSelectionResponse`, whose
// argument `tools` lists names from the offered set (a JSON answer in the
// text is accepted too). When the selector fails, answers garbage, names
// tools that do not exist, or there is no user message, the call goes on
// with all tools, and an event in the run's context (`events`) says why.
//
// The selector is the model given to it, or else the run's model (`rt.model`),
// as LangChain uses the agent's model when none is given.

#include <agentware/agent/run_events.hpp>
#include <agentware/agent/runtime.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/json_values.hpp>
#include <agentware/middleware/detail/side_model.hpp>
#include <agentware/model/any_chat_model.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace agentware {

struct llm_tool_selector_options {
    // Text kept for parity with LangChain (next.md §1.9).
    std::string system_prompt =
        "Your goal is to select the most relevant tools for answering the user's query.";
    std::optional<std::size_t> max_tools;    ///< none: as many as the selector names
    std::vector<std::string> always_include; ///< offered whatever the selector says; not counted
    /// The name of a configured model to select with (resolved by whoever builds
    /// the middleware); none: the model given in code, or the run's model.
    std::optional<std::string> model;

    static constexpr std::string_view config_section = "llm_tool_selector";
    friend bool operator==(const llm_tool_selector_options&, const llm_tool_selector_options&) = default;
};

// detail::python_list is in middleware/detail/json_values.hpp.

struct llm_tool_selector {
    static constexpr std::string_view selection_tool = "ToolSelectionResponse";
    static constexpr std::string_view event_name = "tool_selection_fallback";

    /// Selects with the run's model (or `model`, when set later).
    explicit llm_tool_selector(llm_tool_selector_options o = {}) : options_(std::move(o)) {
        if (options_.max_tools && *options_.max_tools == 0)
            throw std::invalid_argument("llm_tool_selector: max_tools must be at least 1");
    }
    /// Selects with `selector` (which must be a model).
    llm_tool_selector(any_chat_model selector, llm_tool_selector_options o = {})
        : llm_tool_selector(std::move(o)) {
        if (!selector) throw std::invalid_argument("llm_tool_selector: the selector model is empty");
        model = std::move(selector);
    }

    /// The selector model; none: the run's model.
    std::optional<any_chat_model> model;

    const llm_tool_selector_options& options() const noexcept { return options_; }

    /// The selector's system prompt, with the ranking instruction when max_tools is set.
    std::string system_message() const {
        std::string s = options_.system_prompt;
        if (options_.max_tools)
            // Text kept for parity with LangChain (next.md §1.9).
            s += detail::format(
                "\nIMPORTANT: List the tool names in order of relevance, with the most relevant "
                "first. If you exceed the maximum number of tools, only the first {} will be used.",
                *options_.max_tools);
        return s;
    }

    auto wrap_model_call(auto& req, auto&& next) -> decltype(next(req)) {
        const auto& tools = req.tools.get();
        std::vector<std::string> names;
        for (const auto& t : tools)
            names.push_back(t.name);
        std::vector<std::string> missing;
        for (const auto& n : options_.always_include)
            if (std::find(names.begin(), names.end(), n) == names.end()) missing.push_back(n);
        if (!missing.empty()) {
            std::vector<std::string> sorted = names;
            std::sort(sorted.begin(), sorted.end());
            // Text kept for parity with LangChain (Python llm_tool_selector.py).
            throw std::invalid_argument(
                detail::format("Tools in always_include not found in request: {}. Available "
                               "tools: {}",
                               detail::python_list(missing), detail::python_list(sorted)));
        }
        std::vector<std::string> candidates;
        for (const auto& n : names)
            if (!always(n)) candidates.push_back(n);
        if (candidates.empty()) return next(req);

        const message* user = nullptr;
        for (auto it = req.messages.get().rbegin(); it != req.messages.get().rend(); ++it)
            if (it->is_human()) {
                user = &*it;
                break;
            }
        if (!user) {
            record_event(req.rt, "llm_tool_selector", event_name,
                         "No user message found in request messages; all tools offered");
            return next(req);
        }
        chat_request question;
        question.system_prompt = system_message();
        question.messages = std::vector<message>{*user};
        question.tools = std::vector<tool_schema>{selection_schema(candidates)};
        question.settings.tool_choice = std::string(selection_tool);
        auto adjust = [self = this, candidates](auto& r, detail::side_answer a) {
            self->select(r, candidates, std::move(a));
        };
        if (model && *model)
            return detail::ask_then_next(req, next, *model, std::move(question), std::move(adjust));
        if (req.rt && req.rt->model)
            return detail::ask_then_next(req, next, req.rt->model, std::move(question), std::move(adjust));
        record_event(req.rt, "llm_tool_selector", event_name,
                     "no selector model (none given and the run has none); all tools offered");
        return next(req);
    }

    /// The names the selector's answer lists, or an error text.
    static std::variant<std::vector<std::string>, std::string> read_answer(const message& ai) {
        const boost::json::value* list = nullptr;
        boost::json::value parsed;
        for (const auto& c : ai.tool_calls)
            if (c.name == selection_tool) {
                list = c.args.if_contains("tools");
                break;
            }
        if (!list) {
            boost::system::error_code ec;
            parsed = boost::json::parse(ai.text(), ec);
            if (!ec && parsed.is_object())
                list = parsed.as_object().if_contains("tools");
            else if (!ec && parsed.is_array())
                list = &parsed;
        }
        if (!list || !list->is_array()) return std::string("the selector's answer lists no tools");
        std::vector<std::string> out;
        for (const auto& v : list->as_array()) {
            if (!v.is_string()) return std::string("the selector's answer lists a tool that is not a name");
            out.emplace_back(v.as_string());
        }
        return out;
    }

private:
    bool always(std::string_view n) const {
        return std::find(options_.always_include.begin(), options_.always_include.end(), n) !=
               options_.always_include.end();
    }

    static tool_schema selection_schema(const std::vector<std::string>& names) {
        boost::json::array values;
        for (const auto& n : names)
            values.emplace_back(n);
        boost::json::object items{{"type", "string"}, {"enum", std::move(values)}};
        boost::json::object tools{{"type", "array"},
                                  {"items", std::move(items)},
                                  // Text kept for parity with LangChain (next.md §1.9).
                                  {"description", "Tools to use. Place the most relevant tools first."}};
        return tool_schema{
            std::string(selection_tool), "Selects the tools relevant to the user's query.",
            boost::json::object{{"type", "object"},
                                {"properties", boost::json::object{{"tools", std::move(tools)}}},
                                {"required", boost::json::array{"tools"}}}};
    }

    template <class Request>
    void select(Request& req, const std::vector<std::string>& candidates, detail::side_answer a) const {
        auto fallback = [&](std::string why) {
            record_event(req.rt, "llm_tool_selector", event_name, why + "; all tools offered");
        };
        if (a.failure) {
            const std::string what = a.failure_text();
            return fallback("the selector model failed: " + what);
        }
        auto answer = read_answer(a.response->ai);
        if (auto* why = std::get_if<std::string>(&answer)) return fallback(*why);
        std::vector<std::string> picked, invalid;
        for (auto& n : std::get<0>(answer)) {
            if (std::find(candidates.begin(), candidates.end(), n) == candidates.end()) {
                invalid.push_back(n);
                continue;
            }
            if (std::find(picked.begin(), picked.end(), n) == picked.end() &&
                (!options_.max_tools || picked.size() < *options_.max_tools))
                picked.push_back(std::move(n));
        }
        // Text kept for parity with LangChain (next.md §1.9).
        if (!invalid.empty())
            return fallback("Model selected invalid tools: " + detail::python_list(invalid));
        std::vector<tool_schema> kept;
        for (const auto& t : req.tools.get()) // the offered order
            if (std::find(picked.begin(), picked.end(), t.name) != picked.end()) kept.push_back(t);
        for (const auto& t : req.tools.get())
            if (always(t.name)) kept.push_back(t);
        req.tools = std::move(kept);
    }

    llm_tool_selector_options options_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                       const llm_tool_selector_options& o) {
    jv = boost::json::object{
        {"system_prompt", o.system_prompt},
        {"max_tools", o.max_tools ? boost::json::value(*o.max_tools) : boost::json::value()},
        {"always_include", boost::json::value_from(o.always_include)},
        {"model", o.model ? boost::json::value(*o.model) : boost::json::value()}};
}
/// Reads LangChain Python's names (`system_prompt`, `max_tools`, `always_include`,
/// `model`: a configured model's name).
inline llm_tool_selector_options tag_invoke(boost::json::value_to_tag<llm_tool_selector_options>,
                                            const boost::json::value& jv) {
    json_reader r(jv, std::string(llm_tool_selector_options::config_section));
    llm_tool_selector_options o;
    r.read("system_prompt", o.system_prompt)
        .read("max_tools", o.max_tools)
        .read("always_include", o.always_include)
        .read("model", o.model)
        .reject_unknown_keys();
    if (o.max_tools && *o.max_tools == 0) throw json_error(r.path_of("max_tools"), "must be at least 1");
    return o;
}

} // namespace agentware

#endif
