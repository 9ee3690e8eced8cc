#ifndef AGENTWARE_EXAMPLES_AGENTWARE_RUN_COMMAND_HPP
#define AGENTWARE_EXAMPLES_AGENTWARE_RUN_COMMAND_HPP

// `agentware run`: DeerFlow's lead agent in the terminal (docs/run.md). The
// agent is make_lead_agent's, from DeerFlow's config.yaml (or a JSON file of
// the same sections); the answer streams to stdout, tool calls, their results
// and the subagents' progress go to stderr one line each. A question the
// agent asks (ask_clarification) is put to the user, whose answer continues
// the thread. Threads are kept in a file checkpointer (--thread resumes
// one). Ctrl-C stops the run in progress; the thread keeps its messages.

#include "replay_runner.hpp"
#include "scenario.hpp"

#include <agentware/agent/file_checkpointer.hpp>
#include <agentware/config/yaml.hpp>
#include <agentware/mcp/config.hpp>
#include <agentware/mcp/tools.hpp>
#include <agentware/middleware/deerflow_web_tools.hpp>
#include <agentware/middleware/skills_from_folders.hpp>
#include <agentware/model/model_factory.hpp>
#include <agentware/presets/lead_agent.hpp>

#include <boost/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <pthread.h>

namespace agentware_cli {

inline constexpr std::string_view run_usage = R"(usage: agentware run [options] [prompt...]

Runs DeerFlow's lead agent (make_lead_agent) with its whole middleware chain.
With a prompt: one turn; without one: an interactive session (one line per
message; an empty line or end of input ends it). The answer streams to
stdout; tool calls and results, subagents' progress and warnings go to
stderr. When the agent asks a question, type the answer.

options:
  -c, --config FILE     DeerFlow's config.yaml, or a JSON file of the same sections
                        (default: $AGENTWARE_CONFIG, else ./config.yaml, else the
                        model of the environment: AGENTWARE_MODEL, OPENAI_BASE_URL,
                        OPENAI_API_KEY)
      --extensions FILE DeerFlow's extensions_config.json (MCP servers, skills on/off;
                        default: extensions_config.json beside the config, if any)
  -t, --thread ID       the thread to continue (default: a new one, named on stderr)
      --threads-dir DIR where threads are kept (default: .agentware/threads)
  -m, --model NAME      a configured model (default: the agent's, else the first)
      --thinking        thinking on (the model must support it)
      --plan            plan mode (write_todos)
      --no-subagents    no `task` tool
      --subagents WHICH whose streamed text is shown: all (default), none, or a
                        comma list of subagent types (general-purpose,bash,...)
      --script FILE     offline: the model answers from FILE, {"model": [...],
                        "models": {"subagent:<task call id>": [...], "title": [...]}}
                        (the replay format's model lists)
  -h, --help            this text
)";

struct run_options {
    std::string config;
    std::string extensions;
    std::string thread;
    std::string threads_dir = ".agentware/threads";
    std::string model;
    std::string script;
    bool thinking = false;
    bool plan = false;
    bool subagents = true;
    agentware::subagent_stream_filter subagent_streams;
    std::vector<std::string> words;
};

struct run_usage_error {
    std::string what;
};

// --subagents: all, none, or the subagent types whose streams are shown.
inline agentware::subagent_stream_filter parse_subagent_streams(std::string_view text) {
    if (text == "all") return agentware::subagent_stream_filter::all();
    if (text == "none") return agentware::subagent_stream_filter::none();
    std::vector<std::string> types;
    for (std::size_t at = 0; at <= text.size();) {
        const auto comma = std::min(text.find(',', at), text.size());
        if (comma == at) throw run_usage_error{fmt::format("--subagents: an empty name in \"{}\"", text)};
        types.emplace_back(text.substr(at, comma - at));
        at = comma + 1;
    }
    return agentware::subagent_stream_filter::only(std::move(types));
}

inline run_options parse_run_options(const std::vector<std::string>& args) {
    run_options o;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= args.size()) throw run_usage_error{fmt::format("{} needs a value", a)};
            return args[++i];
        };
        if (a == "-h" || a == "--help")
            throw run_usage_error{};
        else if (a == "-c" || a == "--config")
            o.config = value();
        else if (a == "--extensions")
            o.extensions = value();
        else if (a == "-t" || a == "--thread")
            o.thread = value();
        else if (a == "--threads-dir")
            o.threads_dir = value();
        else if (a == "-m" || a == "--model")
            o.model = value();
        else if (a == "--script")
            o.script = value();
        else if (a == "--thinking")
            o.thinking = true;
        else if (a == "--plan")
            o.plan = true;
        else if (a == "--no-subagents")
            o.subagents = false;
        else if (a == "--subagents")
            o.subagent_streams = parse_subagent_streams(value());
        else if (a == "--") {
            o.words.insert(o.words.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
            break;
        } else if (a.size() > 1 && a.front() == '-')
            throw run_usage_error{fmt::format("unknown option \"{}\"", a)};
        else
            o.words.push_back(a);
    }
    return o;
}

