#ifndef AGENTWARE_PRESETS_SUBAGENT_CHAIN_HPP
#define AGENTWARE_PRESETS_SUBAGENT_CHAIN_HPP

// DeerFlow's subagent chain (build_subagent_runtime_middlewares, reference
// §4.3) from the same configuration sections as the lead's chain
// (presets/deerflow.hpp), and the executor runner that builds it afresh for
// every delegation.

#include <agentware/message/message.hpp>
#include <agentware/middleware/skill_tool_policy.hpp>
#include <agentware/middleware/skills.hpp>
#include <agentware/presets/deerflow.hpp>
#include <agentware/skills/catalog.hpp>
#include <agentware/subagents/config.hpp>
#include <agentware/subagents/executor.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_to.hpp>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace agentware {

namespace detail {

// A token_budget object is token_budget's options plus `enabled`.
inline void check_subagent_token_budget(const std::optional<boost::json::object>& o,
                                        const std::string& path) {
    if (!o) return;
    boost::json::object rest = *o;
    if (const auto* e = rest.if_contains("enabled")) {
        (void)json_read_as<bool>(*e, json_path(path, "enabled"));
        rest.erase("enabled");
    }
    try {
        (void)boost::json::value_to<token_budget_options>(boost::json::value(std::move(rest)));
    } catch (const json_error& e) {
        // token_budget's reader names its own section first: "token_budget.max_tokens"
        std::string_view inner = e.path();
        if (inner.starts_with(token_budget_options::config_section))
            inner.remove_prefix(token_budget_options::config_section.size());
        throw json_error(path + std::string(inner), e.problem());
    }
}

} // namespace detail

/// Reads DeerFlow's `subagents:` section (subagents_options) and checks each
/// `token_budget` object in it (the section's, an agent's override's, a custom
/// agent's) as the subagent chain's token_budget options: a bad key is an
/// error naming its path when the configuration is read, not at the first
/// delegation. The executor's layer does not know the middleware's options.
inline subagents_options read_subagents_section(const boost::json::value& jv) {
    subagents_options o = boost::json::value_to<subagents_options>(jv);
    const std::string section(subagents_options::config_section);
    detail::check_subagent_token_budget(o.token_budget, section + ".token_budget");
    for (const auto& [name, over] : o.agents)
        detail::check_subagent_token_budget(over.token_budget,
                                            detail::json_path(section + ".agents", name) + ".token_budget");
    for (const auto& [name, type] : o.custom_agents)
        detail::check_subagent_token_budget(
            type.token_budget, detail::json_path(section + ".custom_agents", name) + ".token_budget");
    return o;
}

/// The subagent chain, in DeerFlow's order (but summarization before
/// durable_context, as in the lead's chain), less what agentware does not have
/// yet (MCP routing, deferred tools, the date context). The skills slots are
/// engaged when the parent has a skill catalog (subagent_skills). The sandbox
/// and thread-data middlewares are left out on purpose:
/// the parent holds the sandbox (a subagent's after_agent must not release
/// it), and the sandbox tools come from the executor's tool set, where the
/// types' allow- and denylists filter them; subagent_shared_fields carries the
/// parent's `sandbox` and `thread_data` into the subagent's state.
using subagent_pipeline = pipeline<
    subagent_shared_fields, std::optional<input_sanitization>, std::optional<tool_output_budget>,
    std::optional<tool_result_sanitization>, std::optional<pii_redaction>, std::optional<dangling_tool_call>,
    std::optional<llm_error_handling>, std::optional<guardrail<allowlist_provider>>,
    std::optional<sandbox_audit>, std::optional<read_before_write>, std::optional<tool_error_handling>,
    std::optional<skills>, std::optional<skill_tool_policy>, std::optional<view_image>,
    std::optional<loop_detection>, std::optional<token_budget>, std::optional<safety_finish_reason>,
    // summarization before durable_context, as in the lead's chain (docs/lead_agent.md): its
    // context-length retry then goes through durable_context, which projects the new summary
    std::optional<summarization>, std::optional<durable_context>, std::optional<system_message_coalescing>>;

/// The parent's skills, as its subagents get them: the catalog (shared, not
/// copied) and the `skills` settings (container path, read tools). Each
/// subagent sees the skills its type's `skills` names (after the
/// `subagents.agents.<name>.skills` override), all of the catalog's when the
/// type names none: DeerFlow's parent skills ∩ the type's (None = inherit).
struct subagent_skills {
    std::shared_ptr<const skill_catalog> catalog; ///< null: no skills slots, no skills block
    skills_options options;
};

