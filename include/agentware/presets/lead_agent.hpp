#ifndef AGENTWARE_PRESETS_LEAD_AGENT_HPP
#define AGENTWARE_PRESETS_LEAD_AGENT_HPP

// DeerFlow's lead agent (reference §4.1, §6, §7): one call builds, for one
// request, the model, the tools, the system prompt and the middleware chain
// from the configuration and the request's switches (docs/lead_agent.md).
//
// The agent is built per request, as DeerFlow's graph factory is: a request's
// switches (plan mode, subagents, thinking, the model, non-interactive) engage
// the slots of its own chain, so runs with different switches never see each
// other's. What must be shared between runs (the subagent executor and its
// concurrency bound, the model factory, the tool registry) is in the setup.

#include <agentware/agent/agent.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/middleware/sandbox/bubblewrap.hpp>
#include <agentware/model/any_chat_model.hpp>
#include <agentware/model/openai_moderation_client.hpp>
#include <agentware/presets/deerflow.hpp>
#include <agentware/presets/subagent_chain.hpp>
#include <agentware/subagents/executor.hpp>
#include <agentware/subagents/task_tool.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace agentware {

/// The per-request switches (DeerFlow's `configurable`/`context` keys, §3 and §10).
struct lead_agent_request {
    std::optional<bool> thinking_enabled;  ///< unset: the agent's setting, else true
    std::optional<std::string> model_name; ///< unset: the agent's model, else the first configured
    bool is_plan_mode = false;             ///< engages todo
    bool subagent_enabled = false;         ///< engages subagent_limit and offers `task`
    std::optional<std::size_t> max_concurrent_subagents; ///< `task` calls kept per answer (default 3)
    std::optional<std::size_t> max_total_subagents;      ///< per run (default subagents.max_total_per_run)
    bool non_interactive = false;                        ///< no `ask_clarification`
    /// The rest of the run's context (user_id, agent_name, ...), passed on as it is.
    boost::json::object context;

    /// Reads the switches from a run context (`model_name` or `model`, ...);
    /// the other keys stay in `context`. A switch of the wrong type is a
    /// json_error naming it.
    static lead_agent_request from_context(const boost::json::object& ctx) {
        lead_agent_request r;
        r.context = ctx;
        auto take = [&](std::string_view key) -> const boost::json::value* {
            const auto* v = ctx.if_contains(key);
            return v == nullptr || v->is_null() ? nullptr : v;
        };
        if (const auto* v = take("thinking_enabled"))
            r.thinking_enabled = json_read_as<bool>(*v, "thinking_enabled");
        if (const auto* v = take("model_name"))
            r.model_name = json_read_as<std::string>(*v, "model_name");
        else if (const auto* m = take("model"))
            r.model_name = json_read_as<std::string>(*m, "model");
        if (const auto* v = take("is_plan_mode")) r.is_plan_mode = json_read_as<bool>(*v, "is_plan_mode");
        if (const auto* v = take("subagent_enabled"))
            r.subagent_enabled = json_read_as<bool>(*v, "subagent_enabled");
        if (const auto* v = take("max_concurrent_subagents"))
            r.max_concurrent_subagents = json_read_as<std::size_t>(*v, "max_concurrent_subagents");
        if (const auto* v = take("max_total_subagents"))
            r.max_total_subagents = json_read_as<std::size_t>(*v, "max_total_subagents");
        if (const auto* v = take("non_interactive"))
            r.non_interactive = json_read_as<bool>(*v, "non_interactive");
        return r;
    }

    /// The run context that carries the switches to the middlewares that read
    /// them at run time (todo, subagent_limit, clarification).
    boost::json::object run_context() const {
        boost::json::object c = context;
        c["is_plan_mode"] = is_plan_mode;
        c["subagent_enabled"] = subagent_enabled;
        c["non_interactive"] = non_interactive;
        if (model_name) c["model_name"] = *model_name;
        if (thinking_enabled) c["thinking_enabled"] = *thinking_enabled;
        if (max_concurrent_subagents) c["max_concurrent_subagents"] = *max_concurrent_subagents;
        if (max_total_subagents) c["max_total_subagents"] = *max_total_subagents;
        return c;
    }
};

/// A configured model, as the lead agent needs to know it (the model factory
/// reads the rest of the entry).
struct lead_model_entry {
    std::string name;
    bool supports_vision = false;
    bool supports_thinking = false;
};

/// Builds the model named `name` (a configured name), with thinking on or
/// off. With model_registry: `[reg](std::string_view n, bool t) { return
/// reg.create_chat_model(n, t); }`; tests and the replay give scripted models.
using lead_model_factory = std::function<any_chat_model(std::string_view name, bool thinking_enabled)>;

