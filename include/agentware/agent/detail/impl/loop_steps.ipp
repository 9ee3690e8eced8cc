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
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
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

void record_interrupts(boost::json::object& unknown_fields, interrupt_point at,
                       const std::vector<interrupt_info>& pending, const boost::json::object* answered,
                       const boost::json::array* hook_answered) {
    boost::json::object rec;
    rec["at"] = to_string(at);
    boost::json::array list;
    boost::json::object kept;
    for (const interrupt_info& i : pending) {
        list.push_back(boost::json::object{{"id", i.id}, {"value", i.value}});
        if (at != interrupt_point::tools && i.id == to_string(at)) {
            if (hook_answered != nullptr)
                kept[i.id] = *hook_answered; // the hook paused again in its resumed step
        } else if (answered != nullptr) {
            if (const auto* a = answered->if_contains(i.id)) kept[i.id] = *a;
        }
    }
    rec["interrupts"] = std::move(list);
    rec["answered"] = std::move(kept);
    unknown_fields[interrupt_key] = std::move(rec);
}

bool has_pending_interrupt(const boost::json::object& unknown_fields) noexcept {
    return unknown_fields.contains(interrupt_key);
}

interrupt_point take_interrupts(boost::json::object& unknown_fields, const boost::json::value& value,
                                boost::json::object& answers, boost::json::value& record) {
    const auto* rec = unknown_fields.if_contains(interrupt_key);
    if (rec == nullptr || !rec->is_object())
        throw std::invalid_argument("there is no interrupted run to resume on this thread: resume{...} "
                                    "continues a run that stopped with stop_reason::interrupted");
    const auto& o = rec->get_object();
    interrupt_point at = interrupt_point::tools;
    if (const auto* a = o.if_contains("at"); a && a->is_string()) {
        for (auto p : {interrupt_point::before_agent, interrupt_point::before_model,
                       interrupt_point::after_model, interrupt_point::tools})
            if (a->get_string() == to_string(p)) at = p;
    }
    if (const auto* a = o.if_contains("answered"); a && a->is_object()) answers = a->get_object();
    std::vector<std::string> ids;
    if (const auto* l = o.if_contains("interrupts"); l && l->is_array())
        for (const auto& i : l->get_array())
            if (const auto* io = i.if_object())
                if (const auto* id = io->if_contains("id"); id && id->is_string())
                    ids.emplace_back(id->get_string());
    boost::json::object single;
    const boost::json::object* by_id = value.if_object();
    if (ids.size() == 1) {
        single[ids[0]] = value; // one interrupt: the value is its answer
        by_id = &single;
    }
    std::string missing;
    for (const auto& id : ids)
        if (by_id == nullptr || !by_id->contains(id)) missing += (missing.empty() ? "" : ", ") + id;
    if (!missing.empty())
        throw std::invalid_argument(
            detail::format("the run waits for {} interrupts: resume with an object that has a value for each "
                           "interrupt id (missing: {})",
                           ids.size(), missing));
    for (const auto& id : ids) {
        boost::json::array all;
        if (const auto* before = answers.if_contains(id); before && before->is_array())
            all = before->get_array();
        all.push_back(by_id->at(id));
        answers[id] = std::move(all);
    }
    record = *rec;
    unknown_fields.erase(interrupt_key);
    return at;
}

void loop_base::resume_with(runtime& rt, interrupt_point at, const boost::json::object& answers) {
    rt.tool_resumes = &answers;
    if (at != interrupt_point::tools)
        if (const auto* a = answers.if_contains(to_string(at))) rt.resumes.values = a->if_array();
}

void loop_base::end_hook_resume(runtime& rt) noexcept { rt.resumes = resume_cursor{}; }

void loop_base::end_resume(runtime& rt) noexcept {
    rt.resumes = resume_cursor{};
    rt.tool_resumes = nullptr;
}

interrupt_point loop_base::step_point(loop_step step) noexcept {
    return step == loop_step::tools ? interrupt_point::tools : interrupt_point::before_model;
}

interrupt_point loop_base::refine_point(interrupt_point at, const runtime& rt,
                                        const run_result& result) noexcept {
    if (at == interrupt_point::before_model && rt.round > 0 && result.rounds == rt.round)
        return interrupt_point::after_model;
    return at;
}

bool loop_base::run_others_first(interrupt_point at, const agentware::interrupt& i) noexcept {
    return at == interrupt_point::after_model && !i.held_calls.empty();
}

std::string loop_base::waiting_text(const run_config& config) {
    return "thread \"" + config.thread_id +
           "\" has a paused run (stop_reason::interrupted) waiting for its answer: continue it with "
           "invoke(agentware::resume{value}, config) before sending new input";
}

loop_step loop_base::start_at(hook_result j, run_result& result) {
    loop_step step = loop_step::model;
    if (j) step = step_after_jump(*j);
    if (step == loop_step::end) result.reason = stop_reason::ended_by_hook;
    return step;
}

void loop_base::fail(run_result& result, std::exception_ptr e) {
    if (result.reason == stop_reason::error) return; // keep the first failure
    result.reason = stop_reason::error;
    result.exception = e;
    result.error = describe(e);
}

void loop_base::notify(const run_config& config, std::string_view node, const runtime& rt,
                       const std::vector<message>& messages, std::size_t first) {
    if (config.on_update)
        config.on_update(agent_update{node, rt.round, std::span<const message>(messages).subspan(first)});
}

bool loop_base::count_round(runtime& rt, const run_config& config, run_result& result) {
    if (rt.stop.stop_requested()) {
        result.reason = stop_reason::error;
        result.error = "the run was stopped (run_config::stop) before its next model call";
        return false;
    }
    if (rt.round >= config.recursion_limit) {
        result.reason = stop_reason::recursion_limit;
        result.error = recursion_message(config.recursion_limit);
        return false;
    }
    ++rt.round;
    return true;
}

std::optional<loop_step> loop_base::round_jump(hook_result j, run_result& result) {
    if (j) {
        auto step = step_after_jump(*j);
        if (step == loop_step::end) result.reason = stop_reason::ended_by_hook;
        return step;
    }
    return std::nullopt;
}

loop_step loop_base::after_answer(const std::vector<message>& messages, hook_result j, run_result& result) {
    if (j) {
        auto step = step_after_jump(*j);
        if (step == loop_step::end) result.reason = stop_reason::ended_by_hook;
        return step;
    }
    if (wants_tools(messages)) return loop_step::tools;
    result.reason = stop_reason::finished;
    return loop_step::end;
}

} // namespace agentware::detail

#endif