/// The skills block of a subagent's system prompt (skills_prompt_section of
/// the skills its type may use); empty without a catalog or such a skill.
inline std::string subagent_skills_section(const subagent_skills& parent, const subagent_type& type) {
    if (!parent.catalog) return {};
    return skills_prompt_section(*parent.catalog, parent.options.container_path, type.skills);
}

namespace detail {

// The skills block after the type's prompt in the subagent's system message,
// joined by a blank line (DeerFlow's executor, reference §5.12).
inline void add_subagent_skills_block(std::vector<message>& input, const subagent_skills& parent,
                                      const subagent_type& type) {
    std::string block = subagent_skills_section(parent, type);
    if (block.empty()) return;
    if (!input.empty() && input.front().is_system()) {
        std::string prompt = input.front().text();
        input.front() = system_message(prompt.empty() ? std::move(block) : prompt + "\n\n" + block);
    } else {
        input.insert(input.begin(), system_message(std::move(block)));
    }
}

// The subagents' token budget: on unless `enabled: false`; DeerFlow's
// defaults (2,000,000 tokens, 1,000,000 with summarization on; warning at 0.7)
// under the given keys.
inline std::optional<token_budget_options> subagent_budget(const std::optional<boost::json::object>& given,
                                                           bool summarizing) {
    boost::json::object o{{"max_tokens", summarizing ? 1000000 : 2000000}, {"warn_threshold", 0.7}};
    if (given) {
        for (const auto& kv : *given)
            o[kv.key()] = kv.value();
        if (const auto* e = o.if_contains("enabled")) {
            if (e->is_bool() && !e->get_bool()) return std::nullopt;
            o.erase("enabled");
        }
    }
    return boost::json::value_to<token_budget_options>(boost::json::value(std::move(o)));
}

} // namespace detail

/// The subagent chain's settings, read from an object of DeerFlow
/// configuration sections (the same object make_deerflow_pipeline reads; the
/// sections the subagent chain does not use are passed over). Read once, they
/// make any number of chains: make_deerflow_subagent_runner reads them when it
/// is made, not at every delegation.
struct subagent_chain_settings {
    std::optional<input_sanitization_options> input_sanitization;
    std::optional<tool_output_budget_options> tool_output_budget;
    std::optional<tool_result_sanitization_options> tool_result_sanitization;
    std::optional<pii_redaction_options> pii_redaction; ///< only with `enabled: true`, as the lead's
    std::optional<dangling_tool_call_options> dangling_tool_call;
    std::optional<llm_error_handling_options> llm_error_handling;
    std::optional<detail::guardrail_settings> guardrail;
    std::optional<sandbox_audit_options> sandbox_audit;
    std::optional<read_before_write_options> read_before_write;
    std::optional<tool_error_handling_options> tool_error_handling;
    std::optional<view_image_options> view_image;
    std::optional<loop_detection_options> loop_detection;
    std::optional<safety_finish_reason_options> safety_finish_reason;
    std::optional<durable_context_options> durable_context;
    std::optional<summarization_options> summarization;
    bool system_message_coalescing = false;
    /// The token budget of a type without settings of its own.
    std::optional<token_budget_options> default_token_budget;

    explicit subagent_chain_settings(const boost::json::value& config) {
        json_reader sections(config);
        input_sanitization = detail::read_section<input_sanitization_options>(sections);
        tool_output_budget = detail::read_section<tool_output_budget_options>(sections);
        tool_result_sanitization = detail::read_section<tool_result_sanitization_options>(sections);
        pii_redaction = detail::read_pii_redaction(sections);
        dangling_tool_call = detail::read_section<dangling_tool_call_options>(sections);
        llm_error_handling = detail::read_llm_error_handling(sections);
        guardrail = detail::read_guardrail(sections);
        sandbox_audit = detail::read_section<sandbox_audit_options>(sections);
        read_before_write = detail::read_section<read_before_write_options>(sections);
        tool_error_handling = detail::read_section<tool_error_handling_options>(sections);
        view_image = detail::read_section<view_image_options>(sections);
        loop_detection = detail::read_section<loop_detection_options>(sections);
        safety_finish_reason = detail::read_section<safety_finish_reason_options>(sections);
        durable_context = detail::read_section<durable_context_options>(sections);
        summarization = detail::read_section<summarization_options>(sections);
        system_message_coalescing = detail::read_switch<agentware::system_message_coalescing>(sections);
        default_token_budget = detail::subagent_budget(std::nullopt, summarization.has_value());
    }
};