/// What the lead agent takes besides the configuration.
struct lead_agent_setup {
    lead_model_factory model_factory;
    /// Tools by `use` (DeerFlow's "module:attr") or, failing that, by name:
    /// the configuration's `tools` entries name them.
    std::map<std::string, std::shared_ptr<tool_interface>, std::less<>> tool_registry;
    /// Tools made from their `tools:` entry (its settings, e.g. `max_results`),
    /// by `use`; tried before tool_registry. DeerFlow's community web tools:
    /// `deerflow_community_tools()` of <agentware/middleware/deerflow_web_tools.hpp>.
    std::map<std::string,
             std::function<std::shared_ptr<tool_interface>(const boost::json::object& entry,
                                                           std::string_view path)>,
             std::less<>>
        tool_factories;
    /// The skills block of the system prompt, inserted as it is after the
    /// role. Empty: `skills_prompt_section(*skills, ...)` when `skills` is
    /// set, else no skills block.
    std::string skills_index;
    /// The skill catalog (`load_skills` of <agentware/skills/skills.hpp>,
    /// loaded once and shared by every request). Set: the chain gets the
    /// skills middleware (/mnt/skills, skill_context) and the skill tool
    /// policy (allowed-tools), configured by the `skills` section, and the
    /// prompt its skills block.
    std::shared_ptr<const skill_catalog> skills;
    /// The MCP tools (reference §6 step 5), asked for at each request, after
    /// the configured tools and the built-ins, deduplicated with them (the
    /// first of a name kept). With <agentware/mcp/tools.hpp>:
    /// `[kit] { return kit.tools(); }` over an `mcp::mcp_toolkit` of the
    /// extensions config's enabled servers, started once.
    std::function<std::vector<std::shared_ptr<tool_interface>>()> mcp_tools;
    /// One executor serves every run (its concurrency bound is shared); empty:
    /// each make_lead_agent call makes one from the `subagents` section.
    std::shared_ptr<subagent_executor> executor;
    /// Runs each delegation's agent; empty: DeerFlow's subagent chain
    /// (make_deerflow_subagent_runner) from the configuration.
    subagent_runner subagent_runner_override;
    /// Gives the chain's helper middlewares (title, summarization, memory,
    /// model_fallback, llm_tool_selector, tool_emulator, moderation) what they
    /// call; empty: detail::wire_lead_helpers (the models their sections name,
    /// made by model_factory, and moderation's endpoint). Scripted runs give
    /// scripted helpers here.
    std::function<void(deerflow_pipeline&)> attach_helpers;
};

/// A configuration that cannot make a lead agent (DeerFlow's ValueError).
class lead_agent_error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

namespace detail {

// The configuration keys the lead agent reads itself (and `deep_agent`, which
// `agentware serve` reads); the rest are the chain's sections (make_deerflow_pipeline).
inline constexpr std::string_view lead_only_keys[] = {"models", "tools",  "tool_groups",
                                                      "agent",  "skills", "deep_agent"};

inline boost::json::value lead_chain_sections(const boost::json::value& config) {
    const auto* o = config.if_object();
    if (!o) json_type_error("", "an object of configuration sections", config);
    boost::json::object sections = *o;
    for (std::string_view key : lead_only_keys)
        sections.erase(key);
    return sections;
}

inline std::vector<lead_model_entry> lead_models(const boost::json::object& config) {
    std::vector<lead_model_entry> out;
    const auto* list = config.if_contains("models");
    if (list == nullptr || list->is_null()) return out;
    const auto* arr = list->if_array();
    if (!arr) json_type_error("models", "an array of models", *list);
    for (std::size_t i = 0; i < arr->size(); ++i) {
        const std::string path = detail::format("models[{}]", i);
        const auto* m = (*arr)[i].if_object();
        if (!m) json_type_error(path, "an object", (*arr)[i]);
        lead_model_entry e;
        const auto* name = m->if_contains("name");
        if (!name || !name->is_string()) throw json_error(path + ".name", "missing");
        e.name = std::string(name->get_string());
        if (const auto* v = m->if_contains("supports_vision"))
            e.supports_vision = json_read_as<bool>(*v, path + ".supports_vision");
        if (const auto* v = m->if_contains("supports_thinking"))
            e.supports_thinking = json_read_as<bool>(*v, path + ".supports_thinking");
        out.push_back(std::move(e));
    }
    return out;
}

// The custom agent's settings (DeerFlow's agents/<name>/config.yaml).
struct lead_agent_profile {
    std::string name = "DeerFlow";
    std::optional<std::string> model;
    std::optional<bool> thinking_enabled;
    std::optional<std::vector<std::string>> tool_groups;
    std::string description;
};

// The `skills` section (path and container_path; the lead reads it, the chain does not).
inline skills_options lead_skills_options(const boost::json::value& config) {
    const auto* o = config.if_object();
    const auto* s = o ? o->if_contains(skills_options::config_section) : nullptr;
    if (s == nullptr || s->is_null()) return {};
    return json_read_as<skills_options>(*s, std::string(skills_options::config_section));
}

inline lead_agent_profile read_lead_profile(const boost::json::object& config) {
    lead_agent_profile p;
    if (const auto* a = config.if_contains("agent"); a && !a->is_null()) {
        json_reader r(*a, "agent");
        r.read("name", p.name)
            .read("model", p.model)
            .read("thinking_enabled", p.thinking_enabled)
            .read("tool_groups", p.tool_groups)
            .read("description", p.description)
            .reject_unknown_keys();
    }
    if (const auto* g = config.if_contains("tool_groups"); g && !g->is_null() && !p.tool_groups) {
        // DeerFlow's top-level tool_groups: [{name}] lists the groups that exist; not a filter.
        if (!g->is_array()) json_type_error("tool_groups", "an array of {name} objects", *g);
    }
    return p;
}

} // namespace detail

