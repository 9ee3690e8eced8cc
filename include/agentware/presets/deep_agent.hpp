#ifndef AGENTWARE_PRESETS_DEEP_AGENT_HPP
#define AGENTWARE_PRESETS_DEEP_AGENT_HPP

// make_deep_agent: deepagents' create_deep_agent in one call. The chain, in
// the Swift seed's composition order (todo, filesystem, subagents, the
// caller's middlewares, ask_user, human in the loop, summarization), with
// deepagents' patch_tool_calls and the catalog's capabilities before the
// caller's middlewares and prompt caching innermost:
//
//   todo?  filesystem  deep_subagents?  patch_tool_calls
//   search_tools?  text_tools?  git_tools?  shell_tools?
//   <the caller's middlewares>  ask_user?  human_in_the_loop?  tool_approval?
//   summarization?  prompt_caching?
//
// `?` marks an optional slot the options engage. Summarization is on by
// default with deepagents' settings (deep_summarization.hpp), offloading the
// summarised history to /conversation_history/ through the agent's backend
// (the state's files by default). The caller's middlewares are spliced in at
// compile time. A tool_policy, when given, is expanded
// against the capability catalog: the tools it switches off are never
// offered (the filesystem's and the caller's are filtered when the agent is
// made), and the tools it marks `ask` or `deny` go through tool_approval.

#include <agentware/agent/agent.hpp>
#include <agentware/agent/coroutine_hooks.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/middleware/ask_user.hpp>
#include <agentware/middleware/deep_subagents.hpp>
#include <agentware/middleware/deep_summarization.hpp>
// filesystem.hpp uses python_list without including its header.
#include <agentware/middleware/capabilities/git.hpp>
#include <agentware/middleware/capabilities/search.hpp>
#include <agentware/middleware/capabilities/shell.hpp>
#include <agentware/middleware/capabilities/text.hpp>
#include <agentware/middleware/detail/json_values.hpp>
#include <agentware/middleware/filesystem.hpp>
#include <agentware/middleware/human_in_the_loop.hpp>
#include <agentware/middleware/patch_tool_calls.hpp>
#include <agentware/middleware/prompt_caching.hpp>
#include <agentware/middleware/summarization.hpp>
#include <agentware/middleware/todo_list.hpp>
#include <agentware/middleware/tool_approval.hpp>
#include <agentware/presets/tool_policy.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// The chain make_deep_agent builds, the caller's middlewares `User...` in the middle.
template <class... User>
using deep_agent_pipeline =
    pipeline<std::optional<todo_list>, filesystem, std::optional<deep_subagents>, patch_tool_calls,
             std::optional<search_tools>, std::optional<text_tools>, std::optional<git_tools>,
             std::optional<shell_tools>, User..., std::optional<ask_user>, std::optional<human_in_the_loop>,
             std::optional<tool_approval>, std::optional<summarization>, std::optional<prompt_caching>>;

/// What make_deep_agent builds. The JSON form has every key but the C++-only ones.
struct deep_agent_options {
    std::string system_prompt;
    /// The planning list; unset: off (deepagents made it opt-in).
    std::optional<todo_list_options> todo;
    filesystem_options filesystem;
    /// The task tool and its subagents; unset: no task tool.
    std::optional<deep_subagents_options> subagents = deep_subagents_options{};
    /// deepagents' settings (deepagents_summarization_options): with the model's
    /// input window known (these options' `max_input_tokens`, else the model's
    /// info), 85 % and keep 10 %; unknown, 170,000 tokens and keep 6 messages. The history
    /// summarised away goes to /conversation_history/{thread_id}.md through the
    /// backend. unset: no summarization.
    std::optional<summarization_options> summarization = deepagents_summarization_options();
    std::optional<prompt_caching_options> prompt_caching;
    /// LangChain's `interrupt_on` (and `description_prefix`); unset: no review.
    std::optional<human_in_the_loop_options> human_in_the_loop;
    /// Swift's tool policy; unset: every tool offered and run.
    std::optional<tool_policy> policy;
    /// The host capabilities of the catalog, in a working directory; unset: off.
    /// With `search` on, its grep and glob replace the filesystem's.
    std::optional<search_tools_options> search;
    std::optional<text_tools_options> text;
    std::optional<git_tools_options> git;
    std::optional<shell_tools_options> shell;
    /// Offer the ask_user tool (also when `ask_user_handler` is set).
    bool ask_user = false;

