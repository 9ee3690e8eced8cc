#ifndef AGENTWARE_SUBAGENTS_CONFIG_HPP
#define AGENTWARE_SUBAGENTS_CONFIG_HPP

// Subagent types and their configuration (DeerFlow's `subagents:` section,
// reference §5.12 and §10): the built-in types `general-purpose` and `bash`,
// custom types, the per-type overrides and the rules that decide a
// delegation's effective timeout, turn limit, model, skills and tools.

#include <agentware/json/reader.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// What a kind of subagent is: its prompt, the tools it may use, how long and
/// how many rounds it may run, and its model ("inherit": the parent's).
struct subagent_type {
    std::string name;
    std::string description;
    std::string system_prompt;
    /// Allowlist of tool names; empty optional = every tool the parent's subagents may use.
    std::optional<std::vector<std::string>> tools;
    /// Denylist, applied after the allowlist.
    std::vector<std::string> disallowed_tools{"task", "ask_clarification", "present_files"};
    /// Skills the subagent sees; empty optional = the parent's.
    std::optional<std::vector<std::string>> skills;
    std::string model = "inherit";
    std::size_t max_turns = 50;                ///< the subagent run's recursion limit
    std::chrono::milliseconds timeout{900000}; ///< from the moment it starts to run
    bool builtin = false;                      ///< general-purpose and bash
    std::optional<boost::json::object>
        token_budget; ///< per-type token budget settings (see subagents_options)

    friend bool operator==(const subagent_type&, const subagent_type&) = default;
};

/// Per-type overrides (`subagents.agents.<name>`): they win over the global
/// settings and the type's own values.
struct subagent_overrides {
    std::optional<std::chrono::milliseconds> timeout_seconds;
    std::optional<std::size_t> max_turns;
    std::optional<std::string> model;
    std::optional<std::vector<std::string>> skills;
    std::optional<boost::json::object> token_budget;

    friend bool operator==(const subagent_overrides&, const subagent_overrides&) = default;
};

/// DeerFlow's `subagents:` section, the parts that run subagents. The section
/// also holds subagent_limit's keys (`max_total_per_run`, ...), which this
/// reader passes over and subagent_limit_options reads.
struct subagents_options {
    std::chrono::milliseconds timeout_seconds{1800000}; ///< the built-in types' timeout
    std::optional<std::size_t> max_turns;               ///< the built-in types' turn limit, when set
    /// Subagents that run at once through one executor; more wait their turn
    /// (DeerFlow hard-codes 3 scheduler threads, its issue 4993).
    std::size_t max_concurrent = 3;
    /// The subagents' token budget: `{enabled, max_tokens, warn_threshold, ...}`
    /// (token_budget's options); on by default in DeerFlow.
    std::optional<boost::json::object> token_budget;
    std::map<std::string, subagent_overrides> agents;
    std::map<std::string, subagent_type> custom_agents;

    static constexpr std::string_view config_section = "subagents";
    friend bool operator==(const subagents_options&, const subagents_options&) = default;
};

namespace detail {

/// A duration in seconds as JSON: whole seconds as an integer, else a fraction.
inline boost::json::value seconds_value(std::chrono::milliseconds d) {
    if (d.count() % 1000 == 0) return boost::json::value(d.count() / 1000);
    return boost::json::value(static_cast<double>(d.count()) / 1000.0);
}

// Our own words: the reference does not give DeerFlow's descriptions and prompts.
inline constexpr std::string_view general_purpose_description =
    "A capable agent for complex, multi-step tasks that need both exploration and action.";

// DeerFlow's general-purpose prompt has these blocks; the words are ours.
inline constexpr std::string_view general_purpose_prompt =
    "You are a general-purpose subagent working on one task delegated by a lead agent.\n\n"
    "<guidelines>\nWork on the task autonomously until it is done; the lead agent cannot answer questions "
    "while you work. Prefer doing over describing.\n</guidelines>\n\n"
    "<tool_restrictions>\nYou cannot delegate to other subagents or ask the user for clarification.\n"
    "</tool_restrictions>\n\n"
    "<file_editing_workflow>\nRead a file before you change it; make the smallest change that does the "
    "job.\n</file_editing_workflow>\n\n"
    "<output_format>\nEnd with a concise report: what you did, what you found, and anything left "
    "undone.\n</output_format>\n\n"
    "<working_directory>\nThe thread's files are under /mnt/user-data (workspace, uploads, outputs).\n"
    "</working_directory>";

inline constexpr std::string_view bash_description =
    "A command-line specialist that runs shell commands for the lead agent.";
inline constexpr std::string_view bash_prompt =
    "You are a bash subagent: you carry out one command-line task delegated by a lead agent, using the "
    "shell and the file tools. Run commands one step at a time, check their output, and end with a concise "
    "report of what you ran and what it printed that matters.";

// DeerFlow's text (reference §5.12), except that it names agentware's
// isolated sandbox where DeerFlow names its AioSandboxProvider, which
// agentware does not have (docs/subagents.md).
inline constexpr std::string_view bash_subagent_disabled =
    "Bash subagent is disabled for LocalSandboxProvider because host bash execution is not a secure sandbox "
    "boundary. Switch to the isolated sandbox (sandbox.use: isolated) for isolated bash access, or set "
    "sandbox.allow_host_bash: true only in a fully trusted local environment.";

inline subagent_type read_custom_subagent(const boost::json::value& jv, std::string path) {
    json_reader r(jv, std::move(path));
    subagent_type t;
    r.read("description", t.description)
        .read("system_prompt", t.system_prompt)
        .read("tools", t.tools)
        .read("disallowed_tools", t.disallowed_tools)
        .read("skills", t.skills)
        .read("model", t.model)
        .read("max_turns", t.max_turns)
        .read("timeout_seconds", t.timeout)
        .read("token_budget", t.token_budget)
        .reject_unknown_keys();
    if (t.max_turns == 0) throw json_error(r.path_of("max_turns"), "must be at least 1");
    return t;
}

} // namespace detail

