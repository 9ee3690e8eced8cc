#ifndef AGENTWARE_MIDDLEWARE_HUMAN_IN_THE_LOOP_HPP
#define AGENTWARE_MIDDLEWARE_HUMAN_IN_THE_LOOP_HPP

// human_in_the_loop: LangChain's HumanInTheLoopMiddleware. After each model
// answer, the calls of the tools named in `interrupt_on` (and whose `when`
// predicate holds) are put before a human in one interrupt per model turn:
// {"action_requests": [...], "review_configs": [...]}. The run pauses (the
// agent's checkpointer keeps it); the answer comes back as the resume value
// {"decisions": [...]}, one decision per action in the same order:
//   approve  - the call runs as the model wrote it;
//   edit     - the call runs with `edited_action` {name, args}, under the same id;
//   reject   - the call does not run; an error tool message answers it
//              (`message`, or LangChain's default text);
//   respond  - the call does not run; the human's `message` answers it as the tool.
// Python's semantics: approved and edited calls run, rejected ones are
// answered, and the model then sees every answer in its next turn.
//
// Beyond LangChain: the answer's calls that need no review do not wait for
// it. They run before the run pauses and their results are kept, so a resume
// runs only the reviewed calls and never a call twice.

#include <agentware/agent/detail/loop_steps.hpp>
#include <agentware/agent/runtime.hpp>
#include <agentware/core/jump.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/json_values.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// How the calls of one tool are reviewed (LangChain's InterruptOnConfig).
struct interrupt_on_config {
    /// What the human may answer: "approve", "edit", "reject", "respond".
    std::vector<std::string> allowed_decisions{"approve", "edit", "reject", "respond"};
    /// The action's description, replacing the default text ("" keeps it).
    std::string description;
    /// Or a description made per call (wins over `description`).
    std::function<std::string(const tool_call&, const std::vector<message>&, const runtime&)> describe;
    /// Given to the reviewer in the review config, when set.
    std::optional<boost::json::object> args_schema;
    /// Review only the calls for which this returns true (unset: every call).
    std::function<bool(const tool_call&, const std::vector<message>&, const runtime&)> when;
};

struct human_in_the_loop_options {
    /// The tools whose calls need review, by name. A tool not named runs unreviewed.
    std::map<std::string, interrupt_on_config, std::less<>> interrupt_on;
    /// The start of the default description.
    std::string description_prefix = "Tool execution requires approval";

    static constexpr std::string_view config_section = "human_in_the_loop";

    void validate() const {
        static constexpr std::string_view known[] = {"approve", "edit", "reject", "respond"};
        for (const auto& [tool, cfg] : interrupt_on)
            for (const auto& d : cfg.allowed_decisions)
                if (std::find(std::begin(known), std::end(known), d) == std::end(known))
                    throw std::invalid_argument(detail::format(
                        "interrupt_on.{}.allowed_decisions: unknown decision \"{}\" (known: approve, "
                        "edit, reject, respond)",
                        tool, d));
    }
};

class human_in_the_loop {
public:
    human_in_the_loop() = default;
    explicit human_in_the_loop(human_in_the_loop_options o) : options_(std::move(o)) { options_.validate(); }

    const human_in_the_loop_options& options() const noexcept { return options_; }

    /// The default rejection text (Python and JS).
    static std::string rejected_text(std::string_view name, std::string_view id) {
        // Text kept for parity with LangChain (next.md §1.3).
        return detail::format("User rejected the tool call for `{}` with id {}", name, id);
    }