    // C++ only:
    /// The filesystem's backend per call; unset: the agent state.
    backend_factory backend;
    /// Answers ask_user in process; unset: the run pauses for the answer.
    std::function<std::string(std::string_view)> ask_user_handler;
    /// Asks a human about an `ask` call in process; unset: the run pauses.
    std::function<bool(const tool_call&)> confirm;
    /// The summarization model; unset: the run's own.
    std::optional<any_chat_model> summarization_model;
    /// Where summarization offloads the summarised history; empty: not offloaded.
    std::string conversation_history_dir = "/conversation_history";
    /// The time written in the offloaded history's headings; empty: the system clock.
    std::function<std::chrono::system_clock::time_point()> history_clock;
    /// Approval modes for tools the catalog does not cover (the policy's win).
    std::map<std::string, tool_approval_mode, std::less<>> extra_approvals;

    static constexpr std::string_view config_section = "deep_agent";
};

namespace detail {

inline filesystem deep_make_filesystem(const backend_factory& backend, const filesystem_options& o) {
    if (backend) return filesystem(backend, o);
    return filesystem(o);
}

// The filesystem's tools less those the policy switches off.
inline filesystem_options deep_filesystem_options(filesystem_options o, const tool_policy::expansion& e,
                                                  bool host_search) {
    static constexpr std::string_view all[] = {"ls",   "read_file", "write_file", "edit_file", "glob",
                                               "grep", "delete",    "mkdir",      "execute"};
    std::vector<std::string> wanted;
    bool changed = false;
    for (std::string_view t : all) {
        const bool listed = o.tools.empty() || std::find(o.tools.begin(), o.tools.end(), t) != o.tools.end();
        if (!listed) continue;
        if (e.offered(t) && !(host_search && (t == "glob" || t == "grep")))
            wanted.emplace_back(t);
        else
            changed = true;
    }
    if (!e.offered("read_file"))
        throw std::invalid_argument("make_deep_agent: the tool policy switches off read_file, which the "
                                    "filesystem cannot do without");
    if (changed) o.tools = std::move(wanted);
    return o;
}

// A host capability's slot: engaged when configured and not switched off, less the switched-off tools.
template <class M, class O>
std::optional<M> deep_capability(std::optional<O>& o, const tool_policy::expansion& policy) {
    std::optional<M> slot;
    if (o && policy.enabled(M::capability_id)) {
        slot.emplace(std::move(*o));
        slot->drop_tools(policy.disabled_tools);
    }
    return slot;
}

// A capability the caller passes among its middlewares (web_tools, or a second
// search_tools): the policy applies to it as to the built-in slots.
template <class M>
void deep_apply_policy(M& middleware, const tool_policy::expansion& policy) {
    if constexpr (requires { M::capability_id; }) {
        if (!policy.enabled(M::capability_id))
            middleware.drop_all_tools();
        else
            middleware.drop_tools(policy.disabled_tools);
    }
}

// The model's input window, when its type says (any_chat_model's info); 0: unknown.
template <class Model>
std::size_t deep_model_window(const Model& model) {
    if constexpr (requires { model.info().max_input_tokens; })
        return static_cast<std::size_t>(model.info().max_input_tokens);
    else
        return 0;
}

// The summarization slot. The window is the options' `max_input_tokens`, else
// the model's; deepagents' defaults for an unknown window become those for
// the known one, and other options get the window for their fractions.
template <class Model>
std::optional<summarization> deep_summarization_slot(deep_agent_options& o, const Model& model) {
    std::optional<summarization> slot;
    if (!o.summarization) return slot;
    summarization_options so = std::move(*o.summarization);
    const std::size_t window = so.max_input_tokens > 0 ? so.max_input_tokens : deep_model_window(model);
    if (window > 0) {
        summarization_options unknown = so;
        unknown.max_input_tokens = 0;
        if (unknown == deepagents_summarization_options())
            so = deepagents_summarization_options(window);
        else
            so.max_input_tokens = window;
    }
    slot.emplace(std::move(so), std::move(o.summarization_model));
    if (!o.conversation_history_dir.empty())
        slot->offload = offload_history_to(o.backend ? o.backend : state_backend_factory(),
                                           o.conversation_history_dir, o.history_clock);
    return slot;
}

} // namespace detail

