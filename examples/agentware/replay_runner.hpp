#ifndef AGENTWARE_EXAMPLES_AGENTWARE_REPLAY_RUNNER_HPP
#define AGENTWARE_EXAMPLES_AGENTWARE_REPLAY_RUNNER_HPP

// Runs a scenario through an agent with the lead agent's chain built as
// make_lead_agent builds it (make_lead_chain): the scenario's `features` are
// the configuration, its `context` the request's switches; a scripted model.
// The output is JSON and the same on every run: host paths become <base_dir>
// and message ids are numbered in order.

#include "scenario.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/detail/hash.hpp>
#include <agentware/middleware/skills_from_folders.hpp>
#include <agentware/model/any_chat_model.hpp>
#include <agentware/model/scripted_model.hpp>
#include <agentware/presets/deerflow.hpp>
#include <agentware/presets/lead_agent.hpp>
#include <agentware/presets/subagent_chain.hpp>
#include <agentware/subagents/executor.hpp>
#include <agentware/subagents/task_tool.hpp>

#include <boost/json.hpp>

#include <fmt/format.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace agentware_cli {

using namespace agentware;

namespace detail {

// Writes the scenario's files into the thread's directories, refusing any
// path that would leave them.
inline void create_files(const std::vector<scenario_file>& files, const thread_paths& dirs) {
    for (std::size_t i = 0; i < files.size(); ++i) {
        const std::string& rel = files[i].path;
        std::filesystem::path p(rel);
        auto root = p.begin();
        std::string top = root == p.end() ? std::string() : root->string();
        const std::string* dir = top == "workspace" ? &dirs.workspace_path
                                 : top == "uploads" ? &dirs.uploads_path
                                 : top == "outputs" ? &dirs.outputs_path
                                                    : nullptr;
        bool safe = dir && !p.is_absolute() && rel.find('\0') == std::string::npos;
        std::filesystem::path rest;
        for (auto it = std::next(root); safe && it != p.end(); ++it) {
            if (*it == ".." || *it == ".") safe = false;
            rest /= *it;
        }
        if (!safe || rest.empty())
            throw scenario_error(
                fmt::format("files[{}]: \"{}\" must be a relative path under workspace/, uploads/ "
                            "or outputs/, without \"..\"",
                            i, rel));
        std::filesystem::path target = std::filesystem::path(*dir) / rest;
        std::filesystem::create_directories(target.parent_path());
        std::ofstream out(target, std::ios::binary);
        out << files[i].content;
        if (!out) throw scenario_error(fmt::format("files[{}]: could not write \"{}\"", i, rel));
    }
}

// What a paused run asks (human_in_the_loop: action_requests, review_configs), as `interrupts`.
inline void put_interrupts(const run_result& r, boost::json::object& turn_out) {
    if (r.interrupts.empty()) return;
    boost::json::array pending;
    for (const auto& i : r.interrupts)
        pending.push_back(boost::json::object{{"id", i.id}, {"value", i.value}});
    turn_out["interrupts"] = std::move(pending);
}

// The ids of a replay derive from the scenario (its thread id) and the order
// they are made in, so the model reads the same names on every run.
inline std::uint64_t scenario_seed(const scenario& sc) { return agentware::detail::fnv1a_64(sc.thread_id); }

// Makes the output the same on every run.
class stable_names {
public:
    explicit stable_names(std::string base_dir) : base_dir_(std::move(base_dir)) {}

