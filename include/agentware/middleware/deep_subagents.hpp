#ifndef AGENTWARE_MIDDLEWARE_DEEP_SUBAGENTS_HPP
#define AGENTWARE_MIDDLEWARE_DEEP_SUBAGENTS_HPP

// deep_subagents: deepagents' SubAgentMiddleware on agentware's subagent
// executor (subagents/executor.hpp). It offers the `task(description,
// subagent_type)` tool, whose description lists the available agents. A call
// runs the named subagent in a context of its own: a fresh history (its
// system prompt and the task's description as the only human message) and
// the parent's state less `messages`, `todos` and `structured_response`. The
// subagent's last non-empty ai text answers the call as its tool message,
// and its other state keys (the files it wrote, ...) are merged back into
// the parent's state by their fields' rules.
//
// Each subagent may have its own tools, model and middleware chain (a
// runner, make_deep_subagent_runner); `general-purpose`, added unless
// switched off, has the parent's tools and the default chain.

#include <agentware/agent/agent.hpp>
#include <agentware/agent/async_loop.hpp>
#include <agentware/agent/requests.hpp>
#include <agentware/agent/runtime.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/patch_tool_calls.hpp>
#include <agentware/model/any_chat_model.hpp>
#include <agentware/state/basic_state.hpp>
#include <agentware/subagents/config.hpp>
#include <agentware/subagents/executor.hpp>
#include <agentware/subagents/task_tool.hpp>
#include <agentware/tool/tool.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace agentware {

namespace detail {

/// The parent's state for each task call in progress, and the subagent's
/// changed fields when it ends, by (thread, run, call id). The executor
/// carries neither: wrap_tool_call puts the parent's state here, the runner
/// takes it and puts the subagent's back, the task tool takes that.
struct deep_state_exchange {
    std::mutex mutex;
    std::map<std::string, boost::json::object, std::less<>> parent, child;

    static std::string key(std::string_view thread, std::string_view run, std::string_view call) {
        std::string k(thread);
        k += '\0';
        k += run;
        k += '\0';
        k += call;
        return k;
    }
    static std::string key_of(const subagent_run& r) {
        return key(r.config.thread_id, r.config.run_id, r.task_id);
    }
    boost::json::object take(std::map<std::string, boost::json::object, std::less<>>& from,
                             const std::string& k) {
        std::lock_guard lock(mutex);
        auto it = from.find(k);
        if (it == from.end()) return {};
        boost::json::object o = std::move(it->second);
        from.erase(it);
        return o;
    }
    void put(std::map<std::string, boost::json::object, std::less<>>& into, std::string k,
             boost::json::object o) {
        std::lock_guard lock(mutex);
        into[std::move(k)] = std::move(o);
    }
};

} // namespace detail

/// What deep_subagents runs a subagent with (make_deep_subagent_runner): a
/// delegation and the exchange that carries its state in and out.
using deep_runner = std::function<boost::asio::awaitable<subagent_run_outcome>(
    subagent_run, std::shared_ptr<detail::deep_state_exchange>)>;

/// One subagent the task tool may delegate to (deepagents' SubAgent spec).
struct deep_subagent_spec {
    std::string name;
    std::string description;
    std::string system_prompt;
    /// Names of the parent's tools it may use; unset: all of them.
    std::optional<std::vector<std::string>> tools;
    /// Tools of its own, beside the named ones (set in C++ only).
    tool_set own_tools;
    /// A model by name (the options' `model_named`); empty: the parent's model.
    std::string model;
    /// Or the model itself (set in C++ only; wins over `model`).
    any_chat_model model_instance;
    /// Its middleware chain (make_deep_subagent_runner); empty: the options' default_runner.
    deep_runner runner;
    std::optional<std::size_t> max_turns;             ///< unset: the options' max_turns
    std::optional<std::chrono::milliseconds> timeout; ///< unset: the options' timeout_seconds
};

