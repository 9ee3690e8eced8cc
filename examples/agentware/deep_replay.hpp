#ifndef AGENTWARE_EXAMPLES_AGENTWARE_DEEP_REPLAY_HPP
#define AGENTWARE_EXAMPLES_AGENTWARE_DEEP_REPLAY_HPP

// The replay's deep-agent mode (`"agent": "deep"`): the chain make_deep_agent
// builds, around the scripted model. The scenario chooses the backend
// (`"backend": "state"` or `{"type": "filesystem", "root_dir": ...,
// "virtual_mode": true}`, a relative root being under the replay's base
// directory), seeds the state backend (`files_state`, oldest first), and
// gives permission rules (`permissions`), LangChain's `interrupt_on` and the
// Swift tool policy (`policy`); `features` holds the sections `filesystem`,
// `human_in_the_loop`, `deep_subagents`, `todo` (no task tool unless
// `deep_subagents` is given) and `summarization` (on with deepagents'
// settings unless given; its keys override them, the summary coming from the
// turn's scripted model). Each turn's output has the state backend's
// files under `state.files`, their times shown as <timestamp>, and an
// interrupted turn's payloads under `interrupts`.

#include "replay_runner.hpp"

#include <agentware/filesystem/disk_backend.hpp>
#include <agentware/presets/deep_agent.hpp>

#include <boost/json.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <string>

