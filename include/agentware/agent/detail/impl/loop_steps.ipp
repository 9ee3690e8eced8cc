#ifndef AGENTWARE_AGENT_DETAIL_IMPL_LOOP_STEPS_IPP
#define AGENTWARE_AGENT_DETAIL_IMPL_LOOP_STEPS_IPP

// The definitions of agentware/agent/detail/loop_steps.hpp's non-template functions: in every
// translation unit that includes it (header-only), or once in <agentware/src.hpp>
// (AGENTWARE_SEPARATE_COMPILATION).

#include <agentware/agent/detail/loop_steps.hpp>

#include <agentware/detail/format.hpp>
#include <agentware/message/add_messages.hpp>
#include <agentware/message/id.hpp>

#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace agentware::detail {

void append_message(std::vector<message>& messages, message&& m) {
    if (m.id.empty()) {
        // Named as it is moved in, so the id is built once, where it is kept.
        message_id_chars id;
        next_message_id(id.chars);
        messages.emplace_back(std::move(m), id);
    } else {
        std::vector<message> one;
        one.push_back(std::move(m));
        add_messages(messages, std::move(one));
    }
}

void normalize_ai(message& ai, std::size_t index) {
    ai.type = role::ai;
    for (std::size_t k = 0; k < ai.tool_calls.size(); ++k)
        if (ai.tool_calls[k].id.empty()) ai.tool_calls[k].id = detail::format("call_{}_{}", index, k);
    if (!ai.invalid_tool_calls().empty()) {
        auto& invalid = ai.edit_invalid_tool_calls();
        for (std::size_t k = 0; k < invalid.size(); ++k)
            if (invalid[k].id.empty()) invalid[k].id = detail::format("call_{}_invalid_{}", index, k);
    }
}

bool answered_after(const std::vector<message>& messages, std::size_t ai, std::string_view call_id) noexcept {
    for (std::size_t i = ai + 1; i < messages.size(); ++i)
        if (messages[i].is_tool() && messages[i].tool_call_id() == call_id) return true;
    return false;
}

const tool_set& without_disabled(const tool_set& all, std::uint64_t own_generation,
                                 const std::vector<std::string>& disabled, enabled_offer& held) {
    if (held.tools && held.from == &all && held.own_generation == own_generation && held.disabled == disabled)
        return *held.tools;
    auto out = std::make_shared<tool_set>(all);
    for (const auto& name : disabled)
        out->remove(name);
    held = enabled_offer{&all, own_generation, disabled, std::move(out)};
    return *held.tools;
}

void answer_invalid_calls(std::vector<message>& messages) {
    const std::size_t ai = last_ai_index(messages);
    if (ai == static_cast<std::size_t>(-1)) return;
    // By index: appending may move the ai message.
    for (std::size_t i = 0; i < messages[ai].invalid_tool_calls().size(); ++i) {
        const invalid_tool_call& c = messages[ai].invalid_tool_calls()[i];
        if (answered_after(messages, ai, c.id)) continue;
        message answer =
            tool_message(c.id, c.name,
                         detail::format("Error: the arguments of this call to \"{}\" are not a valid JSON "
                                        "object ({}). Call the tool again with a JSON object as arguments.",
                                        c.name, c.error),
                         tool_status::error);
        append_message(messages, std::move(answer));
    }
}

bool wants_tools(const std::vector<message>& messages) {
    std::size_t ai = last_ai_index(messages);
    if (ai == static_cast<std::size_t>(-1)) return false;
    const message& m = messages[ai];
    for (const auto& c : m.tool_calls)
        if (!answered_after(messages, ai, c.id)) return true;
    for (const auto& c : m.invalid_tool_calls())
        if (!answered_after(messages, ai, c.id)) return true;
    return false;
}

tool_response error_result(const tool_call& call, std::string text) {
    return tool_response{tool_message(call.id, call.name, std::move(text), tool_status::error), {}, false};
}

tool_response to_result(const tool_call& call, tool_output&& out) {
    tool_response r; // built in place: a message is large to move
    r.msg.type = role::tool;
    r.msg.set_tool_call_id(call.id);
    r.msg.name = call.name;
    r.msg.content = std::move(out.content);
    r.msg.status = out.status;
    if (!out.metadata.empty()) r.msg.metadata = std::move(out.metadata);
    if (!out.update.empty()) r.update = std::move(out.update); // most tools change nothing else
    r.end_run = out.end_run;
    return r;
}

std::string describe(std::exception_ptr e) {
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& x) {
        return x.what();
    } catch (...) {
        return "unknown error";
    }
}

std::string recursion_message(std::size_t limit) {
    return detail::format(
        "the run reached its recursion limit of {} rounds before the model gave a final answer; "
        "every message so far is kept (raise run_config::recursion_limit to allow more rounds)",
        limit);
}

} // namespace agentware::detail

#endif