/// The resolved model of a request (§4.1 steps 2-3).
struct lead_model_choice {
    lead_model_entry model;
    bool thinking_enabled = true;
    std::vector<std::string> warnings;
};

/// DeerFlow's model resolution: the request's `model_name` (an unknown name
/// falls back to the default with a warning), then the agent's `model`, then
/// the first configured model; `thinking_enabled` from the request when it
/// sets it (even false), else the agent's, else true; off, with a warning,
/// when the model does not support thinking.
inline lead_model_choice resolve_lead_model(const boost::json::value& config,
                                            const lead_agent_request& request) {
    const auto* o = config.if_object();
    if (!o) detail::json_type_error("", "an object of configuration sections", config);
    const auto models = detail::lead_models(*o);
    const auto profile = detail::read_lead_profile(*o);
    if (models.empty())
        // Text kept for parity with DeerFlow (reference §4.1).
        throw lead_agent_error(
            "No chat models are configured. Please configure at least one model in config.yaml.");
    lead_model_choice out;
    auto find = [&](std::string_view name) -> const lead_model_entry* {
        for (const auto& m : models)
            if (m.name == name) return &m;
        return nullptr;
    };
    const lead_model_entry* chosen = nullptr;
    const lead_model_entry* fallback = profile.model ? find(*profile.model) : nullptr;
    if (profile.model && !fallback)
        out.warnings.push_back(detail::format("agent model \"{}\" is not configured; using \"{}\"",
                                              *profile.model, models.front().name));
    if (!fallback) fallback = &models.front();
    if (request.model_name) {
        chosen = find(*request.model_name);
        if (!chosen)
            out.warnings.push_back(detail::format("requested model \"{}\" is not configured; using \"{}\"",
                                                  *request.model_name, fallback->name));
    }
    if (!chosen) chosen = fallback;
    out.model = *chosen;
    out.thinking_enabled = request.thinking_enabled   ? *request.thinking_enabled
                           : profile.thinking_enabled ? *profile.thinking_enabled
                                                      : true;
    if (out.thinking_enabled && !chosen->supports_thinking) {
        out.thinking_enabled = false;
        out.warnings.push_back(detail::format(
            "thinking is enabled but model \"{}\" does not support it; thinking is off", chosen->name));
    }
    return out;
}

/// The lead's chain for one request (§4.1's order): make_deerflow_pipeline
/// over the configuration's chain sections, then the request's slots: todo
/// when `is_plan_mode`, subagent_limit when `subagent_enabled` (its limits
/// from the request, else the `subagents` section), view_image when the model
/// supports vision (or its section is on), clarification without its tool
/// when `non_interactive`.
inline deerflow_pipeline make_lead_chain(const boost::json::value& config, const lead_agent_request& request,
                                         const lead_model_entry& model,
                                         std::shared_ptr<const skill_catalog> skill_set = nullptr) {
    const boost::json::value sections = detail::lead_chain_sections(config);
    deerflow_pipeline chain = make_deerflow_pipeline(sections);
    const auto& obj = sections.get_object();
    // Skills (§4.1 #15-16): the catalog's folders under /mnt/skills, and its allowed-tools policy.
    if (skill_set) {
        const skills_options so = detail::lead_skills_options(config);
        chain.slot<skill_tool_policy>().emplace(skill_set, so.container_path);
        chain.slot<skills>().emplace(so, std::move(skill_set));
    }
    // Plan mode: only in runs that ask for it (the todo section gives its options).
    if (request.is_plan_mode) {
        if (!chain.enabled<todo>()) chain.slot<todo>().emplace();
    } else {
        chain.slot<todo>().reset();
    }
    if (request.subagent_enabled) {
        subagent_limit_options o;
        if (const auto* s = obj.if_contains(subagent_limit_options::config_section); s && s->is_object()) {
            boost::json::object limits;
            for (std::string_view key : {"max_total_per_run", "max_concurrent_ceiling", "max_total_ceiling",
                                         "task_tool_name", "limits_from_context"})
                if (const auto* v = s->get_object().if_contains(key)) limits[key] = *v;
            o = boost::json::value_to<subagent_limit_options>(boost::json::value(std::move(limits)));
        }
        if (request.max_concurrent_subagents) o.max_concurrent = *request.max_concurrent_subagents;
        if (request.max_total_subagents) o.max_total_per_run = *request.max_total_subagents;
        chain.slot<subagent_limit>().emplace(std::move(o));
    } else {
        chain.slot<subagent_limit>().reset();
    }
    if (model.supports_vision) {
        view_image_options o =
            chain.enabled<view_image>() ? chain.get<view_image>()->options : view_image_options{};
        o.supports_vision = true;
        chain.slot<view_image>().emplace(o);
    }
    if (request.non_interactive)
        if (auto* c = chain.get<clarification>()) c->options.provide_tool = false;
    return chain;
}