/// `general-purpose`: every tool but task, ask_clarification and
/// present_files; 150 turns; the global timeout; the parent's model.
inline subagent_type general_purpose_subagent() {
    subagent_type t;
    t.name = "general-purpose";
    t.description = std::string(detail::general_purpose_description);
    t.system_prompt = std::string(detail::general_purpose_prompt);
    t.max_turns = 150;
    t.timeout = std::chrono::minutes(30);
    t.builtin = true;
    return t;
}

/// `bash`: bash and the file tools; 60 turns; the global timeout.
inline subagent_type bash_subagent() {
    subagent_type t;
    t.name = "bash";
    t.description = std::string(detail::bash_description);
    t.system_prompt = std::string(detail::bash_prompt);
    t.tools = std::vector<std::string>{"bash", "ls", "read_file", "write_file", "str_replace"};
    t.max_turns = 60;
    t.timeout = std::chrono::minutes(30);
    t.builtin = true;
    return t;
}

/// The types a delegation may name, and their effective settings.
class subagent_registry {
public:
    subagent_registry() : subagent_registry(subagents_options{}) {}
    /// `allow_bash`: the sandbox runs bash (isolated, or `allow_host_bash`);
    /// without it the `bash` type is hidden and refused.
    explicit subagent_registry(subagents_options options, bool allow_bash = false)
        : options_(std::move(options)), allow_bash_(allow_bash) {
        // Every type resolved once: a delegation copies its type from here.
        for (std::string_view name : {"general-purpose", "bash"})
            resolved_.emplace(name, *resolve_afresh(name));
        for (const auto& [name, t] : options_.custom_agents)
            resolved_.insert_or_assign(name, *resolve_afresh(name));
    }

    const subagents_options& options() const noexcept { return options_; }
    bool bash_allowed() const noexcept { return allow_bash_; }

    /// The names of the types a delegation may use, built-ins first, then
    /// the custom types by name (`bash` left out when bash is not allowed).
    std::vector<std::string> available() const {
        std::vector<std::string> out{"general-purpose"};
        if (allow_bash_) out.emplace_back("bash");
        for (const auto& [name, t] : options_.custom_agents)
            if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
        return out;
    }

    /// The type `name` with the overrides applied: `agents.<name>` wins over
    /// the global `timeout_seconds`/`max_turns` (built-ins only), which win
    /// over the type's own values. Empty when there is no such type; a custom
    /// type of a built-in's name replaces the built-in.
    std::optional<subagent_type> resolve(std::string_view name) const {
        if (const subagent_type* t = find(name)) return *t;
        return std::nullopt;
    }

    /// resolve(name), without a copy: null when there is no such type.
    const subagent_type* find(std::string_view name) const {
        auto it = resolved_.find(name);
        return it == resolved_.end() ? nullptr : &it->second;
    }

    /// True when `name` is the bash type and bash is not allowed.
    bool refused(std::string_view name) const {
        return name == "bash" && !allow_bash_ && !options_.custom_agents.contains(std::string(name));
    }

private:
    std::optional<subagent_type> resolve_afresh(std::string_view name) const {
        std::optional<subagent_type> t;
        if (auto it = options_.custom_agents.find(std::string(name)); it != options_.custom_agents.end()) {
            t = it->second;
            t->name = std::string(name);
            t->builtin = false;
        } else if (name == "general-purpose") {
            t = general_purpose_subagent();
        } else if (name == "bash") {
            t = bash_subagent();
        } else {
            return std::nullopt;
        }
        if (t->builtin) {
            t->timeout = options_.timeout_seconds;
            if (options_.max_turns) t->max_turns = *options_.max_turns;
        }
        if (!t->token_budget) t->token_budget = options_.token_budget;
        if (auto it = options_.agents.find(std::string(name)); it != options_.agents.end()) {
            const subagent_overrides& o = it->second;
            if (o.timeout_seconds) t->timeout = *o.timeout_seconds;
            if (o.max_turns) t->max_turns = *o.max_turns;
            if (o.model) t->model = *o.model;
            if (o.skills) t->skills = *o.skills;
            if (o.token_budget) t->token_budget = *o.token_budget;
        }
        return t;
    }