    void apply(boost::json::value& v) {
        if (auto* o = v.if_object()) {
            if (auto* id = o->if_contains("id"); id && id->is_string() && o->contains("role"))
                *id = name_of(std::string(id->get_string()));
            // An event's reference to a message (safety_termination's) names it as the message does.
            if (auto* id = o->if_contains("message_id"); id && id->is_string())
                *id = name_of(std::string(id->get_string()));
            if (auto* ts = o->if_contains("timestamp"); ts && ts->is_string()) *ts = "<timestamp>";
            for (auto& kv : *o)
                apply(kv.value());
        } else if (auto* a = v.if_array()) {
            for (auto& e : *a)
                apply(e);
        } else if (auto* s = v.if_string()) {
            std::string text(*s);
            bool changed = false;
            for (std::size_t at; !base_dir_.empty() && (at = text.find(base_dir_)) != std::string::npos;) {
                text.replace(at, base_dir_.size(), "<base_dir>");
                changed = true;
            }
            if (changed) *s = text;
        }
    }

private:
    std::string name_of(const std::string& id) {
        auto [it, added] = ids_.emplace(id, "");
        if (added) it->second = fmt::format("m{}", ids_.size());
        return it->second;
    }
    std::string base_dir_;
    std::map<std::string, std::string> ids_;
};

inline std::string make_temp_dir() {
    std::random_device rd;
    for (int attempt = 0; attempt < 16; ++attempt) {
        auto dir = std::filesystem::temp_directory_path() /
                   fmt::format("agentware-replay-{:016x}", (std::uint64_t(rd()) << 32) | rd());
        if (std::filesystem::create_directory(dir)) return dir.string();
    }
    throw scenario_error("could not create a temporary directory for the thread's files");
}

// The tools a scenario makes throw (`fail_next`): each is offered as a stub
// that throws the next error queued for it, or answers "OK" when none is.
class failing_tools {
public:
    explicit failing_tools(const std::vector<scenario_turn>& turns) {
        for (const auto& t : turns)
            for (const auto& f : t.fail_next)
                shared_->queues.emplace(f.tool, std::deque<std::string>{});
    }

    tool_set tools() const {
        tool_set set;
        for (const auto& entry : shared_->queues) {
            set.add(make_tool(
                entry.first, "A tool the replay scenario makes fail (fail_next).", R"({"type":"object"})",
                [shared = shared_, name = entry.first](const boost::json::object&) -> std::string {
                    std::string error;
                    {
                        std::lock_guard lock(shared->mutex);
                        auto& q = shared->queues.at(name);
                        if (q.empty()) return "OK";
                        error = std::move(q.front());
                        q.pop_front();
                    }
                    throw std::runtime_error(error);
                }));
        }
        return set;
    }

    void queue(const std::vector<scenario_failure>& failures) {
        std::lock_guard lock(shared_->mutex);
        for (auto& entry : shared_->queues)
            entry.second.clear();
        for (const auto& f : failures)
            shared_->queues.at(f.tool).push_back(f.error);
    }

private:
    struct state {
        std::mutex mutex;
        std::map<std::string, std::deque<std::string>> queues;
    };
    std::shared_ptr<state> shared_ = std::make_shared<state>();
};

inline boost::json::value request_json(const recorded_request& r) {
    boost::json::array msgs;
    if (!r.system_prompt.empty())
        msgs.push_back(boost::json::object{{"role", "system"}, {"content", r.system_prompt}});
    for (const auto& m : r.messages)
        msgs.push_back(to_openai_wire(m));
    boost::json::array tools;
    for (const auto& t : r.tool_names)
        tools.emplace_back(t);
    boost::json::object out{{"messages", std::move(msgs)}, {"tools", std::move(tools)}};
    // What middlewares add to the provider's request body (prompt_caching's cache_control, ...).
    if (!r.settings.extra_body.empty()) out["extra_body"] = r.settings.extra_body;
    return out;
}

} // namespace detail

/// Where a replay keeps the thread's directories, and whether it removes them.
struct replay_options {
    std::string base_dir; ///< empty: a fresh temporary directory, removed afterwards
    /// The scenario file's folder: a relative `features.skills.path` is taken
    /// from there. Empty: from the current directory.
    std::string scenario_dir;
};

namespace detail {

/// One turn's helper models, one scripted model per role of
/// `helper_model_roles` (a role the turn does not script answers nothing:
/// using it is the same error as the main model running out).
struct helper_models {
    std::map<std::string, scripted_model, std::less<>> by_role;

    explicit helper_models(const scenario_turn& turn) {
        for (std::string_view role : helper_model_roles) {
            if (role == "memory") continue; // the runner drives the memory worker's model itself
            auto it = turn.helper_models.find(role);
            if (it != turn.helper_models.end()) scripted.insert(std::string(role));
            by_role.emplace(std::string(role),
                            scripted_model::with_failures(
                                it == turn.helper_models.end() ? std::vector<scripted_step>{} : it->second));
        }
    }
    /// The role's model, as a middleware holds its configured model: when the
    /// turn scripts the role or the middleware names a model of its own
    /// (`model_name`); otherwise none, and the middleware uses the run's model
    /// as DeerFlow does.
    std::optional<any_chat_model> model(std::string_view role, bool named) const {
        if (!named && !scripted.contains(std::string(role))) return std::nullopt;
        return any_chat_model(by_role.find(role)->second);
    }
    std::set<std::string> scripted;
};

/// A subagent's scripted model whose answers take time on the replay's
/// subagent clock (the scenario's `delay_seconds`): a delay past the
/// subagent's timeout times it out at once, without a real wait.
struct clocked_subagent_model {
    scripted_model script;
    std::vector<double> delays; ///< seconds, per call
    std::shared_ptr<manual_subagent_clock> clock;