/// The names of the chain's engaged middlewares, in chain order (their
/// configuration section's name, or the middleware's).
template <class Pipeline>
std::vector<std::string> engaged_middleware_names(Pipeline& chain);

namespace detail {

template <class M>
constexpr std::string_view lead_middleware_name() {
    // clang-format off
    if constexpr (std::is_same_v<M, input_sanitization>) return "input_sanitization";
    else if constexpr (std::is_same_v<M, tool_output_budget>) return "tool_output_budget";
    else if constexpr (std::is_same_v<M, tool_result_sanitization>) return "tool_result_sanitization";
    else if constexpr (std::is_same_v<M, pii_redaction>) return "pii_redaction";
    else if constexpr (std::is_same_v<M, thread_data>) return "thread_data";
    else if constexpr (std::is_same_v<M, uploads>) return "uploads";
    else if constexpr (std::is_same_v<M, sandbox>) return "sandbox";
    else if constexpr (std::is_same_v<M, dangling_tool_call>) return "dangling_tool_call";
    else if constexpr (std::is_same_v<M, llm_error_handling>) return "llm_error_handling";
    else if constexpr (std::is_same_v<M, tool_receipt>) return "tool_receipt";
    else if constexpr (std::is_same_v<M, guardrail<allowlist_provider>>) return "guardrail";
    else if constexpr (std::is_same_v<M, sandbox_audit>) return "sandbox_audit";
    else if constexpr (std::is_same_v<M, read_before_write>) return "read_before_write";
    else if constexpr (std::is_same_v<M, tool_error_handling>) return "tool_error_handling";
    else if constexpr (std::is_same_v<M, dynamic_context>) return "dynamic_context";
    else if constexpr (std::is_same_v<M, summarization>) return "summarization";
    else if constexpr (std::is_same_v<M, durable_context>) return "durable_context";
    else if constexpr (std::is_same_v<M, todo>) return "todo";
    else if constexpr (std::is_same_v<M, token_accounting>) return "token_accounting";
    else if constexpr (std::is_same_v<M, title>) return "title";
    else if constexpr (std::is_same_v<M, memory>) return "memory";
    else if constexpr (std::is_same_v<M, view_image>) return "view_image";
    else if constexpr (std::is_same_v<M, system_message_coalescing>) return "system_message_coalescing";
    else if constexpr (std::is_same_v<M, subagent_limit>) return "subagent_limit";
    else if constexpr (std::is_same_v<M, loop_detection>) return "loop_detection";
    else if constexpr (std::is_same_v<M, token_budget>) return "token_budget";
    else if constexpr (std::is_same_v<M, terminal_response>) return "terminal_response";
    else if constexpr (std::is_same_v<M, model_length_finish_reason>) return "model_length_finish_reason";
    else if constexpr (std::is_same_v<M, safety_finish_reason>) return "safety_finish_reason";
    else if constexpr (std::is_same_v<M, todo_list>) return "todo_list";
    else if constexpr (std::is_same_v<M, pii>) return "pii";
    else if constexpr (std::is_same_v<M, context_editing>) return "context_editing";
    else if constexpr (std::is_same_v<M, model_call_limit>) return "model_call_limit";
    else if constexpr (std::is_same_v<M, tool_call_limit>) return "tool_call_limit";
    else if constexpr (std::is_same_v<M, moderation>) return "moderation";
    else if constexpr (std::is_same_v<M, llm_tool_selector>) return "llm_tool_selector";
    else if constexpr (std::is_same_v<M, prompt_caching>) return "prompt_caching";
    else if constexpr (std::is_same_v<M, tool_emulator>) return "tool_emulator";
    else if constexpr (std::is_same_v<M, tool_retry>) return "tool_retry";
    else if constexpr (std::is_same_v<M, model_retry>) return "model_retry";
    else if constexpr (std::is_same_v<M, model_fallback>) return "model_fallback";
    else if constexpr (std::is_same_v<M, clarification>) return "clarification";
    else if constexpr (requires { M::middleware_name; }) return M::middleware_name;
    else return "(unnamed)";
    // clang-format on
}

} // namespace detail

template <class Pipeline>
std::vector<std::string> engaged_middleware_names(Pipeline& chain) {
    std::vector<std::string> out;
    chain.for_each_enabled(
        [&](auto& m) { out.emplace_back(detail::lead_middleware_name<std::remove_cvref_t<decltype(m)>>()); });
    return out;
}

