#ifndef AGENTWARE_PRESETS_DEERFLOW_HPP
#define AGENTWARE_PRESETS_DEERFLOW_HPP

// DeerFlow's runtime middleware chain, built from configuration: one optional
// slot per middleware, in DeerFlow's order, each switched on and configured by
// the configuration section of the same name, which its options' JSON form
// reads (docs/presets.md).

#include <agentware/core/pipeline.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/middleware/clarification.hpp>
#include <agentware/middleware/context_editing.hpp>
#include <agentware/middleware/dangling_tool_call.hpp>
#include <agentware/middleware/durable_context.hpp>
#include <agentware/middleware/dynamic_context.hpp>
#include <agentware/middleware/guardrail.hpp>
#include <agentware/middleware/human_in_the_loop.hpp>
#include <agentware/middleware/input_sanitization.hpp>
#include <agentware/middleware/llm_error_handling.hpp>
#include <agentware/middleware/llm_tool_selector.hpp>
#include <agentware/middleware/loop_detection.hpp>
#include <agentware/middleware/memory.hpp>
#include <agentware/middleware/model_call_limit.hpp>
#include <agentware/middleware/model_fallback.hpp>
#include <agentware/middleware/model_length_finish_reason.hpp>
#include <agentware/middleware/model_retry.hpp>
#include <agentware/middleware/moderation.hpp>
#include <agentware/middleware/pii.hpp>
#include <agentware/middleware/pii_redaction.hpp>
#include <agentware/middleware/prompt_caching.hpp>
#include <agentware/middleware/read_before_write.hpp>
#include <agentware/middleware/safety_finish_reason.hpp>
#include <agentware/middleware/sandbox.hpp>
#include <agentware/middleware/sandbox/audit.hpp>
#include <agentware/middleware/skill_tool_policy.hpp>
#include <agentware/middleware/skills.hpp>
#include <agentware/middleware/subagent_limit.hpp>
#include <agentware/middleware/summarization.hpp>
#include <agentware/middleware/system_message_coalescing.hpp>
#include <agentware/middleware/terminal_response.hpp>
#include <agentware/middleware/thread_data.hpp>
#include <agentware/middleware/title.hpp>
#include <agentware/middleware/todo.hpp>
#include <agentware/middleware/todo_list.hpp>
#include <agentware/middleware/token_accounting.hpp>
#include <agentware/middleware/token_budget.hpp>
#include <agentware/middleware/tool_call_limit.hpp>
#include <agentware/middleware/tool_emulator.hpp>
#include <agentware/middleware/tool_error_handling.hpp>
#include <agentware/middleware/tool_output_budget.hpp>
#include <agentware/middleware/tool_receipt.hpp>
#include <agentware/middleware/tool_result_sanitization.hpp>
#include <agentware/middleware/tool_retry.hpp>
#include <agentware/middleware/uploads.hpp>
#include <agentware/middleware/view_image.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_to.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentware {

/// DeerFlow's runtime chain, in the order of its lead agent (less the
/// middlewares agentware does not have yet), every middleware optional.
using deerflow_pipeline = pipeline<
    std::optional<input_sanitization>, std::optional<tool_output_budget>,
    std::optional<tool_result_sanitization>,
    // DeerFlow's PiiRedaction, engaged only when `pii_redaction.enabled` is true: last of the outer
    // wrappers, so it is the innermost of them (its must_come_after checks it)
    std::optional<pii_redaction>, std::optional<thread_data>, std::optional<uploads>, std::optional<sandbox>,
    std::optional<dangling_tool_call>, std::optional<llm_error_handling>,
    // the outermost tool wrapper, ahead of the gates: the results they make get receipts too
    std::optional<tool_receipt>, std::optional<guardrail<allowlist_provider>>, std::optional<sandbox_audit>,
    std::optional<read_before_write>, std::optional<tool_error_handling>, std::optional<dynamic_context>,
    // skills: engaged by the lead agent when it has a skill catalog (make_lead_agent)
    std::optional<skills>, std::optional<skill_tool_policy>, std::optional<summarization>,
    std::optional<durable_context>, std::optional<todo>, std::optional<token_accounting>,
    std::optional<title>, std::optional<memory>, std::optional<view_image>,
    std::optional<system_message_coalescing>, std::optional<subagent_limit>, std::optional<loop_detection>,
    std::optional<token_budget>, std::optional<terminal_response>, std::optional<model_length_finish_reason>,
    std::optional<safety_finish_reason>,
    // LangChain's general middlewares (docs/middleware/README.md), before clarification (last):
    // the retries and the fallback innermost of them, so the other hooks apply to every attempt
    std::optional<todo_list>, std::optional<pii>, std::optional<context_editing>,
    std::optional<model_call_limit>, std::optional<tool_call_limit>, std::optional<moderation>,
    std::optional<llm_tool_selector>, std::optional<prompt_caching>, std::optional<tool_emulator>,
    std::optional<tool_retry>, std::optional<model_retry>, std::optional<model_fallback>,
    // after the others' after_model hooks in the list, so its own runs first (nothing re-runs on resume)
    std::optional<human_in_the_loop>, std::optional<clarification>>;