    model_response invoke(const chat_request& req) { return script.invoke(req); }
    boost::asio::awaitable<model_response> async_invoke(const chat_request& req) {
        const std::size_t k = script.calls();
        if (k < delays.size() && delays[k] > 0)
            co_await clock->sleep(std::chrono::milliseconds(static_cast<std::int64_t>(delays[k] * 1000)));
        co_return script.invoke(req);
    }
};

/// The turn's scripted subagent models, by task call id (`subagent:<id>`).
/// The executor's runner asks for one per delegation, from its own thread.
class subagent_scripts {
public:
    void set(const scenario_turn& turn) {
        std::lock_guard lock(mutex_);
        scripts_.clear();
        delays_ = turn.subagent_delays;
        for (const auto& [role, steps] : turn.helper_models)
            if (role.starts_with("subagent:")) scripts_.emplace(role, scripted_model::with_failures(steps));
    }
    /// The model of the delegation `task_id` (one with no answers when the turn scripts none).
    any_chat_model model_for(const std::string& task_id) {
        std::lock_guard lock(mutex_);
        const std::string role = "subagent:" + task_id;
        scripted_model script = scripts_.try_emplace(role, std::vector<message>{}).first->second;
        auto d = delays_.find(role);
        if (d == delays_.end()) return any_chat_model(std::move(script));
        return any_chat_model(clocked_subagent_model{std::move(script), d->second, clock});
    }
    /// What each delegation's model was asked, and what it had left, by role.
    void put_requests(boost::json::object& out) const {
        std::lock_guard lock(mutex_);
        for (const auto& [role, script] : scripts_) {
            boost::json::array role_requests;
            for (const auto& req : script.requests())
                role_requests.push_back(request_json(req));
            boost::json::object one{{"requests", std::move(role_requests)}};
            if (script.remaining() > 0) one["unused_messages"] = script.remaining();
            out[role] = std::move(one);
        }
    }
    /// The subagents' timeouts run on this clock, which only the scripted delays move.
    const std::shared_ptr<manual_subagent_clock> clock = std::make_shared<manual_subagent_clock>();

private:
    mutable std::mutex mutex_;
    std::map<std::string, scripted_model> scripts_;
    std::map<std::string, std::vector<double>, std::less<>> delays_;
};

/// Gives each engaged middleware that has a model of its own the turn's
/// scripted model for its role. One line per middleware with a model.
inline void attach_helper_models(deerflow_pipeline& middleware, const helper_models& helpers) {
    if (auto* s = middleware.get<summarization>())
        s->model = helpers.model("summarization", s->options().model_name.has_value());
    if (auto* t = middleware.get<title>())
        t->model = helpers.model("title", t->options().model_name.has_value());
    if (auto* s = middleware.get<llm_tool_selector>())
        s->model = helpers.model("llm_tool_selector", s->options().model.has_value());
    if (auto* e = middleware.get<tool_emulator>())
        e->model = helpers.model("tool_emulator", e->options().model.has_value());
    // Every named fallback model is the role's script: each call takes its next step.
    if (auto* f = middleware.get<model_fallback>())
        f->set_models(std::vector<any_chat_model>(f->options().models.size(),
                                                  any_chat_model(helpers.by_role.at("model_fallback"))));
    // The moderation endpoint's answers are the role's ai messages, whose text is the
    // endpoint's JSON body; it is asked with the checked text as a user message.
    if (auto* m = middleware.get<moderation>())
        m->set_check([endpoint = helpers.by_role.at("moderation")](const std::string& text,
                                                                   const std::string&) mutable {
            chat_request req;
            req.messages = cow_vector<message>(std::vector<message>{human_message(text)});
            return parse_openai_moderation(endpoint.invoke(req).ai.text());
        });
}

/// Fixes the clock of the engaged middlewares that read one, when the
/// scenario gives `"now"`. One line per middleware with a clock.
inline void attach_clock(deerflow_pipeline& middleware,
                         const std::optional<std::chrono::system_clock::time_point>& now) {
    // Receipts carry a time: the scenario's `now`, else a fixed one (2026-01-01T00:00:00Z), so that
    // two replays print the same (tool_receipt is on in every scenario that does not turn it off).
    if (auto* t = middleware.get<tool_receipt>())
        t->clock = [at = now.value_or(std::chrono::system_clock::time_point(
                        std::chrono::seconds(1'767'225'600)))] { return at; };
    if (!now) return;
    auto fixed = [t = *now] { return t; };
    if (auto* d = middleware.get<durable_context>()) d->clock = fixed;
    if (auto* s = middleware.get<skills>()) s->clock = fixed;
}

/// The skill catalog of `features.skills` (DeerFlow's `skills` section), its
/// `path` (and `custom_path`) taken from the scenario's folder when relative;
/// null when the section is absent. A root that is not a folder is an error
/// (a scenario that names skills means to use them).
inline std::shared_ptr<const skill_catalog> scenario_skills(const boost::json::value& features,
                                                            const std::string& scenario_dir,
                                                            skills_options& options) {
    const auto* s = features.as_object().if_contains(skills_options::config_section);
    if (s == nullptr || s->is_null()) return nullptr;
    try {
        options = agentware::detail::lead_skills_options(features);
    } catch (const json_error& e) {
        throw e.within("features");
    }
    auto from_scenario = [&](std::string& p) {
        std::filesystem::path path(p);
        if (path.is_relative() && !scenario_dir.empty())
            p = (std::filesystem::path(scenario_dir) / path).string();
    };
    from_scenario(options.path);
    if (!options.custom_path.empty()) from_scenario(options.custom_path);
    std::error_code ec;
    if (!std::filesystem::is_directory(options.path, ec))
        throw scenario_error(fmt::format("features.skills.path: \"{}\" is not a folder", options.path));
    return std::make_shared<const skill_catalog>(load_skills(options));
}

} // namespace detail

/// The result of a replay: the output JSON, and the expectations that failed.
struct replay_result {
    boost::json::value output;
    std::vector<std::string> failed_expectations;
    std::size_t checked_expectations = 0;
};

/// Runs every turn. Features that are malformed are a json_error; a model that
/// runs out of scripted answers is a scenario_error.
inline replay_result run_scenario(const scenario& sc, const replay_options& options = {}) {
    seed_ids(detail::scenario_seed(sc));
    const bool temporary = options.base_dir.empty();
    const std::string base_dir = temporary ? detail::make_temp_dir() : options.base_dir;
    struct cleanup {
        std::string dir;
        ~cleanup() {
            std::error_code ec;
            if (!dir.empty()) std::filesystem::remove_all(dir, ec);
        }
    } remove_later{temporary ? base_dir : std::string()};

    // The request's switches and the model, as make_lead_agent reads them.
    const boost::json::value features(sc.features);
    const lead_agent_request request = [&] {
        try {
            return lead_agent_request::from_context(sc.context);
        } catch (const json_error& e) {
            throw e.within("context");
        }
    }();
    lead_model_entry model_entry{"scripted", false, false};
    const bool lead_scenario = sc.features.contains("models") || sc.features.contains("agent");
    if (sc.features.contains("models")) model_entry = resolve_lead_model(features, request).model;
    skills_options skill_options;
    const std::shared_ptr<const skill_catalog> skill_set =
        detail::scenario_skills(features, options.scenario_dir, skill_options);
    deerflow_pipeline middleware = [&] {
        try {
            return make_lead_chain(features, request, model_entry, skill_set);
        } catch (const json_error& e) {
            throw e.within("features");
        }
    }();
    if (auto* td = middleware.get<thread_data>()) td->options.base_dir = base_dir;
    // The replay does not sleep: its clock advances instead, and the jitter is seeded.
    auto clock = std::make_shared<manual_retry_clock>();
    if (auto* l = middleware.get<llm_error_handling>()) {
        llm_error_handling_options o = l->options();
        middleware.slot<llm_error_handling>().emplace(std::move(o), clock, 1);
    }
    if (auto* m = middleware.get<model_retry>()) {
        model_retry_options o = m->options();
        o.sleep = [clock](std::chrono::milliseconds d) { clock->sleep(d); };
        middleware.slot<model_retry>().emplace(std::move(o));
    }
    if (auto* t = middleware.get<tool_retry>()) {
        tool_retry_options o = t->options();
        o.sleep = [clock](std::chrono::milliseconds d) { clock->sleep(d); };
        middleware.slot<tool_retry>().emplace(std::move(o));
    }
    if (!sc.files.empty()) {
        const auto* td = middleware.get<thread_data>();
        if (!td) throw scenario_error("files: the scenario has files but the thread_data feature is off");
        std::string user_id = "default";
        if (const auto* u = sc.context.if_contains("user_id"); u && u->is_string()) user_id = u->get_string();
        thread_paths dirs;
        try {
            dirs = td->paths_for(sc.thread_id, user_id);
        } catch (const std::exception& e) {
            throw scenario_error(std::string("thread_id: ") + e.what());
        }
        agentware::detail::ensure_thread_dirs(dirs);
        detail::create_files(sc.files, dirs);
    }

    detail::attach_clock(middleware, sc.now);
    // Memory and dynamic_context: a manager under the scenario's base
    // directory, no background worker (each turn flushes), the scenario's
    // clock, fact ids numbered in order, and the turn's "memory" model.
    std::shared_ptr<memory_clock> memory_time = default_memory_clock();
    if (sc.now) memory_time = std::make_shared<manual_clock>(*sc.now);
    std::shared_ptr<memory_manager> memory_mgr;
    if (auto* mem = middleware.get<memory>()) {
        memory_options o = mem->manager()->options();
        o.backend_config.storage_path = base_dir;
        memory_mgr = std::make_shared<memory_manager>(
            o, memory_manager_setup{.model = {}, .clock = memory_time, .start_worker = false});
        memory_mgr->updater().set_fact_ids(
            [n = std::make_shared<int>(0)] { return fmt::format("fact_{:08}", ++*n); });
        middleware.slot<memory>().emplace(memory_mgr);
        if (auto* s = middleware.get<summarization>()) { // the preset's flush hook, to this manager
            s->before_summarization.clear();
            s->before_summarization.push_back(memory_flush_hook(memory_mgr));
        }
    }
    if (auto* dc = middleware.get<dynamic_context>()) {
        dc->manager = memory_mgr;
        dc->clock = memory_time;
    }

    detail::failing_tools failing(sc.turns);
    // Subagents (context `subagent_enabled`): the task tool over an executor
    // whose delegations run DeerFlow's subagent chain with the model the turn
    // scripts for the call (`"models": {"subagent:<call id>": [...]}`); a
    // call without one, or whose script runs out, fails as a model error does.
    auto subagent_scripts = std::make_shared<detail::subagent_scripts>();
    tool_set own_tools = failing.tools();
    std::shared_ptr<subagent_executor> executor;
    if (request.subagent_enabled) {
        subagent_executor_options eo;
        try {
            if (const auto* s = sc.features.if_contains(subagents_options::config_section);
                s && s->is_object())
                eo.config = read_subagents_section(*s);
        } catch (const json_error& e) {
            throw e.within("features");
        }
        eo.allow_bash = agentware::detail::lead_host_bash_allowed(middleware);
        eo.tools = own_tools;
        if (auto* s = middleware.get<sandbox>())
            for (auto& t : s->tools())
                eo.tools.add(t);
        eo.model_named = [](std::string_view) { return any_chat_model(scripted_model({})); };
        eo.runner = [base = make_deerflow_subagent_runner(agentware::detail::lead_chain_sections(features),
                                                          subagent_skills{skill_set, skill_options}),
                     subagent_scripts](subagent_run run) {
            run.model = subagent_scripts->model_for(run.task_id);
            return base(std::move(run));
        };
        eo.clock = subagent_scripts->clock;
        // Ledger entries carry a time: the scenario's `now`, else a fixed one
        // (2026-01-01T00:00:00Z), so that two replays print the same.
        eo.now = [t = sc.now.value_or(std::chrono::system_clock::time_point(
                      std::chrono::seconds(1'767'225'600)))] { return t; };
        executor = std::make_shared<subagent_executor>(std::move(eo));
        own_tools.add(make_task_tool(executor));
    }
    agent_options agent_opts;
    agent_opts.system_prompt = sc.system_prompt;
    // Delegations of one answer run one after the other, so their events come in a fixed order.
    if (request.subagent_enabled) agent_opts.max_parallel_tools = 1;
    // A lead-agent scenario (one that configures `models` or `agent`) gets the lead's prompt unless it sets
    // one.
    if (agent_opts.system_prompt.empty() && lead_scenario) {
        std::vector<std::string> names; // as the agent offers them: its own, then the chain's
        for (const auto& t : own_tools)
            names.push_back(t->schema().name);
        middleware.for_each_enabled([&](auto& m) {
            if constexpr (requires { m.tools(); })
                for (const auto& t : m.tools())
                    names.push_back(t->schema().name);
        });
        agent_opts.system_prompt = lead_system_prompt(make_lead_prompt_parts(
            features, request, middleware, names, executor.get(),
            skill_set ? skills_prompt_section(*skill_set, skill_options.container_path) : std::string()));
    }
    agent<scripted_model, deerflow_pipeline> a(scripted_model({}), std::move(own_tools),
                                               std::move(middleware), agent_opts);
    a.set_disabled_tool_names(sc.disabled_tool_names);
    agent<scripted_model, deerflow_pipeline>::state_type state;

    replay_result result;
    detail::stable_names names(base_dir);
    boost::json::array turns_out;
    for (std::size_t t = 0; t < sc.turns.size(); ++t) {
        const scenario_turn& turn = sc.turns[t];
        scripted_model model = scripted_model::with_failures(turn.model);
        a.model() = model; // copies share the script and the records
        clock->advance(std::chrono::milliseconds(static_cast<std::int64_t>(turn.advance_clock * 1000)));
        const auto slept_before = clock->slept();
        boost::json::array events;
        detail::helper_models helpers(turn);
        subagent_scripts->set(turn);
        detail::attach_helper_models(a.middleware(), helpers);
        failing.queue(turn.fail_next);
        run_config cfg;
        cfg.stream.on_event = [&events](const boost::json::object& e) { events.push_back(e); };
        cfg.thread_id = sc.thread_id;
        cfg.run_id = fmt::format("run-{}", t + 1);
        cfg.context = sc.context;
        cfg.context["thread_id"] = sc.thread_id;
        cfg.recursion_limit = sc.recursion_limit;
        std::optional<scripted_model> memory_model_script;
        if (memory_mgr) {
            auto it = turn.helper_models.find("memory");
            memory_model_script.emplace(scripted_model::with_failures(
                it == turn.helper_models.end() ? std::vector<scripted_step>{} : it->second));
            memory_mgr->set_model(
                [m = *memory_model_script](const chat_request& req) mutable { return m.invoke(req); });
        } else if (turn.helper_models.contains("memory")) {
            throw scenario_error(fmt::format("turns[{}].models.memory: the memory feature is off", t));
        }
        run_result r = turn.resume ? a.run(state, resume{*turn.resume}, cfg) : a.run(state, turn.input, cfg);
        // First the helpers: one that ran out may have sent its middleware on to the main model.
        for (const auto& [role, helper] : helpers.by_role)
            if (helper.requests().size() > helper.calls())
                throw scenario_error(fmt::format(
                    "turns[{}]: the {} model ran out of scripted answers after {} (the middleware asked "
                    "for one more); add the ai message it should answer with to turns[{}].models.{}",
                    t, role, helper.calls(), t, role));
        if (r.reason == stop_reason::error && model.remaining() == 0 && model.calls() == turn.model.size() &&
            r.error.find("no scripted answer left") != std::string::npos)
            throw scenario_error(
                fmt::format("turns[{}]: the model ran out of scripted answers after {} (the agent "
                            "asked for one more); add the ai message it should answer with",
                            t, turn.model.size()));
        boost::json::object turn_out;
        turn_out["stop_reason"] = to_string(r.reason);
        if (!r.error.empty()) turn_out["error"] = r.error;
        detail::put_interrupts(r, turn_out);
        if (const auto* why = r.context.if_contains("stop_reason")) turn_out["stop_detail"] = *why;
        if (const auto* usage = r.context.if_contains("token_usage")) turn_out["token_usage"] = *usage;
        boost::json::value full = boost::json::value_from(state);
        boost::json::array messages = std::move(full.as_object()["messages"].as_array());
        full.as_object().erase("messages");
        turn_out["messages"] = std::move(messages);
        turn_out["state"] = std::move(full);
        boost::json::array requests;
        for (const auto& req : model.requests())
            requests.push_back(detail::request_json(req));
        turn_out["requests"] = std::move(requests);
        if (model.remaining() > 0) turn_out["unused_model_messages"] = model.remaining();
        boost::json::object helper_out;
        for (const auto& [role, helper] : helpers.by_role) {
            if (helper.requests().empty() && helper.remaining() == 0) continue;
            boost::json::array role_requests;
            for (const auto& req : helper.requests())
                role_requests.push_back(detail::request_json(req));
            boost::json::object one{{"requests", std::move(role_requests)}};
            if (helper.remaining() > 0) one["unused_messages"] = helper.remaining();
            helper_out[role] = std::move(one);
        }
        subagent_scripts->put_requests(helper_out);
        if (!helper_out.empty()) turn_out["models"] = std::move(helper_out);
        if (memory_mgr) {
            // The debounce is not waited for: the queue is flushed after each turn.
            memory_mgr->flush(std::chrono::seconds(60));
            boost::json::array memory_errors;
            for (const auto& failure : memory_mgr->queue().take_failures()) {
                if (failure.find("no scripted answer left") != std::string::npos)
                    throw scenario_error(fmt::format(
                        "turns[{}]: the memory model ran out of scripted answers after {} (the memory worker "
                        "asked for one more); add the ai message it should answer with under models.memory",
                        t, memory_model_script->calls()));
                memory_errors.emplace_back(failure);
            }
            if (!memory_errors.empty()) turn_out["memory_errors"] = std::move(memory_errors);
            const std::string user = agentware::detail::context_user_id(&sc.context);
            try {
                turn_out["memory"] =
                    memory_mgr->read_view(user, agentware::detail::context_agent_name(sc.context));
            } catch (const std::exception& e) {
                turn_out["memory"] = boost::json::object{{"error", e.what()}};
            }
            if (memory_model_script->remaining() > 0)
                turn_out["unused_memory_model_messages"] = memory_model_script->remaining();
        }
        // And what middlewares noted in the run's context (a tool selection that fell back, ...).
        if (const auto* noted = r.context.if_contains("events"); noted && noted->is_array())
            for (const auto& e : noted->get_array())
                events.push_back(e);
        if (!events.empty()) turn_out["events"] = std::move(events);
        if (clock->slept() != slept_before) turn_out["waited_ms"] = (clock->slept() - slept_before).count();
        boost::json::value turn_value = std::move(turn_out);
        names.apply(turn_value);

        // Expectations, for scenario files that double as tests.
        const auto& e = turn.expect;
        const std::string text = boost::json::serialize(turn_value);
        auto fail = [&](std::string what) {
            result.failed_expectations.push_back(fmt::format("turns[{}]: {}", t, what));
        };
        if (e.stop_reason) {
            ++result.checked_expectations;
            if (*e.stop_reason != to_string(r.reason))
                fail(fmt::format("stop_reason is \"{}\", expected \"{}\"", to_string(r.reason),
                                 *e.stop_reason));
        }
        if (e.requests) {
            ++result.checked_expectations;
            if (*e.requests != model.calls())
                fail(fmt::format("the model received {} requests, expected {}", model.calls(), *e.requests));
        }
        for (const auto& s : e.contains) {
            ++result.checked_expectations;
            if (text.find(s) == std::string::npos) fail(fmt::format("the output lacks {}", s));
        }
        for (const auto& s : e.not_contains) {
            ++result.checked_expectations;
            if (text.find(s) != std::string::npos) fail(fmt::format("the output contains {}", s));
        }
        turns_out.push_back(std::move(turn_value));
    }
    result.output = boost::json::object{{"thread_id", sc.thread_id}, {"turns", std::move(turns_out)}};
    // The skill folders the catalog skipped, and why (a bad SKILL.md is a warning, not an error).
    if (skill_set && !skill_set->warnings.empty())
        result.output.as_object()["skill_warnings"] = boost::json::value_from(skill_set->warnings);
    return result;
}

} // namespace agentware_cli

#endif
