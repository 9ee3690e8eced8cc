#ifndef AGENTWARE_MIDDLEWARE_TODO_LIST_HPP
#define AGENTWARE_MIDDLEWARE_TODO_LIST_HPP

// todo_list: LangChain's TodoListMiddleware (reference next.md §1.8), the
// base of DeerFlow's plan-mode `todo` (todo.hpp), which configures it.
//
//  * the `write_todos` tool, which replaces the `todos` state field;
//  * a system-prompt block appended to every model call;
//  * an error for each `write_todos` call when one answer makes several.
//
// An optional context flag (`active_when`) switches it on per run; while the
// flag is not set the tool is not offered and the prompt is left alone.

#include <agentware/agent/requests.hpp>
#include <agentware/agent/runtime.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/core/fields.hpp>
#include <agentware/detail/python_repr.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/tool/make_tool.hpp>
#include <agentware/tool/tool.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// One item of the plan.
struct todo_item {
    std::string content;
    std::string status = "pending"; ///< pending, in_progress or completed
    friend bool operator==(const todo_item&, const todo_item&) = default;
};

/// The `todos` state field: the plan; a new list replaces the old one.
struct todos_field {
    static constexpr std::string_view name = "todos";
    using value_type = std::vector<todo_item>;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const todo_item& t) {
    jv = boost::json::object{{"content", t.content}, {"status", t.status}};
}
/// Missing content reads as empty and a missing status as pending (as DeerFlow renders them).
inline todo_item tag_invoke(boost::json::value_to_tag<todo_item>, const boost::json::value& jv) {
    json_reader r(jv);
    todo_item t;
    r.read("content", t.content).read("status", t.status).reject_unknown_keys();
    return t;
}

namespace detail {

// python_repr(std::string_view) is in detail/python_repr.hpp.
inline std::string python_repr(const std::vector<todo_item>& todos) {
    std::string out = "[";
    for (std::size_t i = 0; i < todos.size(); ++i) {
        if (i) out += ", ";
        out += "{'content': " + python_repr(todos[i].content) +
               ", 'status': " + python_repr(todos[i].status) + "}";
    }
    return out + "]";
}

} // namespace detail

/// Options of todo_list, LangChain's `TodoListMiddleware(system_prompt=...,
/// tool_description=...)`, plus the switch DeerFlow's plan mode uses.
struct todo_list_options {
    /// Appended to the system prompt (after a blank line) on every model call.
    std::string system_prompt = std::string(default_system_prompt);
    /// The `write_todos` tool's description.
    std::string tool_description = std::string(default_tool_description);
    /// When not empty: the run's context key that must be `true` for the
    /// middleware to act (DeerFlow's `is_plan_mode`); otherwise always on.
    std::string active_when;

    // Our own words: LangChain's prompt and tool description are not in our
    // reference (next.md §1.8 names them only).
    static constexpr std::string_view default_system_prompt =
        "## `write_todos`\n\nYou have a `write_todos` tool to plan and track work of several steps. Write "
        "the "
        "plan before you start, keep exactly one item in_progress while you work on it, mark each item "
        "completed as soon as it is done, and send the whole list each time. Skip it for simple requests of "
        "one or two steps. Call it at most once per answer.";
    static constexpr std::string_view default_tool_description =
        "Replaces the todo list of this conversation with the list given. Send every item, each with its "
        "content and its status: pending (not started), in_progress (being worked on) or completed (done). "
        "Use it for work of three or more steps; call it once per answer.";

    static constexpr std::string_view config_section = "todo_list";
    friend bool operator==(const todo_list_options&, const todo_list_options&) = default;
};

class todo_list {
public:
    using state_fields = fields<todos_field>;

    static constexpr std::string_view tool_name = "write_todos";
    // Text kept for parity with LangChain (reference next.md §1.8).
    static constexpr std::string_view parallel_error = "Error: The `write_todos` tool should never be called "
                                                       "multiple times in parallel. Please call it only "
                                                       "once per model invocation to update the todo list.";