/// The lead's tools for one request (§6), without those its chain's
/// middlewares bring (the sandbox tools, ask_clarification, view_image,
/// write_todos), which the agent adds itself.
struct lead_tools {
    tool_set own;                   ///< the agent's own tools
    std::vector<std::string> chain; ///< the tools the chain's middlewares bring, in chain order
    std::vector<std::string> warnings;

    /// Whether a tool of this name is offered already.
    bool offers(std::string_view name) const {
        return std::find(chain.begin(), chain.end(), name) != chain.end() || own.find(name);
    }
    /// Adds `t` unless its name is offered already (then a warning says so: the first is kept).
    bool add(std::shared_ptr<tool_interface> t, std::string_view why) {
        const std::string& name = t->schema().name;
        if (offers(name)) {
            warnings.push_back(
                detail::format("tool \"{}\" ({}) is already offered; the first is kept", name, why));
            return false;
        }
        own.add(std::move(t));
        return true;
    }

    /// Every tool offered, in the order the agent offers them: its own, then the chain's.
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto& t : own)
            out.push_back(t->schema().name);
        out.insert(out.end(), chain.begin(), chain.end());
        return out;
    }
};

namespace detail {

// What a `tools:` entry may name: the factories' and the registry's `use`
// names, and the tools the chain brings (DeerFlow's sandbox tools by name).
inline std::string lead_supported_tools(const lead_tools& tools, const lead_agent_setup& setup) {
    std::string out;
    auto add = [&](std::string_view n) { out += (out.empty() ? "" : ", ") + std::string(n); };
    for (const auto& kv : setup.tool_factories)
        add(kv.first);
    for (const auto& kv : setup.tool_registry)
        add(kv.first);
    for (const auto& n : tools.chain)
        add(n);
    return out.empty() ? std::string("none") : out;
}

inline bool lead_host_bash_allowed(const deerflow_pipeline& chain) {
    const auto* s = chain.get<sandbox>();
    return s && s->options().offers_bash(); // isolated, or host bash allowed (whatever `use` spells local as)
}

} // namespace detail

/// §6: the configured tools (`tools: [{name, group, use}]`, filtered by the
/// agent's `tool_groups`; the bash group left out when host bash is not
/// allowed), then `task` when given and subagents are on; deduped by name,
/// the first kept. The tools the chain's middlewares bring (the sandbox
/// tools, the built-ins) are offered after them, and a configured tool of one
/// of their names is left out (with a warning).
inline lead_tools assemble_lead_tools(const boost::json::value& config, const lead_agent_request& request,
                                      deerflow_pipeline& chain, const lead_agent_setup& setup,
                                      std::shared_ptr<tool_interface> task) {
    lead_tools out;
    auto seen = [&](std::string_view n) { return out.offers(n); };
    // What the chain's engaged middlewares bring.
    chain.for_each_enabled([&](auto& m) {
        if constexpr (requires { m.tools(); })
            for (const auto& t : m.tools())
                if (!seen(t->schema().name)) out.chain.push_back(t->schema().name);
    });
    const auto& obj = config.get_object();
    const auto profile = detail::read_lead_profile(obj);
    const bool host_bash = detail::lead_host_bash_allowed(chain);
    auto add = [&](std::shared_ptr<tool_interface> t, std::string_view why) { out.add(std::move(t), why); };
    if (const auto* list = obj.if_contains("tools"); list && !list->is_null()) {
        const auto* arr = list->if_array();
        if (!arr) detail::json_type_error("tools", "an array of {name, group, use} objects", *list);
        for (std::size_t i = 0; i < arr->size(); ++i) {
            const std::string path = detail::format("tools[{}]", i);
            const auto* e = (*arr)[i].if_object();
            if (!e) detail::json_type_error(path, "an object", (*arr)[i]);
            auto str = [&](std::string_view key) {
                const auto* v = e->if_contains(key);
                return v && !v->is_null() ? json_read_as<std::string>(*v, detail::json_path(path, key))
                                          : std::string();
            };
            const std::string name = str("name"), group = str("group"), use = str("use");
            if (profile.tool_groups && std::find(profile.tool_groups->begin(), profile.tool_groups->end(),
                                                 group) == profile.tool_groups->end())
                continue;
            if (!host_bash && (group == "bash" || use == "deerflow.sandbox.tools:bash_tool")) continue;
            std::shared_ptr<tool_interface> tool;
            if (auto f = setup.tool_factories.find(use); !use.empty() && f != setup.tool_factories.end()) {
                tool = f->second(*e, path);
            } else if (auto it = setup.tool_registry.find(use); it != setup.tool_registry.end()) {
                tool = it->second;
            } else if (auto by_name = setup.tool_registry.find(name); by_name != setup.tool_registry.end()) {
                tool = by_name->second;
            } else {
                if (seen(name)) continue; // brought by the chain (a sandbox tool)
                throw json_error(detail::json_path(path, use.empty() ? "name" : "use"),
                                 detail::format("no tool is registered as \"{}\" (supported: {})",
                                                use.empty() ? name : use,
                                                detail::lead_supported_tools(out, setup)));
            }
            if (!name.empty() && tool->schema().name != name)
                out.warnings.push_back(detail::format("{}: configured as \"{}\", the tool is named \"{}\"",
                                                      path, name, tool->schema().name));
            add(std::move(tool), "configured");
        }
    }
    if (task && request.subagent_enabled) add(std::move(task), "built-in");
    if (request.non_interactive) std::erase(out.chain, std::string("ask_clarification"));
    return out;
}