/// deepagents' create_deep_agent: an agent over `model` with `tools` and the
/// deep chain that `options` configures, the caller's middlewares `user...`
/// after patch_tool_calls and the capabilities, before ask_user (the tool policy applies to those that are
/// capabilities of the catalog, such as web_tools).
template <chat_model Model, class... User>
agent<Model, deep_agent_pipeline<User...>> make_deep_agent(Model model, tool_set tools,
                                                           deep_agent_options options, User... user) {
    using pipeline_t = deep_agent_pipeline<User...>;
    const tool_policy::expansion policy =
        options.policy ? options.policy->expand(default_capability_catalog(), options.extra_approvals)
                       : tool_policy{}.expand({});
    if (options.policy) {
        if (!policy.enabled("filesystem"))
            throw std::invalid_argument(
                "make_deep_agent: the tool policy switches off the filesystem, which a deep agent cannot do "
                "without");
        tool_set kept;
        for (const auto& t : tools)
            if (policy.offered(t->schema().name)) kept.add(t);
        tools = std::move(kept);
    }
    auto search_slot = detail::deep_capability<search_tools>(options.search, policy);
    auto text_slot = detail::deep_capability<text_tools>(options.text, policy);
    auto git_slot = detail::deep_capability<git_tools>(options.git, policy);
    auto shell_slot = detail::deep_capability<shell_tools>(options.shell, policy);
    (detail::deep_apply_policy(user, policy), ...);
    const filesystem_options fs_options =
        detail::deep_filesystem_options(options.filesystem, policy, search_slot.has_value());

    std::optional<todo_list> todo_slot;
    if (options.todo) todo_slot.emplace(*options.todo);

    std::optional<deep_subagents> subagents_slot;
    if (options.subagents && policy.offered("task")) {
        deep_subagents_options so = std::move(*options.subagents);
        for (const auto& t : tools)
            if (!so.default_tools.find(t->schema().name)) so.default_tools.add(t);
        if (!so.default_runner)
            so.default_runner = make_deep_subagent_runner([backend = options.backend, fs_options] {
                return pipeline<filesystem, patch_tool_calls>(
                    detail::deep_make_filesystem(backend, fs_options), patch_tool_calls{});
            });
        subagents_slot.emplace(std::move(so));
    }

    std::optional<summarization> summarization_slot = detail::deep_summarization_slot(options, model);

    std::optional<prompt_caching> caching_slot;
    if (options.prompt_caching) caching_slot.emplace(*options.prompt_caching);

    std::optional<ask_user> ask_slot;
    if ((options.ask_user || options.ask_user_handler) && policy.offered(ask_user::tool_name))
        ask_slot.emplace(ask_user_options{options.ask_user_handler});

    std::optional<human_in_the_loop> review_slot;
    if (options.human_in_the_loop) review_slot.emplace(*options.human_in_the_loop);

    std::optional<tool_approval> approval_slot;
    if (options.policy && !policy.all_allowed())
        approval_slot.emplace(tool_approval_options{policy.handler(), options.confirm, {}});

    agent_options ao;
    ao.system_prompt = std::move(options.system_prompt);
    return agent<Model, pipeline_t>(
        std::move(model), std::move(tools),
        pipeline_t(std::move(todo_slot), detail::deep_make_filesystem(options.backend, fs_options),
                   std::move(subagents_slot), patch_tool_calls{}, std::move(search_slot),
                   std::move(text_slot), std::move(git_slot), std::move(shell_slot), std::move(user)...,
                   std::move(ask_slot), std::move(review_slot), std::move(approval_slot),
                   std::move(summarization_slot), std::move(caching_slot)),
        std::move(ao));
}

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const deep_agent_options& o) {
    boost::json::object out{{"system_prompt", o.system_prompt},
                            {"filesystem", boost::json::value_from(o.filesystem)},
                            {"ask_user", o.ask_user},
                            {"conversation_history_dir", o.conversation_history_dir}};
    out["todo"] = o.todo ? boost::json::value_from(*o.todo) : boost::json::value(false);
    out["subagents"] = o.subagents ? boost::json::value_from(*o.subagents) : boost::json::value(false);
    out["summarization"] =
        o.summarization ? boost::json::value_from(*o.summarization) : boost::json::value(false);
    out["prompt_caching"] =
        o.prompt_caching ? boost::json::value_from(*o.prompt_caching) : boost::json::value(false);
    if (o.human_in_the_loop) {
        boost::json::value hitl = boost::json::value_from(*o.human_in_the_loop);
        out["interrupt_on"] = hitl.as_object()["interrupt_on"];
        out["description_prefix"] = hitl.as_object()["description_prefix"];
    }
    if (o.policy) out["policy"] = boost::json::value_from(*o.policy);
    if (o.search) out["search"] = boost::json::value_from(*o.search);
    if (o.text) out["text"] = boost::json::value_from(*o.text);
    if (o.git) out["git"] = boost::json::value_from(*o.git);
    if (o.shell) out["shell"] = boost::json::value_from(*o.shell);
    jv = std::move(out);
}

