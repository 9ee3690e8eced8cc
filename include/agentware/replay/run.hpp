#ifndef AGENTWARE_REPLAY_RUN_HPP
#define AGENTWARE_REPLAY_RUN_HPP

// Runs a scenario through an agent with DeerFlow's runtime chain, each
// middleware in an optional slot switched on by the scenario's `features`,
// and a scripted model. The output is JSON and the same on every run: host
// paths become <base_dir> and message ids are numbered in order.

#include <agentware/agent/agent.hpp>
#include <agentware/middleware/clarification.hpp>
#include <agentware/middleware/dangling_tool_call.hpp>
#include <agentware/middleware/guardrail.hpp>
#include <agentware/middleware/loop_detection.hpp>
#include <agentware/middleware/sandbox.hpp>
#include <agentware/middleware/subagent_limit.hpp>
#include <agentware/middleware/thread_data.hpp>
#include <agentware/middleware/tool_error_handling.hpp>
#include <agentware/middleware/uploads.hpp>
#include <agentware/middleware/view_image.hpp>
#include <agentware/model/scripted_model.hpp>
#include <agentware/replay/scenario.hpp>

#include <boost/json.hpp>

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace agentware::replay {

/// DeerFlow's runtime chain, in DeerFlow's order, every middleware optional.
using replay_pipeline =
    pipeline<std::optional<thread_data>, std::optional<uploads>, std::optional<sandbox>,
             std::optional<dangling_tool_call>, std::optional<guardrail<allowlist_provider>>,
             std::optional<tool_error_handling>, std::optional<view_image>, std::optional<subagent_limit>,
             std::optional<loop_detection>, std::optional<clarification>>;

/// The feature names a scenario may use: DeerFlow's configuration sections
/// where it has one (sandbox, guardrails, subagents, loop_detection), else the
/// middleware's name.
inline constexpr std::string_view feature_names[] = {
    "thread_data",         "uploads",    "sandbox",   "dangling_tool_call", "guardrails",
    "tool_error_handling", "view_image", "subagents", "loop_detection",     "clarification"};

namespace detail {

// A feature's settings: absent or false is off; true is on with defaults; an
// object is on (unless "enabled": false) with those settings.
class feature {
public:
    feature(const boost::json::object& features, std::string_view name) : name_(name) {
        const auto* v = features.if_contains(name);
        if (!v || (v->is_bool() && !v->get_bool())) return;
        if (v->is_bool()) {
            on_ = true;
            return;
        }
        const auto* o = v->if_object();
        if (!o)
            throw scenario_error(
                fmt::format("features.{} must be true, false or an object of settings", name));
        settings_ = *o;
        on_ = true;
        if (const auto* e = o->if_contains("enabled")) {
            if (!e->is_bool())
                throw scenario_error(fmt::format("features.{}.enabled must be true or false", name));
            on_ = e->get_bool();
        }
    }
    bool on() const noexcept { return on_; }

    bool boolean(std::string_view key, bool fallback) const {
        const auto* v = settings_.if_contains(key);
        if (!v) return fallback;
        if (!v->is_bool()) throw bad(key, "true or false");
        return v->get_bool();
    }
    std::size_t count(std::string_view key, std::size_t fallback) const {
        const auto* v = settings_.if_contains(key);
        if (!v) return fallback;
        if (!v->is_int64() || v->get_int64() < 0) throw bad(key, "a whole number");
        return static_cast<std::size_t>(v->get_int64());
    }
    std::string text(std::string_view key, std::string fallback) const {
        const auto* v = settings_.if_contains(key);
        if (!v) return fallback;
        if (!v->is_string()) throw bad(key, "a string");
        return std::string(v->get_string());
    }
    std::optional<std::vector<std::string>> names(const boost::json::object& o, std::string_view key) const {
        const auto* v = o.if_contains(key);
        if (!v) return std::nullopt;
        std::vector<std::string> out;
        const auto* arr = v->if_array();
        if (!arr) throw bad(key, "an array of strings");
        for (const auto& s : *arr) {
            if (!s.is_string()) throw bad(key, "an array of strings");
            out.emplace_back(s.get_string());
        }
        return out;
    }
    const boost::json::object& settings() const noexcept { return settings_; }
    scenario_error bad(std::string_view key, std::string_view what) const {
        return scenario_error(fmt::format("features.{}.{} must be {}", name_, key, what));
    }

private:
    std::string_view name_;
    bool on_ = false;
    boost::json::object settings_;
};

inline void check_feature_names(const boost::json::object& features) {
    for (const auto& kv : features) {
        bool known = false;
        for (auto n : feature_names)
            known = known || kv.key() == n;
        if (!known) {
            std::string list;
            for (auto n : feature_names)
                list += (list.empty() ? "" : ", ") + std::string(n);
            throw scenario_error(fmt::format("features: unknown feature \"{}\" (known: {})",
                                             std::string_view(kv.key()), list));
        }
    }
}

inline replay_pipeline make_pipeline(const boost::json::object& features, const std::string& base_dir) {
    check_feature_names(features);
    replay_pipeline p;
    if (feature f(features, "thread_data"); f.on()) {
        thread_data_options o;
        o.base_dir = base_dir;
        o.lazy_init = f.boolean("lazy_init", o.lazy_init);
        p.slot<thread_data>().emplace(o);
    }
    if (feature f(features, "uploads"); f.on()) {
        uploads_options o;
        o.max_files_per_context_section =
            f.count("max_files_per_context_section", o.max_files_per_context_section);
        p.slot<uploads>().emplace(o);
    }
    if (feature f(features, "sandbox"); f.on()) {
        sandbox_options o;
        o.allow_host_bash = f.boolean("allow_host_bash", o.allow_host_bash);
        o.bash_output_max_chars = f.count("bash_output_max_chars", o.bash_output_max_chars);
        o.read_file_output_max_chars = f.count("read_file_output_max_chars", o.read_file_output_max_chars);
        o.ls_output_max_chars = f.count("ls_output_max_chars", o.ls_output_max_chars);
        o.bash_command_timeout = std::chrono::seconds(
            f.count("bash_command_timeout",
                    static_cast<std::size_t>(
                        std::chrono::duration_cast<std::chrono::seconds>(o.bash_command_timeout).count())));
        p.slot<sandbox>().emplace(o);
    }
    if (feature f(features, "dangling_tool_call"); f.on())
        p.slot<dangling_tool_call>().emplace(dangling_tool_call_options{});
    if (feature f(features, "guardrails"); f.on()) {
        guardrail_options o;
        o.fail_closed = f.boolean("fail_closed", o.fail_closed);
        o.passport = f.text("passport", o.passport);
        allowlist_provider provider;
        if (const auto* pv = f.settings().if_contains("provider")) {
            const auto* po = pv->if_object();
            if (!po) throw f.bad("provider", "an object");
            boost::json::object config;
            if (const auto* c = po->if_contains("config")) {
                if (!c->is_object()) throw f.bad("provider.config", "an object");
                config = c->get_object();
            }
            provider.allowed_tools = f.names(config, "allowed_tools");
            provider.denied_tools = f.names(config, "denied_tools").value_or(std::vector<std::string>{});
        }
        p.slot<guardrail<allowlist_provider>>().emplace(std::move(provider), o);
    }
    if (feature f(features, "tool_error_handling"); f.on())
        p.slot<tool_error_handling>().emplace(tool_error_handling_options{});
    if (feature f(features, "view_image"); f.on()) {
        view_image_options o;
        o.supports_vision = f.boolean("supports_vision", o.supports_vision);
        o.max_image_bytes = f.count("max_image_bytes", static_cast<std::size_t>(o.max_image_bytes));
        p.slot<view_image>().emplace(o);
    }
    if (feature f(features, "subagents"); f.on()) {
        subagent_limit_options o;
        o.max_total = f.count("max_total_per_run", o.max_total);
        o.max_concurrent = f.count("max_concurrent", o.max_concurrent);
        o.max_concurrent_ceiling = f.count("max_concurrent_ceiling", o.max_concurrent_ceiling);
        o.max_total_ceiling = f.count("max_total_ceiling", o.max_total_ceiling);
        p.slot<subagent_limit>().emplace(o);
    }
    if (feature f(features, "loop_detection"); f.on()) {
        loop_detection_options o;
        o.warn_threshold = f.count("warn_threshold", o.warn_threshold);
        o.hard_limit = f.count("hard_limit", o.hard_limit);
        o.window_size = f.count("window_size", o.window_size);
        o.max_tracked_threads = f.count("max_tracked_threads", o.max_tracked_threads);
        o.tool_freq_warn = f.count("tool_freq_warn", o.tool_freq_warn);
        o.tool_freq_hard_limit = f.count("tool_freq_hard_limit", o.tool_freq_hard_limit);
        if (auto b = f.names(f.settings(), "batch_friendly_tools")) o.batch_friendly_tools = *b;
        if (const auto* ov = f.settings().if_contains("tool_freq_overrides")) {
            const auto* oo = ov->if_object();
            if (!oo)
                throw f.bad("tool_freq_overrides", "an object of {\"warn\", \"hard_limit\"} by tool name");
            for (const auto& kv : *oo) {
                feature limit(*oo, kv.key());
                tool_frequency_limit l;
                l.warn = limit.count("warn", o.tool_freq_warn);
                l.hard_limit = limit.count("hard_limit", o.tool_freq_hard_limit);
                o.tool_freq_overrides.emplace(std::string(kv.key()), l);
            }
        }
        try {
            o.validate();
        } catch (const std::invalid_argument& e) {
            throw scenario_error(std::string("features.loop_detection: ") + e.what());
        }
        p.slot<loop_detection>().emplace(o);
    }
    if (feature f(features, "clarification"); f.on())
        p.slot<clarification>().emplace(clarification_options{});
    return p;
}

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

// Makes the output the same on every run.
class stable_names {
public:
    explicit stable_names(std::string base_dir) : base_dir_(std::move(base_dir)) {}

    void apply(boost::json::value& v) {
        if (auto* o = v.if_object()) {
            if (auto* id = o->if_contains("id"); id && id->is_string() && o->contains("role"))
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

inline boost::json::value request_json(const recorded_request& r) {
    boost::json::array msgs;
    if (!r.system_prompt.empty())
        msgs.push_back(boost::json::object{{"role", "system"}, {"content", r.system_prompt}});
    for (const auto& m : r.messages)
        msgs.push_back(to_openai_wire(m));
    boost::json::array tools;
    for (const auto& t : r.tool_names)
        tools.emplace_back(t);
    return boost::json::object{{"messages", std::move(msgs)}, {"tools", std::move(tools)}};
}

} // namespace detail

/// Where a replay keeps the thread's directories, and whether it removes them.
struct replay_options {
    std::string base_dir; ///< empty: a fresh temporary directory, removed afterwards
};

/// The result of a replay: the output JSON, and the expectations that failed.
struct replay_result {
    boost::json::value output;
    std::vector<std::string> failed_expectations;
    std::size_t checked_expectations = 0;
};

/// Runs every turn. A scenario that is malformed, or whose model runs out of
/// scripted answers, is a scenario_error.
inline replay_result run_scenario(const scenario& sc, const replay_options& options = {}) {
    const bool temporary = options.base_dir.empty();
    const std::string base_dir = temporary ? detail::make_temp_dir() : options.base_dir;
    struct cleanup {
        std::string dir;
        ~cleanup() {
            std::error_code ec;
            if (!dir.empty()) std::filesystem::remove_all(dir, ec);
        }
    } remove_later{temporary ? base_dir : std::string()};

    replay_pipeline middleware = detail::make_pipeline(sc.features, base_dir);
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

    agent_options agent_opts;
    agent_opts.system_prompt = sc.system_prompt;
    agent<scripted_model, replay_pipeline> a(scripted_model({}), tool_set{}, std::move(middleware),
                                             agent_opts);
    agent<scripted_model, replay_pipeline>::state_type state;

    replay_result result;
    detail::stable_names names(base_dir);
    boost::json::array turns_out;
    for (std::size_t t = 0; t < sc.turns.size(); ++t) {
        const scenario_turn& turn = sc.turns[t];
        scripted_model model(turn.model);
        a.model() = model; // copies share the script and the records
        run_config cfg;
        cfg.thread_id = sc.thread_id;
        cfg.run_id = fmt::format("run-{}", t + 1);
        cfg.context = sc.context;
        cfg.context["thread_id"] = sc.thread_id;
        cfg.recursion_limit = sc.recursion_limit;
        run_result r = a.run(state, turn.input, cfg);
        if (r.reason == stop_reason::error && model.remaining() == 0 && model.calls() == turn.model.size() &&
            r.error.find("no scripted answer left") != std::string::npos)
            throw scenario_error(
                fmt::format("turns[{}]: the model ran out of scripted answers after {} (the agent "
                            "asked for one more); add the ai message it should answer with",
                            t, turn.model.size()));

        boost::json::object turn_out;
        turn_out["stop_reason"] = to_string(r.reason);
        if (!r.error.empty()) turn_out["error"] = r.error;
        if (const auto* why = r.context.if_contains("stop_reason")) turn_out["stop_detail"] = *why;
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
    return result;
}

} // namespace agentware::replay

#endif
