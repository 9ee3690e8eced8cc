#ifndef AGENTWARE_MIDDLEWARE_TOOL_APPROVAL_HPP
#define AGENTWARE_MIDDLEWARE_TOOL_APPROVAL_HPP

// tool_approval: the Swift DeepAgents form of human in the loop, for programs
// that answer in process. Before each tool call (wrap_tool_call, so it is
// best listed first: outermost, nothing inner runs before it) a
// tool_approval_handler decides:
//   approve  - the call runs;
//   deny     - it does not run; an error tool message tells the model;
//   ask_user - a human decides: `confirm` asks them in process (the run waits
//              for the answer); without `confirm` the run pauses (interrupt)
//              with a review request for this call, and the resume value
//              {"decisions": [{"type": "approve"}]} (or "reject", with an
//              optional "message") decides.
// The human_in_the_loop middleware is the interrupting, per-turn form.

#include <agentware/agent/requests.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/json_values.hpp>
#include <agentware/middleware/human_in_the_loop.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

namespace agentware {

/// What a tool_approval_handler answers for one call.
enum class tool_approval_decision { approve, deny, ask_user };

/// Decides, in process, whether a call may run.
using tool_approval_handler = std::function<tool_approval_decision(const tool_call&)>;

struct tool_approval_options {
    tool_approval_handler handler; ///< required
    /// Asks a human about one call, in process: true runs it. Unset: an
    /// `ask_user` decision pauses the run instead.
    std::function<bool(const tool_call&)> confirm;
    /// The text that answers a denied call (LangChain's rejection text when empty).
    std::string denied_text;
};

class tool_approval {
public:
    explicit tool_approval(tool_approval_options o) : options_(std::move(o)) {
        if (!options_.handler) throw std::invalid_argument("tool_approval: the handler is required");
    }
    explicit tool_approval(tool_approval_handler h)
        : tool_approval(tool_approval_options{std::move(h), {}, {}}) {}

    auto wrap_tool_call(auto& req, auto&& next) const -> decltype(next(req)) {
        const tool_call& call = *req.call;
        switch (options_.handler(call)) {
        case tool_approval_decision::approve:
            return next(req);
        case tool_approval_decision::deny:
            return short_circuit(req, next, denied(call, {}));
        case tool_approval_decision::ask_user:
            break;
        }
        if (options_.confirm)
            return options_.confirm(call) ? next(req) : short_circuit(req, next, denied(call, {}));
        boost::json::value answer = interrupt_call(req, review_request(call));
        const auto* o = answer.if_object();
        const auto* ds = o ? o->if_contains("decisions") : nullptr;
        const auto* d =
            ds && ds->is_array() && ds->get_array().size() == 1 ? ds->get_array()[0].if_object() : nullptr;
        const std::string type = d ? detail::string_at(*d, "type") : std::string();
        if (type == "approve") return next(req);
        if (type == "reject") return short_circuit(req, next, denied(call, detail::string_at(*d, "message")));
        throw std::invalid_argument(
            "tool_approval: the resume value must be {\"decisions\": [{\"type\": \"approve\"}]} or "
            "{\"decisions\": [{\"type\": \"reject\", \"message\": \"...\"}]} for the call " +
            call.id);
    }

private:
    tool_response denied(const tool_call& call, std::string text) const {
        if (text.empty()) text = options_.denied_text;
        if (text.empty()) text = human_in_the_loop::rejected_text(call.name, call.id);
        return tool_response{
            tool_message(call.id, call.name, std::move(text), tool_status::error), {}, false};
    }

    static boost::json::value review_request(const tool_call& call) {
        // LangChain's HITLRequest, for one call, with the decisions this middleware understands.
        return boost::json::object{
            {"action_requests",
             boost::json::array{boost::json::object{
                 {"name", call.name},
                 {"args", call.args},
                 {"description", "Tool execution requires approval\n\nTool: " + call.name +
                                     "\nArgs: " + detail::python_repr_json(boost::json::value(call.args))}}}},
            {"review_configs", boost::json::array{boost::json::object{
                                   {"action_name", call.name},
                                   {"allowed_decisions", boost::json::array{"approve", "reject"}}}}}};
    }

    tool_approval_options options_;
};

} // namespace agentware

#endif