/// The deep agent's `summarization` section: the keys given override
/// deepagents' settings; `true` is those settings, `false` or null is off.
/// Errors name `path`.
inline std::optional<summarization_options> deep_summarization_from_json(const boost::json::value& v,
                                                                         const std::string& path) {
    if (v.is_null() || (v.is_bool() && !v.get_bool())) return std::nullopt;
    if (v.is_bool()) return deepagents_summarization_options();
    if (!v.is_object()) throw json_error(path, "expected an object, true or false");
    boost::json::value merged = boost::json::value_from(deepagents_summarization_options());
    for (const auto& [key, value] : v.get_object())
        merged.as_object()[key] = value;
    try {
        return boost::json::value_to<summarization_options>(merged);
    } catch (const json_error& e) {
        std::string_view inner = e.path();
        if (inner.starts_with(summarization_options::config_section))
            inner.remove_prefix(summarization_options::config_section.size());
        throw json_error(path + std::string(inner), e.problem());
    }
}

/// Reads {"system_prompt", "todo", "filesystem", "subagents", "summarization",
/// "prompt_caching", "interrupt_on", "description_prefix", "policy",
/// "search", "text", "git", "shell", "ask_user", "conversation_history_dir"}.
/// A section given as `false` (or null) is off; `true` is on with its
/// defaults. `summarization`'s keys override deepagents' settings.
inline deep_agent_options tag_invoke(boost::json::value_to_tag<deep_agent_options>,
                                     const boost::json::value& jv) {
    json_reader r(jv, std::string(deep_agent_options::config_section));
    deep_agent_options o;
    // A section's value; its reader names its own section first in an error: name ours.
    auto read_as = [&]<class T>(std::string_view key, const boost::json::value& v) -> T {
        try {
            return boost::json::value_to<T>(v);
        } catch (const json_error& e) {
            std::string_view inner = e.path();
            if (inner.starts_with(T::config_section)) inner.remove_prefix(T::config_section.size());
            throw json_error(r.path_of(key) + std::string(inner), e.problem());
        }
    };
    auto section = [&]<class T>(std::string_view key, std::optional<T>& slot) {
        const boost::json::value* v = r.find(key);
        if (v == nullptr) return;
        if (v->is_null() || (v->is_bool() && !v->get_bool()))
            slot.reset();
        else if (v->is_bool())
            slot.emplace();
        else
            slot = read_as.template operator()<T>(key, *v);
    };
    section("todo", o.todo);
    section("subagents", o.subagents);
    if (const boost::json::value* v = r.find("summarization"))
        o.summarization = deep_summarization_from_json(*v, r.path_of("summarization"));
    section("prompt_caching", o.prompt_caching);
    section("policy", o.policy);
    section("search", o.search);
    section("text", o.text);
    section("git", o.git);
    section("shell", o.shell);
    if (const auto* fs = r.find("filesystem"))
        o.filesystem = read_as.template operator()<filesystem_options>("filesystem", *fs);
    const auto* on = r.find("interrupt_on");
    const auto* prefix = r.find("description_prefix");
    if (on || prefix) {
        boost::json::object h;
        if (on) h["interrupt_on"] = *on;
        if (prefix) h["description_prefix"] = *prefix;
        try {
            o.human_in_the_loop = boost::json::value_to<human_in_the_loop_options>(boost::json::value(h));
        } catch (const json_error& e) {
            std::string_view inner = e.path();
            if (inner.starts_with(human_in_the_loop_options::config_section))
                inner.remove_prefix(human_in_the_loop_options::config_section.size() + 1);
            throw json_error(std::string(deep_agent_options::config_section) + "." + std::string(inner),
                             e.problem());
        }
    }
    r.read("system_prompt", o.system_prompt)
        .read("ask_user", o.ask_user)
        .read("conversation_history_dir", o.conversation_history_dir)
        .reject_unknown_keys();
    return o;
}

} // namespace agentware

#endif