    todo_list() : todo_list(todo_list_options{}) {}
    explicit todo_list(todo_list_options o) : list_options_(std::move(o)) {}

    const todo_list_options& list_options() const noexcept { return list_options_; }

    /// True when the run's context switches it on (always, without `active_when`).
    bool active(const runtime& rt) const {
        if (list_options_.active_when.empty()) return true;
        const auto* v = rt.context.if_contains(list_options_.active_when);
        return v && v->is_bool() && v->get_bool();
    }

    /// The `write_todos` tool.
    std::vector<std::shared_ptr<tool_interface>> tools() const {
        return {share_tool(make_tool(
            std::string(tool_name), list_options_.tool_description,
            R"({"type":"object","properties":{"todos":{"type":"array","items":{"type":"object","properties":{)"
            R"("content":{"type":"string"},"status":{"type":"string","enum":["pending","in_progress","completed"]}},)"
            R"("required":["content","status"]}}},"required":["todos"]})",
            [](const boost::json::object& args) {
                auto todos = json_read_as<std::vector<todo_item>>(args.at("todos"), "todos");
                // Text kept for parity with LangChain (Python repr of the list).
                tool_output out("Updated todo list to " + detail::python_repr(todos));
                out.update.set<todos_field>(todos);
                return out;
            }))};
    }

    /// Active: the prompt block; otherwise the tool is not offered.
    template <class Request, class Next>
    decltype(auto) wrap_model_call(Request& req, Next&& next) {
        prepare(req);
        return next(req);
    }

    /// Several `write_todos` calls in one answer: each is answered with the
    /// error instead of running.
    template <class Request, class Next>
    decltype(auto) wrap_tool_call(Request& req, Next&& next) {
        const tool_call& call = req.call.get();
        if (call.name == tool_name && req.state && req.rt && active(*req.rt) && parallel_writes(*req.state)) {
            tool_response r;
            r.msg = tool_message(call.id, std::string(tool_name), std::string(parallel_error));
            r.msg.status = tool_status::error;
            return short_circuit(req, next, std::move(r));
        }
        return next(req);
    }

protected:
    /// The request edit of wrap_model_call: appends the prompt block when
    /// active (true), removes the tool from the request otherwise (false).
    template <class Request>
    bool prepare(Request& req) const {
        if (!req.rt || !active(*req.rt)) {
            const auto& tools = req.tools.get();
            if (std::any_of(tools.begin(), tools.end(),
                            [](const tool_schema& t) { return t.name == tool_name; })) {
                auto& edited = req.tools.edit();
                edited.erase(std::remove_if(edited.begin(), edited.end(),
                                            [](const tool_schema& t) { return t.name == tool_name; }),
                             edited.end());
            }
            return false;
        }
        if (list_options_.system_prompt.empty()) return true;
        std::string prompt(req.system_prompt.get());
        prompt += prompt.empty() ? "" : "\n\n";
        prompt += list_options_.system_prompt;
        req.system_prompt = cow_string(std::move(prompt));
        return true;
    }

private:
    template <class State>
    static bool parallel_writes(const State& state) {
        for (auto it = state.messages.rbegin(); it != state.messages.rend(); ++it) {
            if (!it->is_ai()) continue;
            return std::count_if(it->tool_calls.begin(), it->tool_calls.end(),
                                 [](const tool_call& c) { return c.name == tool_name; }) > 1;
        }
        return false;
    }

    todo_list_options list_options_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const todo_list_options& o) {
    jv = boost::json::object{{"system_prompt", o.system_prompt},
                             {"tool_description", o.tool_description},
                             {"active_when", o.active_when}};
}

inline todo_list_options tag_invoke(boost::json::value_to_tag<todo_list_options>,
                                    const boost::json::value& jv) {
    json_reader r(jv, std::string(todo_list_options::config_section));
    todo_list_options o;
    r.read("system_prompt", o.system_prompt)
        .read("tool_description", o.tool_description)
        .read("active_when", o.active_when)
        .reject_unknown_keys();
    return o;
}

} // namespace agentware

#endif