namespace agentware_cli {

namespace detail {

inline deep_agent_options make_deep_options(const scenario& sc, const std::string& base_dir) {
    deep_agent_options o;
    o.subagents.reset();
    o.system_prompt = sc.system_prompt;
    for (const auto& [key, value] : sc.features) {
        const std::string at = "features." + std::string(key);
        if (key == "filesystem")
            o.filesystem = json_read_as<filesystem_options>(value, at);
        else if (key == "human_in_the_loop")
            o.human_in_the_loop = json_read_as<human_in_the_loop_options>(value, at);
        else if (key == "deep_subagents")
            o.subagents = json_read_as<deep_subagents_options>(value, at);
        else if (key == "todo")
            o.todo = json_read_as<todo_list_options>(value, at);
        else if (key == "summarization")
            o.summarization = deep_summarization_from_json(value, at);
        else
            throw json_error(at, "the deep agent takes the sections filesystem, human_in_the_loop, "
                                 "deep_subagents, todo and summarization");
    }
    if (!sc.permissions.is_null())
        o.filesystem.permissions = json_read_as<std::vector<fs_permission>>(sc.permissions, "permissions");
    if (!sc.policy.is_null()) o.policy = json_read_as<tool_policy>(sc.policy, "policy");
    if (sc.backend.is_string() && sc.backend.get_string() == "state") return o;
    json_reader r(sc.backend, "backend");
    const auto type = r.required<std::string>("type");
    if (type == "state") {
        r.reject_unknown_keys();
        return o;
    }
    if (type != "filesystem") throw json_error("backend.type", "expected \"state\" or \"filesystem\"");
    disk_backend_options d;
    d.root_dir = "files";
    r.read("root_dir", d.root_dir)
        .read("virtual_mode", d.virtual_mode)
        .read("max_file_size_mb", d.max_file_size_mb);
    r.reject_unknown_keys();
    std::filesystem::path root(d.root_dir);
    if (root.is_relative()) root = std::filesystem::path(base_dir) / root;
    std::filesystem::create_directories(root);
    d.root_dir = root.string();
    o.backend = [b = any_backend(disk_backend(d))](const tool_runtime&) { return b; };
    return o;
}

inline void hide_file_times(boost::json::value& state) {
    auto* files = state.as_object().if_contains("files");
    if (!files || !files->is_object()) return;
    for (auto& [path, data] : files->get_object())
        if (auto* o = data.if_object())
            for (const char* key : {"created_at", "modified_at"})
                if (o->contains(key)) (*o)[key] = "<timestamp>";
}

} // namespace detail

/// Runs a scenario whose `agent` is "deep".
inline replay_result run_deep_scenario(const scenario& sc, const replay_options& options = {}) {
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
    if (!sc.files.empty()) throw scenario_error("files: the deep agent's files are given as files_state");

    deep_agent_options deep_options = detail::make_deep_options(sc, base_dir);
    // The offloaded history's headings carry a time: the scenario's `now`, else
    // a fixed one (2026-01-01T00:00:00Z), so that two replays print the same.
    deep_options.history_clock = [t = sc.now.value_or(std::chrono::system_clock::time_point(
                                      std::chrono::seconds(1'767'225'600)))] { return t; };
    // Each delegation's model is the one the turn scripts for its task call
    // (`"models": {"subagent:<call id>": [...]}`); a call without one fails as
    // a model error does.
    auto subagent_scripts = std::make_shared<detail::subagent_scripts>();
    if (deep_options.subagents)
        deep_options.subagents->model_for_run = [subagent_scripts](const subagent_run& run) {
            return subagent_scripts->model_for(run.task_id);
        };
    auto a = make_deep_agent(scripted_model({}), tool_set{}, std::move(deep_options));
    // One call at a time: the order of a round's results is the same on every run.
    a.options().max_parallel_tools = 1;
    decltype(a)::state_type state;
    // Seeded files, oldest first: their times order them for glob.
    for (std::size_t i = 0; i < sc.files_state.size(); ++i) {
        const auto& [raw, content] = sc.files_state[i];
        path_check p = validate_path(raw);
        if (!p) throw scenario_error(fmt::format("files_state.{}: {}", raw, p.error));
        const std::string at = fmt::format("2026-01-01T00:00:00.{:06d}+00:00", i);
        get<files_field>(state)[p.path] = file_data{content, "utf-8", at, at};
    }

    replay_result result;
    detail::stable_names names(base_dir);
    boost::json::array turns_out;
    for (std::size_t t = 0; t < sc.turns.size(); ++t) {
        const scenario_turn& turn = sc.turns[t];
        for (const auto& [role, steps] : turn.helper_models)
            if (!role.starts_with("subagent:"))
                throw scenario_error(
                    fmt::format("turns[{}].models.{}: the deep agent's only helper models are its subagents' "
                                "(subagent:<task call id>)",
                                t, role));
        if (!turn.fail_next.empty())
            throw scenario_error(fmt::format("turns[{}]: fail_next is not used by the deep agent", t));
        subagent_scripts->set(turn);
        scripted_model model = scripted_model::with_failures(turn.model);
        a.model() = model;
        run_config cfg;
        cfg.thread_id = sc.thread_id;
        cfg.run_id = fmt::format("run-{}", t + 1);
        cfg.context = sc.context;
        cfg.context["thread_id"] = sc.thread_id;
        cfg.recursion_limit = sc.recursion_limit;
        run_result r = turn.resume ? a.run(state, resume{*turn.resume}, cfg) : a.run(state, turn.input, cfg);
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
        boost::json::value full = boost::json::value_from(state);
        boost::json::array messages = std::move(full.as_object()["messages"].as_array());
        full.as_object().erase("messages");
        detail::hide_file_times(full);
        turn_out["messages"] = std::move(messages);
        turn_out["state"] = std::move(full);
        boost::json::array requests;
        for (const auto& req : model.requests())
            requests.push_back(detail::request_json(req));
        turn_out["requests"] = std::move(requests);
        if (model.remaining() > 0) turn_out["unused_model_messages"] = model.remaining();
        boost::json::object subagent_models;
        subagent_scripts->put_requests(subagent_models);
        if (!subagent_models.empty()) turn_out["models"] = std::move(subagent_models);
        boost::json::value turn_value = std::move(turn_out);
        names.apply(turn_value);

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

} // namespace agentware_cli

#endif