namespace detail {

inline std::string one_line(std::string_view text, std::size_t max) {
    std::string out;
    for (char c : text) {
        if (out.size() >= max) {
            out += "...";
            break;
        }
        out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    }
    return out;
}

// The configuration's sections: DeerFlow's config.yaml, or JSON; without a
// file, the environment's model and a small chain.
inline boost::json::object load_run_sections(const run_options& o, std::string& config_path) {
    config_path = o.config;
    if (config_path.empty())
        if (const char* env = std::getenv("AGENTWARE_CONFIG"); env && *env) config_path = env;
    if (config_path.empty() && std::filesystem::exists("config.yaml")) config_path = "config.yaml";
    auto warn = [](std::string_view line) { std::fprintf(stderr, "%.*s\n", int(line.size()), line.data()); };
    if (!config_path.empty()) {
        if (config_path.ends_with(".json")) {
            std::ifstream in(config_path, std::ios::binary);
            if (!in) throw std::runtime_error(fmt::format("cannot read {}", config_path));
            const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            boost::system::error_code ec;
            const boost::json::value v = boost::json::parse(text, ec);
            if (ec)
                throw std::runtime_error(fmt::format("{}: not valid JSON: {}", config_path, ec.message()));
            return agentware::read_deerflow_config(v, warn).sections;
        }
        return agentware::load_deerflow_config(config_path, {}, warn).sections;
    }
    boost::json::object sections{{"thread_data", true},        {"sandbox", true},
                                 {"dangling_tool_call", true}, {"tool_error_handling", true},
                                 {"loop_detection", true},     {"clarification", true}};
    if (!o.script.empty()) {
        sections["models"] =
            boost::json::array{boost::json::object{{"name", "scripted"}, {"model", "scripted"}}};
        return sections;
    }
    const char* model = std::getenv("AGENTWARE_MODEL");
    if (model == nullptr || *model == '\0')
        throw std::runtime_error(
            "no configuration: give --config FILE (DeerFlow's config.yaml), set "
            "AGENTWARE_CONFIG, or set AGENTWARE_MODEL (with OPENAI_BASE_URL and OPENAI_API_KEY)");
    boost::json::object entry{{"name", model}, {"provider", "openai"}, {"model", model}};
    if (const char* url = std::getenv("OPENAI_BASE_URL"); url && *url) entry["base_url"] = url;
    const char* key = std::getenv("OPENAI_API_KEY");
    entry["api_key_env"] = key && *key ? "OPENAI_API_KEY" : "";
    sections["models"] = boost::json::array{std::move(entry)};
    return sections;
}

// The offline model: the script's lead answers, and its helper and subagent lists.
struct run_script {
    agentware::scripted_model lead{std::vector<agentware::message>{}};
    scenario_turn helpers; // helper_models only
    std::shared_ptr<subagent_scripts> subagents = std::make_shared<subagent_scripts>();
};

inline std::unique_ptr<run_script> load_run_script(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error(fmt::format("cannot read {}", file));
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    boost::system::error_code ec;
    const boost::json::value v = boost::json::parse(text, ec);
    if (ec) throw std::runtime_error(fmt::format("{}: not valid JSON: {}", file, ec.message()));
    // The replay's turn format, less the input: {"model": [...], "models": {...}}.
    boost::json::object turn;
    if (const auto* o = v.if_object()) turn = *o;
    // An answer's "delay_ms" (serve's slow model) travels in its metadata.
    if (auto* answers = turn.contains("model") ? turn["model"].if_array() : nullptr)
        for (auto& a : *answers)
            if (auto* ao = a.if_object(); ao && ao->contains("delay_ms")) {
                // Moved out first: object::operator[] may rehash (even for a key it
                // has), which would leave a reference into the old table dangling.
                boost::json::value delay = std::move(ao->at("delay_ms"));
                ao->erase("delay_ms");
                auto* metadata = ao->contains("metadata") ? ao->at("metadata").if_object() : nullptr;
                if (!metadata) metadata = &(*ao)["metadata"].emplace_object();
                (*metadata)["delay_ms"] = std::move(delay);
            }
    turn["input"] = "";
    scenario_turn t;
    try {
        t = read_turn(turn, "");
    } catch (const agentware::json_error& e) {
        throw std::runtime_error(fmt::format("{}: {}", file, e.what()));
    }
    auto out = std::make_unique<run_script>();
    out->lead = agentware::scripted_model::with_failures(t.model);
    out->subagents->set(t);
    std::erase_if(t.helper_models, [](const auto& kv) { return kv.first.starts_with("subagent:"); });
    out->helpers = std::move(t);
    return out;
}

inline std::string new_thread_id() {
    std::random_device rd;
    return fmt::format("run-{:08x}", rd());
}

// Ctrl-C: SIGINT is blocked in every thread and taken by one that waits for
// it; during a run it stops the run (and its model call), otherwise it ends
// the program (the thread was saved after the last run).
class interrupt_watch {
public:
    interrupt_watch() {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGUSR1);
        pthread_sigmask(SIG_BLOCK, &set, nullptr);
        thread_ = std::thread([this, set] {
            for (;;) {
                int sig = 0;
                if (sigwait(&set, &sig) != 0) continue;
                std::lock_guard lock(mutex_);
                if (done_) return;
                if (sig != SIGINT) continue;
                if (!running_) {
                    std::fputs("\n", stderr);
                    std::_Exit(130);
                }
                std::fputs("\n[interrupted: stopping the run]\n", stderr);
                stop_.request_stop();
                if (cancel_) cancel_();
            }
        });
    }
    ~interrupt_watch() {
        {
            std::lock_guard lock(mutex_);
            done_ = true;
        }
        pthread_kill(thread_.native_handle(), SIGUSR1);
        thread_.join();
    }
    /// A run starts: its stop token, and what cancels its model call.
    std::stop_token begin(std::function<void()> cancel) {
        std::lock_guard lock(mutex_);
        stop_ = std::stop_source();
        cancel_ = std::move(cancel);
        running_ = true;
        return stop_.get_token();
    }
    bool end() {
        std::lock_guard lock(mutex_);
        running_ = false;
        cancel_ = nullptr;
        return stop_.stop_requested();
    }

private:
    std::mutex mutex_;
    std::stop_source stop_;
    std::function<void()> cancel_;
    bool running_ = false;
    bool done_ = false;
    std::thread thread_;
};