/// Settings of the deep_subagents middleware. The JSON form holds the
/// subagents' names, descriptions, prompts, tool names and model names;
/// tools, models and chains as objects are set in C++.
struct deep_subagents_options {
    std::vector<deep_subagent_spec> subagents;
    /// Adds `general-purpose` (unless a subagent of that name is given).
    bool general_purpose_agent = true;
    /// Appended to the parent's system prompt; unset: nothing (deepagents' default now).
    std::optional<std::string> system_prompt;
    /// Replaces the task tool's description; `{available_agents}` in it is replaced by the list.
    std::optional<std::string> task_description;
    std::size_t max_concurrent = 3;                       ///< delegations that run at once
    std::size_t max_turns = 500;                          ///< a subagent run's recursion limit
    std::chrono::milliseconds timeout_seconds{3'600'000}; ///< a delegation's time limit

    /// The parent's tools, which the subagents may be given (set in C++).
    tool_set default_tools;
    /// The chain of the subagents that have none of their own; empty: patch_tool_calls alone.
    deep_runner default_runner;
    /// Models by name, for subagents whose `model` names one.
    std::function<any_chat_model(std::string_view)> model_named;
    /// The model of one delegation, chosen by the run (its task call id, its
    /// type), over the spec's: routing, or a scripted replay. Unset, or an
    /// empty model returned: the spec's model.
    std::function<any_chat_model(const subagent_run&)> model_for_run;

    static constexpr std::string_view config_section = "deep_subagents";

    void validate() const {
        if (max_concurrent == 0) throw std::invalid_argument("max_concurrent: must be at least 1");
        if (max_turns == 0) throw std::invalid_argument("max_turns: must be at least 1");
        std::vector<std::string_view> seen;
        for (const auto& s : subagents) {
            if (s.name.empty()) throw std::invalid_argument("subagents: a subagent has an empty name");
            if (std::find(seen.begin(), seen.end(), s.name) != seen.end())
                throw std::invalid_argument("subagents: two subagents are named \"" + s.name + "\"");
            seen.push_back(s.name);
            if (s.max_turns && *s.max_turns == 0)
                throw std::invalid_argument("subagents." + s.name + ".max_turns: must be at least 1");
        }
    }
};