namespace detail {

// The settings of section `name` when it is on: absent, null or false is off;
// true is on with the defaults; an object is on (unless its `enabled` is
// false) with its other keys.
inline std::optional<boost::json::object> deerflow_section(json_reader& config, std::string_view name) {
    const auto* v = config.find(name);
    const std::string path = config.path_of(name);
    if (v == nullptr || (v->is_bool() && !v->get_bool())) return std::nullopt;
    if (v->is_bool()) return boost::json::object{};
    if (!v->is_object()) json_type_error(path, "true, false or an object of settings", *v);
    boost::json::object settings = v->get_object();
    if (const auto* enabled = settings.if_contains("enabled")) {
        if (!json_read_as<bool>(*enabled, json_path(path, "enabled"))) return std::nullopt;
        settings.erase("enabled");
    }
    return settings;
}

// The options a section gives, when the section is on.
template <class Options>
std::optional<Options> read_section(json_reader& config) {
    if (auto settings = deerflow_section(config, Options::config_section))
        return boost::json::value_to<Options>(boost::json::value(std::move(*settings)));
    return std::nullopt;
}

// Engages M's slot with the options its section gives, when the section is on.
template <class M, class Options, class Chain>
void engage_from_section(Chain& chain, json_reader& config) {
    if (auto options = read_section<Options>(config)) chain.template slot<M>().emplace(std::move(*options));
}

// Whether the section of M, which has no settings, is on.
template <class M>
bool read_switch(json_reader& config) {
    if (auto settings = deerflow_section(config, M::config_section)) {
        json_reader(*settings, config.path_of(M::config_section)).reject_unknown_keys();
        return true;
    }
    return false;
}

// Engages M's slot when its section is on; M has no settings.
template <class M, class Chain>
void engage_switch(Chain& chain, json_reader& config) {
    if (read_switch<M>(config)) chain.template slot<M>().emplace();
}

// DeerFlow names its built-in allowlist by module path; agentware by name.
inline allowlist_provider read_guardrail_provider(const boost::json::value& v, std::string path) {
    json_reader r(v, std::move(path));
    if (auto use = r.optional<std::string>("use"))
        if (*use != allowlist_provider::name && *use != "deerflow.guardrails.builtin:AllowlistProvider")
            throw json_error(r.path_of("use"),
                             "unknown provider \"" + *use + "\" (known: allowlist, the only built-in one)");
    allowlist_provider provider = r.optional<allowlist_provider>("config").value_or(allowlist_provider{});
    r.reject_unknown_keys();
    return provider;
}

// llm_error_handling's options from its section; DeerFlow keeps the breaker's
// settings in a section of their own, read with it (or passed over without it).
inline std::optional<llm_error_handling_options> read_llm_error_handling(json_reader& sections) {
    if (auto settings = deerflow_section(sections, llm_error_handling_options::config_section)) {
        if (const auto* cb = sections.find(llm_error_handling_options::circuit_breaker_section))
            (*settings)[llm_error_handling_options::circuit_breaker_section] = *cb;
        return boost::json::value_to<llm_error_handling_options>(boost::json::value(std::move(*settings)));
    }
    sections.skip(llm_error_handling_options::circuit_breaker_section);
    return std::nullopt;
}

template <class Chain>
void engage_llm_error_handling(Chain& chain, json_reader& sections) {
    if (auto options = read_llm_error_handling(sections))
        chain.template slot<llm_error_handling>().emplace(std::move(*options));
}

// The allowlist guardrail's provider and options from its section (`provider`
// is the provider's, not guardrail_options').
struct guardrail_settings {
    allowlist_provider provider;
    guardrail_options options;
};

inline std::optional<guardrail_settings> read_guardrail(json_reader& sections) {
    if (auto settings = deerflow_section(sections, guardrail_options::config_section)) {
        allowlist_provider provider;
        if (const auto* p = settings->if_contains("provider"); p && !p->is_null())
            provider = read_guardrail_provider(*p, sections.path_of("guardrails.provider"));
        settings->erase("provider");
        return guardrail_settings{std::move(provider), boost::json::value_to<guardrail_options>(
                                                           boost::json::value(std::move(*settings)))};
    }
    return std::nullopt;
}

template <class Chain>
void engage_guardrail(Chain& chain, json_reader& sections) {
    if (auto g = read_guardrail(sections))
        chain.template slot<guardrail<allowlist_provider>>().emplace(std::move(g->provider),
                                                                     std::move(g->options));
}

// tool_receipt's options from DeerFlow's `verification` section, which is on
// unless it says otherwise: absent, null or true is on with the defaults,
// false or `receipts_enabled: false` is off.
inline std::optional<tool_receipt_options> read_verification(json_reader& sections) {
    const auto* v = sections.find(tool_receipt_options::config_section);
    const std::string path = sections.path_of(tool_receipt_options::config_section);
    if (v == nullptr) return tool_receipt_options{};
    if (v->is_bool())
        return v->get_bool() ? std::optional<tool_receipt_options>(tool_receipt_options{}) : std::nullopt;
    if (!v->is_object()) json_type_error(path, "true, false or an object of settings", *v);
    boost::json::object settings = v->get_object();
    if (const auto* enabled = settings.if_contains("receipts_enabled")) {
        if (!json_read_as<bool>(*enabled, json_path(path, "receipts_enabled"))) return std::nullopt;
        settings.erase("receipts_enabled");
    }
    return boost::json::value_to<tool_receipt_options>(boost::json::value(std::move(settings)));
}

template <class Chain>
void engage_tool_receipt(Chain& chain, json_reader& sections) {
    if (auto options = read_verification(sections))
        chain.template slot<tool_receipt>().emplace(std::move(*options));
}

// pii_redaction's options when DeerFlow would engage it: its `enabled` is
// false by default, so an object of settings without `enabled: true` leaves it
// out (its keys are still read, so a bad one is named); `true` engages it with
// the defaults, as every section.
inline std::optional<pii_redaction_options> read_pii_redaction(json_reader& sections) {
    const auto* v = sections.find(pii_redaction_options::config_section);
    const bool object_without_enabled = v && v->is_object() && !v->get_object().contains("enabled");
    auto settings = deerflow_section(sections, pii_redaction_options::config_section);
    if (!settings) return std::nullopt;
    auto options = boost::json::value_to<pii_redaction_options>(boost::json::value(std::move(*settings)));
    if (object_without_enabled) return std::nullopt;
    return options;
}

template <class Chain>
void engage_pii_redaction(Chain& chain, json_reader& sections) {
    if (auto options = read_pii_redaction(sections)) chain.template slot<pii_redaction>().emplace(*options);
}

} // namespace detail