/// The subagent chain from its settings, for a delegation of type `type` (its
/// token budget, its skills). With the parent's skill catalog, the skills
/// slots are engaged: `skills` serves /mnt/skills from the parent's catalog
/// (as DeerFlow's subagents share the parent's mount), and
/// `skill_tool_policy` counts only the skills the type may use, so a loaded
/// skill outside them grants no tools. A fresh chain each call: guards start
/// with no history.
inline subagent_pipeline make_subagent_pipeline(const subagent_chain_settings& settings,
                                                const subagent_type& type = {},
                                                const subagent_skills& parent_skills = {}) {
    subagent_pipeline chain;
    auto engage = [&chain]<class M>(const auto& options) {
        if (options) chain.template slot<M>().emplace(*options);
    };
    engage.template operator()<input_sanitization>(settings.input_sanitization);
    engage.template operator()<tool_output_budget>(settings.tool_output_budget);
    engage.template operator()<tool_result_sanitization>(settings.tool_result_sanitization);
    engage.template operator()<pii_redaction>(settings.pii_redaction);
    engage.template operator()<dangling_tool_call>(settings.dangling_tool_call);
    engage.template operator()<llm_error_handling>(settings.llm_error_handling);
    if (settings.guardrail)
        chain.slot<guardrail<allowlist_provider>>().emplace(settings.guardrail->provider,
                                                            settings.guardrail->options);
    engage.template operator()<sandbox_audit>(settings.sandbox_audit);
    engage.template operator()<read_before_write>(settings.read_before_write);
    engage.template operator()<tool_error_handling>(settings.tool_error_handling);
    if (parent_skills.catalog) {
        chain.slot<skills>().emplace(parent_skills.options, parent_skills.catalog);
        chain.slot<skill_tool_policy>().emplace(parent_skills.catalog, parent_skills.options.container_path,
                                                type.skills);
    }
    engage.template operator()<view_image>(settings.view_image);
    engage.template operator()<loop_detection>(settings.loop_detection);
    engage.template operator()<safety_finish_reason>(settings.safety_finish_reason);
    engage.template operator()<durable_context>(settings.durable_context);
    engage.template operator()<summarization>(settings.summarization);
    if (type.token_budget)
        engage.template operator()<token_budget>(
            detail::subagent_budget(type.token_budget, settings.summarization.has_value()));
    else
        engage.template operator()<token_budget>(settings.default_token_budget);
    if (settings.system_message_coalescing) chain.slot<agentware::system_message_coalescing>().emplace();
    return chain;
}

/// The subagent chain from an object of DeerFlow configuration sections, for
/// a delegation of type `type`: make_subagent_pipeline of the settings read
/// from `config`.
inline subagent_pipeline make_subagent_pipeline(const boost::json::value& config,
                                                const subagent_type& type = {},
                                                const subagent_skills& parent_skills = {}) {
    return make_subagent_pipeline(subagent_chain_settings(config), type, parent_skills);
}

/// A runner whose delegations each run make_subagent_pipeline(config, type,
/// parent_skills), with the type's skills block after its prompt in the
/// system message. The configuration is read and checked here, once, so a bad
/// key is reported when the executor is made rather than at the first
/// delegation, and no delegation reads it again.
/// (A template only so that g++ 12 compiles the subagents' coroutine loop
/// where it is used, not in every file that includes this header.)
template <class = void>
subagent_runner make_deerflow_subagent_runner(const boost::json::value& config,
                                              subagent_skills parent_skills = {}) {
    auto settings = std::make_shared<const subagent_chain_settings>(config);
    auto skills = std::make_shared<const subagent_skills>(std::move(parent_skills));
    return [settings = std::move(settings), skills = std::move(skills)](subagent_run&& run) {
        detail::add_subagent_skills_block(run.input, *skills, run.type);
        return detail::run_subagent(
            [settings, skills](const subagent_type& type) {
                return make_subagent_pipeline(*settings, type, *skills);
            },
            std::move(run));
    };
}

} // namespace agentware

#endif