// What the terminal shows of a run.
class run_printer {
public:
    void text(std::string_view delta) {
        std::lock_guard lock(mutex_);
        std::fwrite(delta.data(), 1, delta.size(), stdout);
        std::fflush(stdout);
        if (!delta.empty()) at_line_start_ = delta.back() == '\n';
    }
    void line(const std::string& s) {
        std::lock_guard lock(mutex_);
        if (!at_line_start_) {
            std::fputc('\n', stdout);
            at_line_start_ = true;
        }
        std::fflush(stdout);
        std::fprintf(stderr, "%s\n", s.c_str());
        std::fflush(stderr);
    }
    void update(const agentware::agent_update& u) {
        if (u.node == "model") {
            std::lock_guard lock(mutex_);
            for (const auto& m : u.messages)
                for (const auto& c : m.tool_calls)
                    calls_[c.id] = c.name + "(" + one_line(boost::json::serialize(c.args), 120) + ")";
            return;
        }
        for (const auto& m : u.messages) {
            if (!m.is_tool()) continue;
            std::string call;
            {
                std::lock_guard lock(mutex_);
                auto it = calls_.find(std::string(m.tool_call_id()));
                call = it != calls_.end() ? it->second : m.name;
            }
            line(fmt::format("  [tool] {} -> {}{}", call, m.is_error() ? "(error) " : "",
                             one_line(m.text(), 160)));
        }
    }
    void event(const boost::json::object& e) {
        auto str = [&](std::string_view key) -> std::string {
            const auto* v = e.if_contains(key);
            if (!v) return {};
            return v->is_string() ? std::string(v->get_string()) : boost::json::serialize(*v);
        };
        const std::string type = str("type");
        const std::string task = str("task_id");
        if (type == "subagent_token") {
            stream_subagent(task, str("text"));
            return;
        }
        if (type.starts_with("task_")) flush_subagent(task);
        if (type == "task_started")
            line(fmt::format("  [subagent {}] started: {}", task, str("description")));
        else if (type == "task_running") {
            // A step: its text was shown as it streamed; else it is shown here.
            bool streamed = false;
            {
                std::lock_guard lock(mutex_);
                streamed = std::exchange(subagents_[task].streamed, false);
            }
            std::string what;
            if (const auto* m = e.if_contains("message"); m && m->is_object()) {
                const auto& o = m->get_object();
                if (const auto* c = o.if_contains("content"); c && c->is_string() && !streamed)
                    what = c->get_string();
                if (const auto* t = o.if_contains("tool_calls");
                    t && t->is_array() && !t->get_array().empty())
                    what += (what.empty() ? "" : " ") + std::string("(calls tools)");
            }
            if (!what.empty()) line(fmt::format("  [subagent {}] working: {}", task, one_line(what, 120)));
        } else if (type == "task_completed")
            line(fmt::format("  [subagent {}] completed: {}", task, one_line(str("result"), 160)));
        else if (type.starts_with("task_"))
            line(fmt::format("  [subagent {}] {}: {}", task, type.substr(5), one_line(str("error"), 160)));
        else if (type == "subagent_reasoning" || type == "subagent_event")
            return; // its thinking, and its own chain's events: not shown
        else if (!type.empty())
            line(fmt::format("  [{}]", type));
    }
    void end_turn() {
        std::lock_guard lock(mutex_);
        if (!at_line_start_) std::fputc('\n', stdout);
        at_line_start_ = true;
        std::fflush(stdout);
    }

private:
    // A subagent's streamed text, shown a line at a time under its task id
    // (delegations run side by side: their tokens interleave).
    struct subagent_text {
        std::string pending;   ///< the line not yet ended
        bool streamed = false; ///< text arrived since its last step
    };