namespace detail {

inline std::string benefit_delegation_line(std::size_t n, std::size_t total) {
    n = std::clamp<std::size_t>(n, 1, 4);
    total = std::clamp<std::size_t>(total, 1, 50);
    const std::string_view benefit =
        n == 1 ? "specialist capability or context isolation"
               : "real parallel latency, specialist capability, or context isolation";
    // Text kept for parity with DeerFlow (reference §7).
    return detail::format(
        "- **Benefit-Based Delegation**: Default to direct execution. Use `task` only when expected "
        "benefit from {} clearly exceeds delegation, duplicate-discovery, synthesis, conflict, and "
        "side-effect costs. Use the fewest subagents needed. HARD LIMITS ARE NON-NEGOTIABLE: max {} "
        "`task` calls per response, max {} per run; excess calls are discarded and their work is lost.",
        benefit, n, total);
}

} // namespace detail

/// What the system prompt is made of.
struct lead_prompt_parts {
    std::string agent_name = "DeerFlow";
    std::string description;  ///< the custom agent's own description, if any
    std::string skills_index; ///< the skills block (skills_prompt_section); empty: none
    bool subagent_enabled = false;
    std::size_t max_concurrent_subagents = 3;
    std::size_t max_total_subagents = 6;
    std::vector<std::string> subagent_types; ///< `name: description` lines
    std::vector<std::string> tool_names;
    bool sandbox = false; ///< the thread's directories are mapped (thread_data or sandbox on)
};

/// The lead's system prompt: our own words, with DeerFlow's sections (role,
/// skills, subagents with the hard limits, tools, sandbox paths). Static for a
/// configuration and a set of switches, so providers' prompt caches hit; the
/// date and memory come from dynamic_context.
inline std::string lead_system_prompt(const lead_prompt_parts& p) {
    std::string out = detail::format(
        "<role>\nYou are {}, an agent that plans and carries out the user's task with the tools, skills and "
        "helpers described below. Work step by step, check what your tools return, and finish with a clear "
        "answer.\n</role>\n",
        p.agent_name);
    if (!p.description.empty()) out += "\n<agent_profile>\n" + p.description + "\n</agent_profile>\n";
    // The skills block as the skills helper writes it (skills_prompt_section), inserted as it is.
    if (!p.skills_index.empty()) out += "\n" + p.skills_index + "\n";
    if (p.subagent_enabled) {
        out += "\n<subagents>\nThe `task` tool hands a self-contained piece of work to a subagent, which "
               "does it "
               "with its own context and tools and reports back. It does not see this conversation: give it "
               "everything it needs.\n";
        if (!p.subagent_types.empty()) {
            out += "Subagent types:\n";
            for (const auto& t : p.subagent_types)
                out += "- " + t + "\n";
        }
        out += detail::benefit_delegation_line(p.max_concurrent_subagents, p.max_total_subagents);
        out += "\n</subagents>\n";
    }
    if (!p.tool_names.empty()) {
        out += "\n<tools>\nYour tools:";
        for (std::size_t i = 0; i < p.tool_names.size(); ++i)
            out += (i ? ", " : " ") + p.tool_names[i];
        out += ".\nCall independent tools together; ask the user (ask_clarification, when offered) only when "
               "you cannot proceed without an answer.\n</tools>\n";
    }
    if (p.sandbox)
        out += "\n<sandbox>\nThe thread's files:\n"
               "- /mnt/user-data/workspace: your working directory\n"
               "- /mnt/user-data/uploads: the files the user uploaded\n"
               "- /mnt/user-data/outputs: files for the user (present them with present_files)\n"
               "- /mnt/skills/public and /mnt/skills/custom: the skills (read-only)\n</sandbox>\n";
    return out;
}

/// The prompt's parts for a request, its chain, its tools (in order) and its
/// executor (null without subagents): what make_lead_agent and the replay use.
inline lead_prompt_parts
make_lead_prompt_parts(const boost::json::value& config, const lead_agent_request& request,
                       const deerflow_pipeline& chain, std::vector<std::string> tool_names,
                       const subagent_executor* executor, std::string skills_index = {}) {
    const auto profile = detail::read_lead_profile(config.get_object());
    lead_prompt_parts parts;
    parts.agent_name = profile.name;
    parts.description = profile.description;
    parts.skills_index = std::move(skills_index);
    parts.subagent_enabled = request.subagent_enabled;
    if (const auto* l = chain.get<subagent_limit>()) {
        parts.max_concurrent_subagents = l->options().max_concurrent;
        parts.max_total_subagents = l->options().max_total_per_run;
    }
    if (executor)
        for (const auto& n : executor->registry().available())
            if (auto t = executor->registry().resolve(n))
                parts.subagent_types.push_back(t->description.empty() ? n : n + ": " + t->description);
    parts.tool_names = std::move(tool_names);
    parts.sandbox = chain.enabled<thread_data>() || chain.enabled<sandbox>();
    return parts;
}