    hook_result after_model(auto& state, runtime& rt) const {
        std::vector<message>& messages = state.messages;
        const std::size_t ai = detail::last_ai_index(messages);
        if (ai == static_cast<std::size_t>(-1) || messages[ai].tool_calls.empty()) return {};

        // The calls that need review, in call order (answered ones have run already).
        std::vector<std::size_t> reviewed;
        std::vector<const interrupt_on_config*> configs;
        boost::json::array action_requests, review_configs;
        std::vector<std::string> held;
        for (std::size_t k = 0; k < messages[ai].tool_calls.size(); ++k) {
            const tool_call& call = messages[ai].tool_calls[k];
            auto it = options_.interrupt_on.find(call.name);
            if (it == options_.interrupt_on.end() || detail::answered_after(messages, ai, call.id)) continue;
            const interrupt_on_config& cfg = it->second;
            if (cfg.when && !cfg.when(call, messages, rt)) continue;
            reviewed.push_back(k);
            configs.push_back(&cfg);
            held.push_back(call.id);
            action_requests.push_back(
                boost::json::object{{"name", call.name},
                                    {"args", call.args},
                                    {"description", describe(call, cfg, messages, rt)}});
            boost::json::object review{{"action_name", call.name},
                                       {"allowed_decisions", boost::json::value_from(cfg.allowed_decisions)}};
            if (cfg.args_schema) review["args_schema"] = *cfg.args_schema;
            review_configs.push_back(std::move(review));
        }
        if (reviewed.empty()) return {};

        boost::json::value answer =
            rt.interrupt(boost::json::object{{"action_requests", std::move(action_requests)},
                                             {"review_configs", std::move(review_configs)}},
                         std::move(held));
        const boost::json::array& decisions = decisions_of(answer);
        if (decisions.size() != reviewed.size())
            // Text kept for parity with LangChain (next.md §1.3).
            throw std::invalid_argument(detail::format(
                "Number of human decisions ({}) does not match number of hanging tool calls ({}).",
                decisions.size(), reviewed.size()));

        // Every decision is checked before anything changes.
        for (std::size_t i = 0; i < reviewed.size(); ++i)
            check(decisions[i], messages[ai].tool_calls[reviewed[i]], *configs[i]);

        std::vector<message> answers;
        for (std::size_t i = 0; i < reviewed.size(); ++i) {
            tool_call& call = messages[ai].tool_calls[reviewed[i]];
            const boost::json::object& d = decisions[i].get_object();
            const std::string_view type = d.at("type").get_string();
            if (type == "edit") {
                const auto& edited = d.at("edited_action").get_object();
                call.name = std::string(edited.at("name").get_string());
                call.args = edited.at("args").get_object();
            } else if (type == "reject") {
                std::string text = detail::string_at(d, "message");
                if (text.empty()) text = rejected_text(call.name, call.id);
                answers.push_back(tool_message(call.id, call.name, std::move(text), tool_status::error));
            } else if (type == "respond") {
                answers.push_back(tool_message(call.id, call.name, detail::string_at(d, "message")));
            }
        }
        const bool answered = !answers.empty();
        for (auto& m : answers)
            detail::append_message(messages, std::move(m));
        // Every call answered (all rejected or responded to): the model reads the answers next,
        // as LangChain's router sends it back to the model once no call is pending.
        if (answered && !detail::wants_tools(messages)) return jump_to::model;
        return {};
    }

private:
    std::string describe(const tool_call& call, const interrupt_on_config& cfg,
                         const std::vector<message>& messages, const runtime& rt) const {
        if (cfg.describe) return cfg.describe(call, messages, rt);
        if (!cfg.description.empty()) return cfg.description;
        // Text kept for parity with LangChain (next.md §1.3: Python's f-string, the args as a dict repr).
        return detail::format("{}\n\nTool: {}\nArgs: {}", options_.description_prefix, call.name,
                              detail::python_repr_json(boost::json::value(call.args)));
    }

    static const boost::json::array& decisions_of(const boost::json::value& answer) {
        const auto* o = answer.if_object();
        const auto* d = o ? o->if_contains("decisions") : nullptr;
        if (d == nullptr || !d->is_array())
            throw std::invalid_argument("human_in_the_loop: the resume value must be an object with a "
                                        "\"decisions\" array, one decision per action request, e.g. "
                                        "{\"decisions\": [{\"type\": \"approve\"}]}");
        return d->get_array();
    }