    void stream_subagent(const std::string& task, std::string_view text) {
        std::vector<std::string> lines;
        {
            std::lock_guard lock(mutex_);
            auto& s = subagents_[task];
            s.streamed = s.streamed || !text.empty();
            s.pending += text;
            for (auto nl = s.pending.find('\n'); nl != std::string::npos; nl = s.pending.find('\n')) {
                lines.push_back(s.pending.substr(0, nl));
                s.pending.erase(0, nl + 1);
            }
        }
        for (const auto& l : lines)
            line(fmt::format("  [subagent {}] {}", task, l));
    }
    void flush_subagent(const std::string& task) {
        std::string rest;
        {
            std::lock_guard lock(mutex_);
            auto it = subagents_.find(task);
            if (it == subagents_.end()) return;
            rest = std::exchange(it->second.pending, {});
        }
        if (!rest.empty()) line(fmt::format("  [subagent {}] {}", task, rest));
    }

    std::mutex mutex_;
    std::map<std::string, std::string> calls_;
    std::map<std::string, subagent_text> subagents_;
    bool at_line_start_ = true;
};

// The question of a run that ended with ask_clarification, if it did.
template <class State>
std::optional<std::string> clarification_question(const State& state) {
    if (state.messages.empty()) return std::nullopt;
    const auto& last = state.messages.back();
    if (!last.is_tool() || last.name != "ask_clarification") return std::nullopt;
    return last.text();
}

} // namespace detail

// What every lead agent of a program shares: the configuration's sections,
// the models (or the script), the MCP servers, the skills and the helper
// models. Made once, on the heap (the setup's callbacks point into it), by
// `agentware run` and by `agentware serve`, which makes a lead agent per run.
struct lead_environment {
    boost::json::object sections;
    std::string config_path;
    boost::json::value config;
    std::string extensions_path; ///< extensions_config.json as found, or "" (none)
    std::optional<agentware::skills_options>
        skills; ///< the `skills` section, its path resolved; unset: no skills
    std::unique_ptr<detail::run_script> script;
    std::optional<agentware::model_registry> registry;
    std::optional<agentware::mcp::mcp_toolkit> mcp_kit;
    std::optional<detail::helper_models> helpers;
    agentware::lead_agent_setup setup;

    lead_environment() = default;
    lead_environment(const lead_environment&) = delete;
    lead_environment& operator=(const lead_environment&) = delete;
    ~lead_environment() {
        if (mcp_kit) mcp_kit->close();
    }
};