/// One request's lead agent: the agent, and what was decided for it.
struct lead_agent {
    using agent_type =
        agentware::agent<any_chat_model, deerflow_pipeline>; // qualified: `agent` names the member below
    using state_type = agent_type::state_type;

    std::unique_ptr<agent_type> agent;
    lead_agent_request request;
    lead_model_choice model;
    std::string system_prompt;
    std::vector<std::string> tool_names; ///< every tool offered, in order
    std::vector<std::string> warnings;
    std::shared_ptr<subagent_executor> executor; ///< when subagents are on

    /// The run configuration of this request: `base` with the switches in its context.
    run_config config(run_config base = {}) const {
        boost::json::object c = request.run_context();
        for (const auto& kv : base.context)
            c[kv.key()] = kv.value();
        base.context = std::move(c);
        return base;
    }
    run_result run(state_type& state, agent_input input, run_config base = {}) {
        return agent->run(state, std::move(input), config(std::move(base)));
    }
};

namespace detail {

// The configured models' names, as an error lists them.
inline std::string lead_model_names(const std::vector<lead_model_entry>& models) {
    std::string out;
    for (const auto& m : models)
        out += (out.empty() ? "" : ", ") + m.name;
    return out;
}

/// Gives the chain's helper middlewares the models their sections name, made
/// by the same factory as the lead's, and moderation its endpoint; a name
/// that is not configured, or a section that cannot work without code, is a
/// json_error naming its key now rather than a failure at the first run.
/// What a caller already gave (a model, a check) is kept.
inline void wire_lead_helpers(deerflow_pipeline& chain, const boost::json::object& config,
                              const lead_model_factory& factory) {
    const auto models = lead_models(config);
    auto named = [&](const std::string& name, const std::string& path) {
        if (std::none_of(models.begin(), models.end(), [&](const auto& m) { return m.name == name; }))
            throw json_error(path, detail::format("no model named \"{}\" is configured (models: {})", name,
                                                  lead_model_names(models)));
        return factory(name, false);
    };
    if (auto* s = chain.get<summarization>(); s && !s->model && s->options().model_name)
        s->model = named(*s->options().model_name, "summarization.model_name");
    if (auto* t = chain.get<title>(); t && !t->model && t->options().model_name)
        t->model = named(*t->options().model_name, "title.model_name");
    if (auto* s = chain.get<llm_tool_selector>(); s && !s->model && s->options().model)
        s->model = named(*s->options().model, "llm_tool_selector.model");
    if (auto* e = chain.get<tool_emulator>(); e && !e->model && e->options().model)
        e->model = named(*e->options().model, "tool_emulator.model");
    if (auto* f = chain.get<model_fallback>(); f && f->models().empty()) {
        std::vector<any_chat_model> fallbacks;
        const auto& names = f->options().models;
        for (std::size_t i = 0; i < names.size(); ++i)
            fallbacks.push_back(named(names[i], detail::format("model_fallback.models[{}]", i)));
        f->set_models(std::move(fallbacks));
    }
    // Memory's worker: the model memory.model_name (DeerFlow's earlier
    // spelling) or backend_config.model.model_name names, else the app's
    // default model (the first configured), as DeerFlow does.
    if (auto* m = chain.get<memory>()) {
        const memory_options& mo = m->manager()->options();
        const boost::json::object& spec = mo.backend_config.model;
        std::string path = "memory.backend_config.model";
        std::optional<std::string> name = mo.model_name;
        if (name) path = "memory";
        for (const char* key : {"model_name", "name"})
            if (const auto* v = spec.if_contains(key)) {
                if (!v->is_string()) json_type_error(json_path(path, key), "a model name", *v);
                name = std::string(v->get_string());
                if (spec.size() > 1)
                    throw json_error(path, detail::format("give {} alone: the model's settings are its "
                                                          "models[] entry's",
                                                          key));
            }
        if (!name && !spec.empty())
            // DeerFlow's {provider, model, api_key, ...}: a second place for a model's
            // endpoint and key, which agentware keeps in models[] only.
            throw json_error(path, "give model_name, one of the configured models (" +
                                       lead_model_names(models) +
                                       "): agentware makes helper models from models[] only");
        if (name || !models.empty()) {
            any_chat_model worker =
                name ? named(*name, json_path(path, "model_name")) : factory(models.front().name, false);
            m->manager()->set_model(
                [worker](const chat_request& request) mutable { return worker.invoke(request); });
        }
    }
    if (auto* m = chain.get<moderation>(); m && !m->options().check) {
        openai_moderation_config endpoint;
        endpoint.base_url = m->options().base_url;
        endpoint.api_key_env = m->options().api_key_env;
        try {
            m->set_check(openai_moderation_client(std::move(endpoint)));
        } catch (const std::exception& e) {
            throw json_error("moderation", e.what());
        }
    }
}

} // namespace detail