namespace detail {

// Text kept for parity with deepagents (reference next.md §2.3).
inline constexpr std::string_view deep_task_description =
    "Launch an ephemeral subagent to handle a complex, multi-step task in an isolated context window.\n"
    "\n"
    "Available agent types and the tools they have access to:\n"
    "{available_agents}\n"
    "\n"
    "Specify subagent_type to select the agent. Usage notes:\n"
    "- Launch multiple agents concurrently when their tasks are independent, using a single message with "
    "multiple tool calls.\n"
    "- Each invocation is stateless: the agent sees only the prompt you give it and returns a single final "
    "report. Put full detail in the prompt and state exactly what it should return.\n"
    "- The agent's report is not shown to the user; relay a summary yourself.\n"
    "- Tell the agent whether to create content, analyze, or only research, since it cannot see the user's "
    "intent.\n"
    "- If an agent's description says to use it proactively, do so without waiting to be asked.\n"
    "- When only general-purpose is available, use it for any complex, context-heavy task; it has the same "
    "capabilities as the main agent.";

// Text kept for parity with deepagents (reference next.md §2.3).
inline constexpr std::string_view deep_task_description_arg =
    "A detailed description of the task for the subagent to perform autonomously. Include all necessary "
    "context and specify the expected output format.";
// Text kept for parity with deepagents (reference next.md §2.3).
inline constexpr std::string_view deep_task_type_arg =
    "The type of subagent to use. Must be one of the available agent types listed in the tool description.";

// Text kept for parity with deepagents (reference next.md §2.3).
inline constexpr std::string_view deep_general_purpose_description =
    "General-purpose agent for researching complex questions, searching for files and content, and executing "
    "multi-step tasks. When you are searching for a keyword or file and are not confident that you will find "
    "the right match in the first few tries use this agent to perform the search for you. This agent has "
    "access to all tools as the main agent.";

// Text kept for parity with deepagents (reference next.md §2.3; the hard line break is theirs).
inline constexpr std::string_view deep_subagent_prompt =
    "In order to complete the objective that the user asks of you, you have access to a number of standard "
    "tools.\n\nThe calling agent only sees your final assistant message, not your intermediate work, tool "
    "results, or status tracking. Ensure your final\nresponse contains the complete answer.";

/// The state keys a subagent neither receives nor returns (deepagents' _EXCLUDED_STATE_KEYS).
inline constexpr std::string_view deep_excluded_state_keys[] = {"messages", "todos", "structured_response"};

inline bool deep_excluded_key(std::string_view key) {
    return std::find(std::begin(deep_excluded_state_keys), std::end(deep_excluded_state_keys), key) !=
           std::end(deep_excluded_state_keys);
}

/// The state's fields as JSON, less the excluded keys (the messages are never serialised).
template <class... Fs>
boost::json::object deep_state_json(const basic_state<type_list<Fs...>>& s) {
    boost::json::object o;
    for (const auto& kv : s.unknown_fields)
        if (!deep_excluded_key(kv.key())) o.emplace(kv.key(), kv.value());
    ((deep_excluded_key(Fs::name) ? void()
                                  : void(o[Fs::name] = boost::json::value_from(agentware::get<Fs>(s)))),
     ...);
    return o;
}

/// True when the state type has a field of that name.
template <class... Fs>
bool deep_state_has(const basic_state<type_list<Fs...>>*, [[maybe_unused]] std::string_view key) {
    return ((key == std::string_view{Fs::name}) || ... || false);
}

/// One delegation's agent, its state starting from the parent's fields and
/// its changed fields reported back when it ends.
template <class Factory>
boost::asio::awaitable<subagent_run_outcome>
run_deep_subagent(Factory make, subagent_run run, std::shared_ptr<deep_state_exchange> exchange) {
    using pipeline_t = std::remove_cvref_t<std::invoke_result_t<Factory&>>;
    using state_t = agent_state<pipeline_t>;
    const std::string key = deep_state_exchange::key_of(run);
    state_t state;
    boost::json::object given;
    if (exchange) given = exchange->take(exchange->parent, key);
    if (!given.empty()) state = boost::json::value_to<state_t>(boost::json::value(given));
    agent<any_chat_model, pipeline_t> a(std::move(run.model), std::move(run.tools), make());
    subagent_run_outcome out;
    out.result = co_await a.async_run(state, agent_input(std::move(run.input)), std::move(run.config));
    if (exchange) {
        // Only what changed goes back: a field merged by appending must not
        // get the parent's own items a second time.
        boost::json::object changed;
        for (auto& kv : deep_state_json(state)) {
            const auto* before = given.if_contains(kv.key());
            if (before == nullptr || *before != kv.value()) changed.emplace(kv.key(), std::move(kv.value()));
        }
        exchange->put(exchange->child, key, std::move(changed));
    }
    out.messages = std::move(state.messages);
    co_return out;
}

/// deepagents' tool message text: the last ai message with text (an empty
/// trailing one, as some providers end with, is passed over).
inline std::string deep_final_text(const subagent_result& r) {
    for (auto it = r.messages.rbegin(); it != r.messages.rend(); ++it)
        if (it->is_ai() && !it->text().empty()) return it->text();
    return r.result;
}

/// What the middleware and its task tool share.
struct deep_subagents_context {
    std::shared_ptr<deep_state_exchange> exchange = std::make_shared<deep_state_exchange>();
    deep_subagents_options options;
    std::vector<const deep_subagent_spec*> order; ///< general-purpose first, then the given order
    std::optional<deep_subagent_spec> general_purpose;
    std::shared_ptr<subagent_executor> executor;

    const deep_subagent_spec* find(std::string_view name) const {
        for (const auto* s : order)
            if (s->name == name) return s;
        return nullptr;
    }