    static void check(const boost::json::value& decision, const tool_call& call,
                      const interrupt_on_config& cfg) {
        const auto* d = decision.if_object();
        const std::string type = d ? detail::string_at(*d, "type") : std::string();
        const bool allowed = std::find(cfg.allowed_decisions.begin(), cfg.allowed_decisions.end(), type) !=
                             cfg.allowed_decisions.end();
        if (!allowed)
            // Text kept for parity with LangChain (next.md §1.3).
            throw std::invalid_argument(detail::format(
                "Unexpected human decision: {}. Decision type '{}' is not allowed for tool '{}'. "
                "Expected one of "
                "{} based on the tool's configuration.",
                detail::python_repr_json(decision),
                d && d->contains("type") ? detail::python_str(d->at("type")) : "None", call.name,
                detail::python_list(cfg.allowed_decisions)));
        if (type == "edit") {
            const auto* e = d->if_contains("edited_action");
            const auto* eo = e ? e->if_object() : nullptr;
            if (eo == nullptr || !eo->contains("name") || !eo->at("name").is_string() ||
                !eo->contains("args") || !eo->at("args").is_object())
                throw std::invalid_argument(detail::format(
                    "human_in_the_loop: the edit decision for tool '{}' needs an \"edited_action\" "
                    "object with a string \"name\" and an object \"args\"",
                    call.name));
        }
    }

    human_in_the_loop_options options_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const interrupt_on_config& c) {
    boost::json::object o{{"allowed_decisions", boost::json::value_from(c.allowed_decisions)}};
    if (!c.description.empty()) o["description"] = c.description;
    if (c.args_schema) o["args_schema"] = *c.args_schema;
    jv = std::move(o);
}

/// LangChain's forms: `true` (every decision), or an object with
/// `allowed_decisions`, `description` and `args_schema`.
inline interrupt_on_config tag_invoke(boost::json::value_to_tag<interrupt_on_config>,
                                      const boost::json::value& jv) {
    interrupt_on_config c;
    if (jv.is_bool()) return c;
    json_reader r(jv);
    r.read("allowed_decisions", c.allowed_decisions).read("description", c.description);
    c.args_schema = r.optional<boost::json::object>("args_schema");
    r.reject_unknown_keys();
    return c;
}

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                       const human_in_the_loop_options& o) {
    boost::json::object on;
    for (const auto& [tool, cfg] : o.interrupt_on)
        on[tool] = boost::json::value_from(cfg);
    jv = boost::json::object{{"interrupt_on", std::move(on)}, {"description_prefix", o.description_prefix}};
}

/// Reads {"interrupt_on": {"write_file": true, "edit_file": {"allowed_decisions":
/// ["approve", "reject"]}, "ls": false}, "description_prefix": "..."}; `false`
/// leaves a tool unreviewed.
inline human_in_the_loop_options tag_invoke(boost::json::value_to_tag<human_in_the_loop_options>,
                                            const boost::json::value& jv) {
    json_reader r(jv, std::string(human_in_the_loop_options::config_section));
    human_in_the_loop_options o;
    if (auto on = r.object("interrupt_on")) {
        for (const auto& kv : on->object()) {
            const std::string path = on->path_of(kv.key());
            const boost::json::value& v = kv.value();
            if (v.is_bool() && !v.get_bool()) {
                on->skip(kv.key());
                continue;
            }
            if (!v.is_bool() && !v.is_object())
                throw json_error(
                    path, detail::format("expected true, false or an object, got {}", detail::json_shown(v)));
            try {
                o.interrupt_on[std::string(kv.key())] = boost::json::value_to<interrupt_on_config>(v);
            } catch (const json_error& e) {
                throw e.within(path);
            }
            on->skip(kv.key());
        }
    }
    r.read("description_prefix", o.description_prefix).reject_unknown_keys();
    r.validate(o);
    return o;
}

} // namespace agentware

#endif