/// Builds the lead agent of one request from the configuration (an object of
/// DeerFlow's sections: `models`, `tools`, `agent`, `subagents`, the chain's
/// sections). Throws lead_agent_error when no model is configured, json_error
/// naming the key of a bad value.
inline lead_agent make_lead_agent(const boost::json::value& config, lead_agent_request request,
                                  const lead_agent_setup& setup = {}) {
    lead_agent out;
    out.model = resolve_lead_model(config, request);
    out.warnings = out.model.warnings;
    if (!setup.model_factory) throw lead_agent_error("make_lead_agent: the setup has no model factory");
    any_chat_model model = setup.model_factory(out.model.model.name, out.model.thinking_enabled);
    deerflow_pipeline chain = make_lead_chain(config, request, out.model.model, setup.skills);
    // What memory keeps reaches the model through dynamic_context, which
    // DeerFlow's lead always has: the memory section alone is enough for the
    // next run to see it (`dynamic_context: false` still leaves it out).
    if (const auto* m = chain.get<memory>();
        m && !chain.enabled<dynamic_context>() &&
        !config.get_object().contains(dynamic_context_options::config_section))
        chain.slot<dynamic_context>().emplace(dynamic_context_options{}, m->manager());
    if (setup.attach_helpers)
        setup.attach_helpers(chain);
    else
        detail::wire_lead_helpers(chain, config.get_object(), setup.model_factory);
    // A sandbox that cannot isolate here is refused now, not at the first bash call.
    if (const auto* s = chain.get<sandbox>(); s && s->options().isolated())
        if (auto why = detail::bubblewrap_unavailable_cached(s->options().isolation))
            throw lead_agent_error(
                detail::format("sandbox.use: the isolated sandbox cannot run on this machine: {}", *why));
    const auto& obj = config.get_object();
    lead_tools tools = assemble_lead_tools(config, request, chain, setup, nullptr);
    // MCP tools (§6 step 5): after the configured tools and the built-ins; the subagents get them too.
    const std::vector<std::shared_ptr<tool_interface>> mcp =
        setup.mcp_tools ? setup.mcp_tools() : std::vector<std::shared_ptr<tool_interface>>{};
    if (request.subagent_enabled) {
        out.executor = setup.executor;
        if (!out.executor) {
            subagent_executor_options eo;
            if (const auto* s = obj.if_contains(subagents_options::config_section); s && s->is_object())
                eo.config = read_subagents_section(*s);
            eo.allow_bash = detail::lead_host_bash_allowed(chain);
            // The subagents' tools: the lead's (the types' lists filter them).
            if (auto* s = chain.get<sandbox>())
                for (auto& t : s->tools())
                    eo.tools.add(t);
            for (const auto& t : tools.own)
                if (!eo.tools.find(t->schema().name)) eo.tools.add(t);
            for (const auto& t : mcp)
                if (!eo.tools.find(t->schema().name)) eo.tools.add(t);
            eo.model_named = [f = setup.model_factory](std::string_view name) { return f(name, false); };
            eo.runner = setup.subagent_runner_override
                            ? setup.subagent_runner_override
                            : make_deerflow_subagent_runner(
                                  detail::lead_chain_sections(config),
                                  subagent_skills{setup.skills, detail::lead_skills_options(config)});
            out.executor = std::make_shared<subagent_executor>(std::move(eo));
        }
        const auto names = tools.names();
        if (std::find(names.begin(), names.end(), "task") == names.end()) {
            tools.own.add(make_task_tool(out.executor));
        } else {
            tools.warnings.emplace_back("tool \"task\" (built-in) is already offered; the first is kept");
        }
    }
    for (const auto& t : mcp)
        tools.add(t, "MCP");
    out.tool_names = tools.names();
    out.warnings.insert(out.warnings.end(), tools.warnings.begin(), tools.warnings.end());

    std::string skills_index = setup.skills_index;
    if (skills_index.empty() && setup.skills)
        skills_index =
            skills_prompt_section(*setup.skills, detail::lead_skills_options(config).container_path);
    const lead_prompt_parts parts = make_lead_prompt_parts(config, request, chain, out.tool_names,
                                                           out.executor.get(), std::move(skills_index));
    out.system_prompt = lead_system_prompt(parts);

    agent_options ao;
    ao.system_prompt = out.system_prompt;
    out.request = std::move(request);
    out.agent = std::make_unique<lead_agent::agent_type>(std::move(model), std::move(tools.own),
                                                         std::move(chain), std::move(ao));
    return out;
}

} // namespace agentware

#endif