    std::string available_agents() const {
        std::string out;
        for (const auto* s : order) {
            if (!out.empty()) out += '\n';
            out += detail::format("- {}: {}", s->name, s->description);
        }
        return out;
    }
};

inline std::string deep_format_description(std::string_view text, const std::string& agents) {
    std::string out(text);
    constexpr std::string_view slot = "{available_agents}";
    if (auto at = out.find(slot); at != std::string::npos) out.replace(at, slot.size(), agents);
    return out;
}

/// The `task` tool of deep_subagents.
class deep_task_tool {
public:
    explicit deep_task_tool(std::shared_ptr<deep_subagents_context> ctx) : ctx_(std::move(ctx)) {
        schema_.name = "task";
        const std::string agents = ctx_->available_agents();
        schema_.description = deep_format_description(ctx_->options.task_description
                                                          ? std::string_view(*ctx_->options.task_description)
                                                          : deep_task_description,
                                                      agents);
        schema_.parameters = boost::json::object{
            {"type", "object"},
            {"properties",
             boost::json::object{
                 {"description",
                  boost::json::object{{"type", "string"}, {"description", deep_task_description_arg}}},
                 {"subagent_type",
                  boost::json::object{{"type", "string"}, {"description", deep_task_type_arg}}}}},
            {"required", boost::json::array{"description", "subagent_type"}}};
    }

    const tool_schema& schema() const { return schema_; }

    boost::asio::awaitable<tool_output> async_call(const boost::json::object& args, const tool_runtime& rt) {
        const std::string type = string_arg(args, "subagent_type");
        deep_state_exchange& exchange = *ctx_->exchange;
        const std::string key = deep_state_exchange::key(rt.thread_id, rt.run_id, rt.tool_call_id);
        if (!ctx_->find(type)) {
            exchange.take(exchange.parent, key);
            std::string allowed;
            for (const auto* s : ctx_->order)
                allowed += detail::format("{}`{}`", allowed.empty() ? "" : ", ", s->name);
            // Text kept for parity with deepagents (reference next.md §2.3).
            co_return tool_output(detail::format(
                "We cannot invoke subagent {} because it does not exist, the only allowed types are {}", type,
                allowed));
        }
        subagent_task task;
        task.task_id = std::string(rt.tool_call_id);
        task.description = string_arg(args, "description");
        task.prompt = task.description;
        task.subagent_type = type;
        subagent_result r = co_await ctx_->executor->execute(std::move(task), subagent_parent::of(rt));
        exchange.take(exchange.parent, key); // when the subagent never started
        boost::json::object changed = exchange.take(exchange.child, key);
        if (r.status != subagent_status::completed) {
            tool_output out = tool_output::error(format_subagent_result_message(r));
            out.metadata = subagent_additional_kwargs(r);
            co_return out;
        }
        tool_output out(deep_final_text(r));
        out.metadata = subagent_additional_kwargs(r);
        for (auto& kv : changed)
            if (!deep_excluded_key(kv.key())) out.update.fields[kv.key()] = std::move(kv.value());
        co_return out;
    }

private:
    static std::string string_arg(const boost::json::object& args, std::string_view key) {
        const auto* v = args.if_contains(key);
        return v && v->is_string() ? std::string(v->get_string()) : std::string();
    }

    std::shared_ptr<deep_subagents_context> ctx_;
    tool_schema schema_;
};

} // namespace detail

/// A subagent's chain for deep_subagents: each delegation runs a fresh chain
/// from `make()`, its state starting from the parent's fields (the files of
/// a state backend, ...) and its changed fields going back when it ends.
template <class Factory>
class deep_subagent_runner {
public:
    explicit deep_subagent_runner(Factory make) : make_(std::move(make)) {}
    /// Runs one delegation; `exchange` carries the state in and out (null: none).
    boost::asio::awaitable<subagent_run_outcome>
    operator()(subagent_run run, std::shared_ptr<detail::deep_state_exchange> exchange) const {
        return detail::run_deep_subagent(make_, std::move(run), std::move(exchange));
    }

private:
    // Type-erased: the delegation's coroutine frame (in this header) keeps the
    // factory, and g++ warns (-Wsubobject-linkage) when such a frame holds a
    // lambda type of the user's main file.
    std::function<std::invoke_result_t<Factory&>()> make_;
};

/// The chain `make()` builds, for a deep_subagent_spec's `runner` or the options' `default_runner`.
template <class Factory>
deep_runner make_deep_subagent_runner(Factory make) {
    return deep_subagent_runner<Factory>(std::move(make));
}