/// DeerFlow's `memory_flush_hook` (reference §5.7 step 9), for summarization's
/// `before_summarization`: the messages a summary is about to replace go to
/// the memory queue's immediate path, so that nothing is forgotten unread.
inline std::function<void(const summarization_event&)>
memory_flush_hook(std::shared_ptr<memory_manager> manager) {
    return [manager = std::move(manager)](const summarization_event& e) {
        if (!manager || e.rt == nullptr) return;
        const runtime& rt = *e.rt;
        manager->add_nowait(
            detail::context_thread_id(&rt.context, rt.thread_id),
            std::vector<message>(e.messages_to_summarize.begin(), e.messages_to_summarize.end()),
            detail::context_agent_name(rt.context), detail::context_user_id(&rt.context), rt.run_id);
    };
}

/// Builds DeerFlow's runtime chain from an object of its configuration
/// sections: `input_sanitization`, `tool_output`, `tool_result_sanitization`,
/// `pii_redaction` (only with `enabled: true`, DeerFlow's default being false), `thread_data`, `uploads`,
/// `sandbox`, `dangling_tool_call`, `llm_call` (with `circuit_breaker`), `verification` (tool_receipt: on
/// unless `receipts_enabled` is false), `guardrails`, `sandbox_audit`,
/// `read_before_write`, `tool_error_handling`, `dynamic_context`, `summarization`, `durable_context`, `todo`
/// (plan mode, active in runs whose context sets `is_plan_mode`), `token_usage`, `title`, `memory`,
/// `view_image`, `system_message_coalescing`, `subagents`, `loop_detection`, `token_budget`,
/// `terminal_response`, `model_length_finish_reason`, `safety_finish_reason`, `clarification`, and
/// LangChain's `todo_list`, `pii`, `context_editing`, `model_call_limit`, `tool_call_limit`, `moderation`
/// (give it its check with set_check), `llm_tool_selector` and `tool_emulator` (the run's model unless given
/// one), `prompt_caching`, `tool_retry`, `model_retry`, `model_fallback` (give it the named models with
/// set_models), `human_in_the_loop` (pauses the run for a review of tool calls: docs/interrupts.md). A
/// section that is absent or false leaves its middleware out; true puts it in with the defaults; an object
/// puts it in with those settings unless its `enabled` is false. A section is read by its options' JSON form,
/// so an unknown section or key and a value of the wrong type throw json_error naming the path
/// (`loop_detection.warn_threshold: expected an integer, got "x"`).
template <class = void> // a template so that only a file that calls it instantiates the 45-slot chain
deerflow_pipeline make_deerflow_pipeline(const boost::json::value& config) {
    json_reader sections(config);
    deerflow_pipeline chain;
    detail::engage_from_section<input_sanitization, input_sanitization_options>(chain, sections);
    detail::engage_from_section<tool_output_budget, tool_output_budget_options>(chain, sections);
    detail::engage_from_section<tool_result_sanitization, tool_result_sanitization_options>(chain, sections);
    detail::engage_pii_redaction(chain, sections);
    detail::engage_from_section<thread_data, thread_data_options>(chain, sections);
    detail::engage_from_section<uploads, uploads_options>(chain, sections);
    detail::engage_from_section<sandbox, sandbox_options>(chain, sections);
    detail::engage_from_section<dangling_tool_call, dangling_tool_call_options>(chain, sections);
    detail::engage_llm_error_handling(chain, sections);
    detail::engage_tool_receipt(chain, sections);
    detail::engage_guardrail(chain, sections);
    detail::engage_from_section<sandbox_audit, sandbox_audit_options>(chain, sections);
    detail::engage_from_section<read_before_write, read_before_write_options>(chain, sections);
    detail::engage_from_section<tool_error_handling, tool_error_handling_options>(chain, sections);
    detail::engage_from_section<summarization, summarization_options>(chain, sections);
    detail::engage_from_section<durable_context, durable_context_options>(chain, sections);
    detail::engage_from_section<todo, todo_options>(chain, sections);
    detail::engage_from_section<title, title_options>(chain, sections);
    // memory (its manager; give it a model with manager()->set_model) and
    // dynamic_context, which injects what that manager remembers.
    if (auto settings = detail::deerflow_section(sections, memory_options::config_section)) {
        auto o = boost::json::value_to<memory_options>(boost::json::value(std::move(*settings)));
        if (o.mode != "tool") chain.slot<memory>().emplace(std::move(o));
    }
    // As DeerFlow's lead agent: with both on, a summary first hands what it replaces to memory.
    if (auto* s = chain.get<summarization>(); s && chain.get<memory>())
        s->before_summarization.push_back(memory_flush_hook(chain.get<memory>()->manager()));
    if (auto settings = detail::deerflow_section(sections, dynamic_context_options::config_section)) {
        const auto* mem = chain.get<memory>();
        chain.slot<dynamic_context>().emplace(
            boost::json::value_to<dynamic_context_options>(boost::json::value(std::move(*settings))),
            mem ? mem->manager() : nullptr);
    }
    detail::engage_from_section<token_accounting, token_accounting_options>(chain, sections);
    detail::engage_from_section<view_image, view_image_options>(chain, sections);
    detail::engage_switch<system_message_coalescing>(chain, sections);
    detail::engage_from_section<subagent_limit, subagent_limit_options>(chain, sections);
    detail::engage_from_section<loop_detection, loop_detection_options>(chain, sections);
    detail::engage_from_section<token_budget, token_budget_options>(chain, sections);
    detail::engage_switch<terminal_response>(chain, sections);
    detail::engage_switch<model_length_finish_reason>(chain, sections);
    detail::engage_from_section<safety_finish_reason, safety_finish_reason_options>(chain, sections);
    detail::engage_from_section<todo_list, todo_list_options>(chain, sections);
    if (chain.get<todo_list>() && chain.get<todo>())
        throw json_error(std::string(todo_list_options::config_section),
                         "todo_list and todo both offer write_todos: turn one of them off");
    detail::engage_from_section<pii, pii_options>(chain, sections);
    detail::engage_from_section<context_editing, context_editing_options>(chain, sections);
    detail::engage_from_section<model_call_limit, model_call_limit_options>(chain, sections);
    detail::engage_from_section<tool_call_limit, tool_call_limit_options>(chain, sections);
    detail::engage_from_section<moderation, moderation_options>(chain, sections);
    detail::engage_from_section<llm_tool_selector, llm_tool_selector_options>(chain, sections);
    detail::engage_from_section<prompt_caching, prompt_caching_options>(chain, sections);
    detail::engage_from_section<tool_emulator, tool_emulator_options>(chain, sections);
    detail::engage_from_section<tool_retry, tool_retry_options>(chain, sections);
    detail::engage_from_section<model_retry, model_retry_options>(chain, sections);
    detail::engage_from_section<model_fallback, model_fallback_options>(chain, sections);
    detail::engage_from_section<human_in_the_loop, human_in_the_loop_options>(chain, sections);
    detail::engage_from_section<clarification, clarification_options>(chain, sections);
    sections.reject_unknown_keys();
    return chain;
}

} // namespace agentware

#endif