/// The lead agent's environment from the command line's options. `wrap_script`
/// turns the scripted model into the one the agents use (serve paces it).
inline std::unique_ptr<lead_environment>
make_lead_environment(const run_options& o,
                      std::function<agentware::any_chat_model(agentware::scripted_model)> wrap_script = {}) {
    using namespace agentware;
    auto env = std::make_unique<lead_environment>();
    env->sections = detail::load_run_sections(o, env->config_path);
    const std::string& config_path = env->config_path;
    boost::json::object& sections = env->sections;

    if (!o.script.empty()) env->script = detail::load_run_script(o.script);
    auto& script = env->script;

    lead_agent_setup& setup = env->setup;
    setup.tool_factories = deerflow_community_tools(); // the `use:` names of DeerFlow's web tools
    if (script) {
        if (!wrap_script) wrap_script = [](scripted_model m) { return any_chat_model(std::move(m)); };
        setup.model_factory = [lead = script->lead, wrap_script](std::string_view, bool) {
            return wrap_script(lead);
        };
        // Each delegation's model is the script's list for its task call id, as in the replay.
        setup.subagent_runner_override =
            [base = make_deerflow_subagent_runner(agentware::detail::lead_chain_sections(sections)),
             scripts = script->subagents](subagent_run run) {
                run.model = any_chat_model(scripts->model_for(run.task_id));
                return base(std::move(run));
            };
    } else {
        boost::json::object models{
            {"models", sections.contains("models") ? sections.at("models") : boost::json::array{}}};
        env->registry = model_registry::from_json(models);
        setup.model_factory = [registry = &*env->registry](std::string_view name, bool thinking) {
            return registry->create_chat_model(name, thinking);
        };
    }

    // extensions_config.json: the skills' on/off switches and the MCP servers.
    std::string extensions = o.extensions;
    if (extensions.empty())
        if (const char* e = std::getenv("DEER_FLOW_EXTENSIONS_CONFIG_PATH"); e && *e) extensions = e;
    if (extensions.empty() && !config_path.empty()) {
        auto beside = std::filesystem::path(config_path).parent_path() / "extensions_config.json";
        if (std::filesystem::exists(beside)) extensions = beside.string();
    }
    env->extensions_path = extensions;
    boost::json::value extensions_doc;
    if (!extensions.empty()) {
        std::ifstream in(extensions, std::ios::binary);
        if (!in) throw std::runtime_error(fmt::format("cannot read {}", extensions));
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        boost::system::error_code ec;
        extensions_doc = boost::json::parse(text, ec);
        if (ec) throw std::runtime_error(fmt::format("{}: not valid JSON: {}", extensions, ec.message()));
        auto servers = mcp::read_extensions_config(extensions_doc);
        if (std::any_of(servers.begin(), servers.end(), [](const auto& s) { return s.enabled; })) {
            env->mcp_kit.emplace(servers);
            setup.mcp_tools = [kit = &*env->mcp_kit] { return kit->tools(); };
        }
    }
    if (const auto* s = sections.if_contains("skills"); s && !s->is_null()) {
        skills_options so = json_read_as<skills_options>(*s, "skills");
        // DeerFlow's skills.path is relative to the configuration file's folder.
        if (!config_path.empty() && std::filesystem::path(so.path).is_relative())
            so.path =
                (std::filesystem::path(config_path).parent_path() / so.path).lexically_normal().string();
        env->skills = so;
        auto catalog = load_skills(so, read_skill_states(extensions_doc));
        for (const auto& w : catalog.warnings)
            std::fprintf(stderr, "agentware: skills: %s\n", w.c_str());
        setup.skills = std::make_shared<const skill_catalog>(std::move(catalog));
    }

    env->config = boost::json::value(sections);
    // A scripted run's helpers answer from the script (memory's worker too:
    // from the lead's script it would take the lead's answers).
    if (script) {
        env->helpers.emplace(script->helpers);
        setup.attach_helpers = [helpers = &*env->helpers, script = script.get()](deerflow_pipeline& chain) {
            detail::attach_helper_models(chain, *helpers);
            if (auto* m = chain.get<memory>()) {
                const auto it = script->helpers.helper_models.find("memory");
                auto worker = scripted_model::with_failures(
                    it == script->helpers.helper_models.end() ? std::vector<scripted_step>{} : it->second);
                m->manager()->set_model([worker](const chat_request& r) mutable { return worker.invoke(r); });
            }
        };
    }
    return env;
}