/// The deep_subagents middleware (deepagents' SubAgentMiddleware).
class deep_subagents {
public:
    using options_type = deep_subagents_options;

    deep_subagents() : deep_subagents(deep_subagents_options{}) {}
    explicit deep_subagents(deep_subagents_options o) {
        o.validate();
        auto ctx = std::make_shared<detail::deep_subagents_context>();
        ctx->options = std::move(o);
        deep_subagents_options& opts = ctx->options;
        if (!opts.default_runner)
            opts.default_runner = make_deep_subagent_runner([] { return pipeline<patch_tool_calls>{}; });
        const bool custom_gp = std::any_of(opts.subagents.begin(), opts.subagents.end(),
                                           [](const auto& s) { return s.name == "general-purpose"; });
        if (opts.general_purpose_agent && !custom_gp) {
            deep_subagent_spec gp;
            gp.name = "general-purpose";
            gp.description = std::string(detail::deep_general_purpose_description);
            gp.system_prompt = std::string(detail::deep_subagent_prompt);
            ctx->general_purpose = std::move(gp);
            ctx->order.push_back(&*ctx->general_purpose);
        }
        for (const auto& s : opts.subagents)
            ctx->order.push_back(&s);

        // The executor knows every subagent as a custom type; the runner gives
        // each its tools, model and chain.
        subagent_executor_options eo;
        eo.config.max_concurrent = opts.max_concurrent;
        for (const auto* s : ctx->order) {
            subagent_type t;
            t.name = s->name;
            t.description = s->description;
            t.system_prompt = s->system_prompt;
            t.disallowed_tools = {"task"};
            t.model = s->model_instance || s->model.empty() ? "inherit" : s->model;
            t.max_turns = s->max_turns.value_or(opts.max_turns);
            t.timeout = s->timeout.value_or(opts.timeout_seconds);
            eo.config.custom_agents[s->name] = std::move(t);
        }
        eo.tools = opts.default_tools;
        eo.model_named = opts.model_named;
        std::weak_ptr<detail::deep_subagents_context> weak = ctx;
        eo.runner = [weak](subagent_run run) -> boost::asio::awaitable<subagent_run_outcome> {
            auto c = weak.lock();
            if (!c) throw std::runtime_error("deep_subagents: the middleware is gone");
            const deep_subagent_spec* spec = c->find(run.type.name);
            deep_runner runner = c->options.default_runner;
            if (spec) {
                if (spec->tools) {
                    tool_set named;
                    for (const auto& t : run.tools)
                        if (std::find(spec->tools->begin(), spec->tools->end(), t->schema().name) !=
                            spec->tools->end())
                            named.add(t);
                    run.tools = std::move(named);
                }
                for (const auto& t : spec->own_tools)
                    if (!run.tools.find(t->schema().name)) run.tools.add(t);
                if (spec->model_instance) run.model = spec->model_instance;
                if (spec->runner) runner = spec->runner;
            }
            if (c->options.model_for_run)
                if (any_chat_model chosen = c->options.model_for_run(run)) run.model = std::move(chosen);
            return runner(std::move(run), c->exchange);
        };
        ctx->executor = std::make_shared<subagent_executor>(std::move(eo));
        ctx_ = ctx;
        task_ = share_tool(detail::deep_task_tool(ctx_));
    }

    const deep_subagents_options& options() const noexcept { return ctx_->options; }
    /// The executor the delegations run on (its registry, its waiting count).
    const std::shared_ptr<subagent_executor>& executor() const noexcept { return ctx_->executor; }
    /// The names the task tool accepts, general-purpose first.
    std::vector<std::string> available() const {
        std::vector<std::string> out;
        for (const auto* s : ctx_->order)
            out.push_back(s->name);
        return out;
    }

    std::vector<std::shared_ptr<tool_interface>> tools() const { return {task_}; }

    /// Appends the configured prompt, when there is one.
    auto wrap_model_call(auto& req, auto&& next) const {
        if (ctx_->options.system_prompt && !ctx_->options.system_prompt->empty()) {
            if (!std::string_view(req.system_prompt).empty()) req.system_prompt += "\n\n";
            req.system_prompt += *ctx_->options.system_prompt;
        }
        return next(req);
    }