    subagents_options options_;
    bool allow_bash_ = false;
    std::map<std::string, subagent_type, std::less<>> resolved_;
};

/// The tools of `all` a subagent of type `t` may use: those its allowlist
/// names (all when it has none), less those its denylist names, in `all`'s order.
inline tool_set subagent_tools(const tool_set& all, const subagent_type& t) {
    tool_set out;
    for (const auto& tool : all) {
        const std::string& name = tool->schema().name;
        if (t.tools && std::find(t.tools->begin(), t.tools->end(), name) == t.tools->end()) continue;
        if (std::find(t.disallowed_tools.begin(), t.disallowed_tools.end(), name) != t.disallowed_tools.end())
            continue;
        out.add(tool);
    }
    return out;
}

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const subagent_type& t) {
    boost::json::object o{{"description", t.description},
                          {"system_prompt", t.system_prompt},
                          {"disallowed_tools", boost::json::value_from(t.disallowed_tools)},
                          {"model", t.model},
                          {"max_turns", t.max_turns},
                          {"timeout_seconds", detail::seconds_value(t.timeout)}};
    if (t.tools) o["tools"] = boost::json::value_from(*t.tools);
    if (t.skills) o["skills"] = boost::json::value_from(*t.skills);
    if (t.token_budget) o["token_budget"] = *t.token_budget;
    jv = std::move(o);
}

inline subagent_type tag_invoke(boost::json::value_to_tag<subagent_type>, const boost::json::value& jv) {
    return detail::read_custom_subagent(jv, {});
}

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const subagent_overrides& o) {
    boost::json::object out;
    if (o.timeout_seconds) out["timeout_seconds"] = detail::seconds_value(*o.timeout_seconds);
    if (o.max_turns) out["max_turns"] = *o.max_turns;
    if (o.model) out["model"] = *o.model;
    if (o.skills) out["skills"] = boost::json::value_from(*o.skills);
    if (o.token_budget) out["token_budget"] = *o.token_budget;
    jv = std::move(out);
}

inline subagent_overrides tag_invoke(boost::json::value_to_tag<subagent_overrides>,
                                     const boost::json::value& jv) {
    json_reader r(jv);
    subagent_overrides o;
    r.read("timeout_seconds", o.timeout_seconds)
        .read("max_turns", o.max_turns)
        .read("model", o.model)
        .read("skills", o.skills)
        .read("token_budget", o.token_budget)
        .reject_unknown_keys();
    if (o.max_turns && *o.max_turns == 0) throw json_error("max_turns", "must be at least 1");
    return o;
}

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const subagents_options& o) {
    boost::json::object out{{"timeout_seconds", detail::seconds_value(o.timeout_seconds)},
                            {"max_concurrent", o.max_concurrent},
                            {"agents", boost::json::value_from(o.agents)},
                            {"custom_agents", boost::json::value_from(o.custom_agents)}};
    out["max_turns"] = o.max_turns ? boost::json::value(*o.max_turns) : boost::json::value(nullptr);
    if (o.token_budget) out["token_budget"] = *o.token_budget;
    jv = std::move(out);
}

/// Reads DeerFlow's `subagents:` section; subagent_limit's keys are left to it.
inline subagents_options tag_invoke(boost::json::value_to_tag<subagents_options>,
                                    const boost::json::value& jv) {
    json_reader r(jv, std::string(subagents_options::config_section));
    subagents_options o;
    r.read("timeout_seconds", o.timeout_seconds)
        .read("max_turns", o.max_turns)
        .read("max_concurrent", o.max_concurrent)
        .read("token_budget", o.token_budget)
        .read("agents", o.agents)
        // subagent_limit's (subagent_limit_options reads them)
        .skip("max_total_per_run")
        .skip("max_concurrent_ceiling")
        .skip("max_total_ceiling")
        .skip("task_tool_name")
        .skip("limits_from_context");
    if (const auto* custom = r.find("custom_agents")) {
        const auto* obj = custom->if_object();
        if (!obj) detail::json_type_error(r.path_of("custom_agents"), "an object", *custom);
        for (const auto& kv : *obj) {
            subagent_type t = detail::read_custom_subagent(
                kv.value(), detail::json_path(r.path_of("custom_agents"), kv.key()));
            t.name = std::string(kv.key());
            o.custom_agents.emplace(t.name, std::move(t));
        }
    }
    r.reject_unknown_keys();
    if (o.max_concurrent == 0) throw json_error(r.path_of("max_concurrent"), "must be at least 1");
    if (o.max_turns && *o.max_turns == 0) throw json_error(r.path_of("max_turns"), "must be at least 1");
    return o;
}

} // namespace agentware

#endif