inline int run_lead(const run_options& o) {
    using namespace agentware;
    lead_agent_request request;
    request.is_plan_mode = o.plan;
    request.subagent_enabled = o.subagents;
    request.thinking_enabled = o.thinking;
    if (!o.model.empty()) request.model_name = o.model;

    auto env = make_lead_environment(o);
    const boost::json::value& config = env->config;
    const lead_agent_setup& setup = env->setup;
    lead_agent la = make_lead_agent(config, request, setup);
    for (const auto& w : la.warnings)
        std::fprintf(stderr, "agentware: warning: %s\n", w.c_str());
    std::fprintf(stderr, "agentware: tools: %s\n", fmt::format("{}", fmt::join(la.tool_names, ", ")).c_str());
    std::filesystem::create_directories(o.threads_dir);
    la.agent->use_checkpointer(file_checkpointer(o.threads_dir));

    const std::string thread = o.thread.empty() ? detail::new_thread_id() : o.thread;
    validate_thread_id(thread);
    if (o.thread.empty())
        std::fprintf(stderr, "agentware: thread %s (continue it with --thread %s)\n", thread.c_str(),
                     thread.c_str());

    detail::interrupt_watch watch;
    detail::run_printer out;
    const bool interactive = o.words.empty();
    auto read_line = [&](const char* prompt, std::string& line) {
        std::fputs(prompt, stderr);
        std::fflush(stderr);
        return static_cast<bool>(std::getline(std::cin, line));
    };
    // One turn: the input, then as long as the agent asks, the user's answer.
    int status = 0;
    auto turn = [&](std::string input) {
        for (;;) {
            run_config cfg;
            cfg.thread_id = thread;
            cfg.context["thread_id"] = thread;
            cfg.stream.on_text = [&](std::string_view d) { out.text(d); };
            cfg.stream.on_event = [&](const boost::json::object& e) { out.event(e); };
            cfg.on_update = [&](const agent_update& u) { out.update(u); };
            cfg.subagent_streams = o.subagent_streams;
            cfg.stop = watch.begin([&] { la.agent->model().cancel(); });
            auto r = la.agent->invoke(agent_input(std::move(input)), la.config(std::move(cfg)));
            const bool stopped = watch.end();
            out.end_turn();
            if (stopped) {
                out.line("agentware: the run was stopped; the thread keeps its messages");
                status = 130;
                return;
            }
            if (!r.ok()) {
                out.line(fmt::format("agentware: error: {}", detail::one_line(r.error, 2000)));
                status = 1;
                return;
            }
            auto question = detail::clarification_question(r.state);
            if (!question) return;
            out.text(*question + "\n");
            std::string answer;
            if (!read_line("answer> ", answer) || answer.empty()) return;
            input = std::move(answer);
        }
    };
    if (!interactive) {
        std::string prompt;
        for (const auto& w : o.words)
            prompt += (prompt.empty() ? "" : " ") + w;
        turn(std::move(prompt));
    } else {
        std::string line;
        while (read_line("> ", line) && !line.empty()) {
            status = 0;
            turn(line);
        }
    }
    // The conversation's memory is extracted before the program ends (DeerFlow
    // drains its queue on shutdown, within memory.shutdown_flush_timeout_seconds).
    // An update that failed (the model's error, an answer that is not memory's
    // JSON) is said, not dropped in silence.
    if (auto* m = la.agent->middleware().get<memory>()) {
        if (!m->manager()->shutdown())
            std::fprintf(stderr,
                         "agentware: warning: memory: updates still pending after %g s "
                         "(memory.shutdown_flush_timeout_seconds) were not saved\n",
                         m->manager()->options().shutdown_flush_timeout_seconds);
        for (const auto& failure : m->manager()->queue().take_failures())
            std::fprintf(stderr, "agentware: warning: memory: update failed: %s\n", failure.c_str());
    }
    return status;
}

inline int run_main(const std::vector<std::string>& args) {
    try {
        return run_lead(parse_run_options(args));
    } catch (const run_usage_error& e) {
        if (e.what.empty()) {
            std::fputs(run_usage.data(), stdout);
            return 0;
        }
        std::fprintf(stderr, "agentware run: %s (see agentware run --help)\n", e.what.c_str());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "agentware run: %s\n", detail::one_line(e.what(), 4000).c_str());
        return 1;
    }
}

} // namespace agentware_cli

#endif