    /// Hands the parent's state to the task call, and keeps of the
    /// subagent's returned keys those the parent's state has.
    auto wrap_tool_call(auto& req, auto&& next) const {
        if (req.call->name != "task" || req.state == nullptr) return next(req);
        using state_t = std::remove_cvref_t<decltype(*req.state)>;
        const std::string thread = req.rt ? req.rt->thread_id : std::string();
        const std::string run = req.rt ? req.rt->run_id : std::string();
        std::string key = detail::deep_state_exchange::key(thread, run, req.call->id);
        auto exchange = ctx_->exchange;
        exchange->put(exchange->parent, key, detail::deep_state_json(*req.state));
        // Whatever happened, nothing of this call stays behind.
        auto forget = [exchange, key] {
            exchange->take(exchange->parent, key);
            exchange->take(exchange->child, key);
        };
        return map_response(
            req, next,
            [forget](tool_response r) {
                forget();
                for (auto it = r.update.fields.begin(); it != r.update.fields.end();)
                    if (!detail::deep_state_has(static_cast<const state_t*>(nullptr), it->key()))
                        it = r.update.fields.erase(it);
                    else
                        ++it;
                return r;
            },
            [forget](std::exception_ptr e) -> tool_response {
                forget();
                std::rethrow_exception(e);
            });
    }

private:
    std::shared_ptr<detail::deep_subagents_context> ctx_;
    std::shared_ptr<tool_interface> task_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const deep_subagent_spec& s) {
    boost::json::object o{
        {"name", s.name}, {"description", s.description}, {"system_prompt", s.system_prompt}};
    if (s.tools) o["tools"] = boost::json::value_from(*s.tools);
    if (!s.model.empty()) o["model"] = s.model;
    if (s.max_turns) o["max_turns"] = *s.max_turns;
    if (s.timeout) o["timeout_seconds"] = detail::seconds_value(*s.timeout);
    jv = std::move(o);
}

/// {"name", "description", "system_prompt", "tools": [names], "model": name,
/// "max_turns", "timeout_seconds"}; name and description are required.
inline deep_subagent_spec tag_invoke(boost::json::value_to_tag<deep_subagent_spec>,
                                     const boost::json::value& jv) {
    json_reader r(jv);
    deep_subagent_spec s;
    s.name = r.required<std::string>("name");
    s.description = r.required<std::string>("description");
    r.read("system_prompt", s.system_prompt)
        .read("tools", s.tools)
        .read("model", s.model)
        .read("max_turns", s.max_turns)
        .read("timeout_seconds", s.timeout)
        .reject_unknown_keys();
    return s;
}

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const deep_subagents_options& o) {
    boost::json::object out{{"subagents", boost::json::value_from(o.subagents)},
                            {"general_purpose_agent", o.general_purpose_agent},
                            {"max_concurrent", o.max_concurrent},
                            {"max_turns", o.max_turns},
                            {"timeout_seconds", detail::seconds_value(o.timeout_seconds)}};
    out["system_prompt"] = o.system_prompt ? boost::json::value(*o.system_prompt) : nullptr;
    out["task_description"] = o.task_description ? boost::json::value(*o.task_description) : nullptr;
    jv = std::move(out);
}

inline deep_subagents_options tag_invoke(boost::json::value_to_tag<deep_subagents_options>,
                                         const boost::json::value& jv) {
    json_reader r(jv, std::string(deep_subagents_options::config_section));
    deep_subagents_options o;
    r.read("subagents", o.subagents)
        .read("general_purpose_agent", o.general_purpose_agent)
        .read("system_prompt", o.system_prompt)
        .read("task_description", o.task_description)
        .read("max_concurrent", o.max_concurrent)
        .read("max_turns", o.max_turns)
        .read("timeout_seconds", o.timeout_seconds)
        .reject_unknown_keys();
    if (o.max_concurrent == 0) throw json_error(r.path_of("max_concurrent"), "must be at least 1");
    if (o.max_turns == 0) throw json_error(r.path_of("max_turns"), "must be at least 1");
    r.validate(o);
    return o;
}

} // namespace agentware

#endif
