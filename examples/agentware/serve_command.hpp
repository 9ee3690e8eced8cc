#ifndef AGENTWARE_EXAMPLES_AGENTWARE_SERVE_COMMAND_HPP
#define AGENTWARE_EXAMPLES_AGENTWARE_SERVE_COMMAND_HPP

// `agentware serve`: DeerFlow's lead agent behind the LangGraph Server API
// (docs/server.md), so the LangGraph SDKs and DeerFlow's web UI can use it.
// Threads, runs and checkpoints are kept in --data, or in PostgreSQL with
// --database; a restart keeps them.

#include "run_command.hpp"

#include <agentware/presets/deep_agent.hpp>
#include <agentware/server/deerflow_gateway.hpp>
#include <agentware/server/file_store.hpp>
#include <agentware/server/lead_assistant.hpp>
#include <agentware/server/server.hpp>
#if AGENTWARE_CLI_POSTGRES
#include <agentware/postgres/conninfo.hpp>
#include <agentware/server/postgres_deployment.hpp>
#include <agentware/server/redis_event_bus.hpp>

#include <unistd.h>
#endif

#include <boost/asio/signal_set.hpp>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace agentware_cli {

inline constexpr std::string_view serve_usage = R"(usage: agentware serve [options]

Serves DeerFlow's lead agent (assistant "lead_agent"), and the deep agent
("deep_agent") when the configuration has a deep_agent section, over the LangGraph
Server API that the LangGraph SDKs and DeerFlow's web UI speak. Prints the
URL it listens on, then serves until Ctrl-C or SIGTERM.

options:
  -c, --config FILE        DeerFlow's config.yaml, or a JSON file of the same sections
                           (default: as `agentware run`)
      --extensions FILE    DeerFlow's extensions_config.json (default: beside the config)
      --script FILE        offline: the runs' model answers from FILE, in order across
                           runs ({"model": [...]}, as `agentware run --script`); an
                           answer with "delay_ms": N arrives N ms late
      --host ADDRESS       the address to bind (default 127.0.0.1)
      --port N             the port (default 2024; 0: any free port)
      --data DIR           where threads, runs and checkpoints are kept
                           (default .agentware/server)
      --database DSN       keep them in PostgreSQL instead: a libpq connection
                           string or URI, or $NAME to read it from the environment
                           variable NAME (so the password stays off the command
                           line); several processes may share one database, and
                           then its runs: any process executes any run
      --redis URL          with --database: carry the runs' live events through Redis
                           Streams (redis://[:password@]host[:port][/db] or
                           unix:///path; $NAME reads it from the environment)
                           instead of the database
      --lease SECONDS      with --database: how long a run stays a process's
                           without word from it (default 30); a run whose process
                           died goes on in another after this and a third more
      --auth-token-file F  requests must carry this token (Authorization: Bearer ...);
                           default: $AGENTWARE_AUTH_TOKEN, else no authentication
      --workers N          runs executed at once (default 32; the rest wait)
      --cors ORIGINS       comma list of origins a browser may call from (default *)
  -h, --help               this text
)";

struct serve_options {
    run_options run;
    std::string host = "127.0.0.1";
    unsigned short port = 2024;
    std::string data = ".agentware/server";
    std::string database;
    std::string redis;
    std::string auth_token_file;
    std::size_t workers = 32;
    std::chrono::seconds lease{30};
    std::vector<std::string> cors{"*"};
};

inline serve_options parse_serve_options(const std::vector<std::string>& args) {
    serve_options o;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= args.size()) throw run_usage_error{fmt::format("{} needs a value", a)};
            return args[++i];
        };
        auto number = [&](unsigned long max) {
            const std::string v = value();
            std::size_t used = 0;
            unsigned long n = 0;
            try {
                n = std::stoul(v, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != v.size() || v.empty() || n > max)
                throw run_usage_error{fmt::format("{} needs a number from 0 to {}, not \"{}\"", a, max, v)};
            return n;
        };
        if (a == "-h" || a == "--help")
            throw run_usage_error{};
        else if (a == "-c" || a == "--config")
            o.run.config = value();
        else if (a == "--extensions")
            o.run.extensions = value();
        else if (a == "--script")
            o.run.script = value();
        else if (a == "--host")
            o.host = value();
        else if (a == "--port")
            o.port = static_cast<unsigned short>(number(65535));
        else if (a == "--data")
            o.data = value();
        else if (a == "--database")
            o.database = value();
        else if (a == "--redis")
            o.redis = value();
        else if (a == "--auth-token-file")
            o.auth_token_file = value();
        else if (a == "--lease")
            o.lease = std::chrono::seconds(std::max<unsigned long>(1, number(3600)));
        else if (a == "--workers")
            o.workers = std::max<std::size_t>(1, number(4096));
        else if (a == "--cors") {
            o.cors.clear();
            const std::string list = value();
            for (std::size_t at = 0; at <= list.size();) {
                const auto comma = std::min(list.find(',', at), list.size());
                if (comma > at) o.cors.push_back(list.substr(at, comma - at));
                at = comma + 1;
            }
        } else
            throw run_usage_error{fmt::format("unknown option \"{}\"", a)};
    }
    if (!o.redis.empty() && o.database.empty())
        throw run_usage_error{
            "--redis needs --database (Redis carries the live events; the database keeps the rest)"};
    return o;
}

namespace detail {

// The scripted model of `serve --script`: an answer whose metadata has
// "delay_ms" arrives that much later (a slow model, so that tests can find a
// thread busy), unless the run is cancelled meanwhile.
class paced_model {
public:
    explicit paced_model(agentware::scripted_model inner) : inner_(std::move(inner)) {}
    agentware::model_response invoke(const agentware::chat_request& r) {
        cancelled_->store(false);
        auto out = inner_.invoke(r);
        if (const auto* d = out.ai.metadata.if_contains("delay_ms"); d && d->is_number()) {
            const auto until = std::chrono::steady_clock::now() +
                               std::chrono::milliseconds(static_cast<long long>(d->to_number<double>()));
            out.ai.metadata.erase("delay_ms");
            while (std::chrono::steady_clock::now() < until && !cancelled_->load())
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            if (cancelled_->load())
                throw agentware::model_error(agentware::model_error_kind::cancelled,
                                             "the model call was cancelled");
        }
        return out;
    }
    void cancel() { cancelled_->store(true); }

private:
    agentware::scripted_model inner_;
    std::shared_ptr<std::atomic<bool>> cancelled_ = std::make_shared<std::atomic<bool>>(false);
};

#if AGENTWARE_CLI_POSTGRES
// This process as the run queue names its runs' owner: host, pid and a
// random part (a pid is reused after a restart; the lease it held is not).
inline std::string worker_name() {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "host");
    std::random_device random;
    return fmt::format("{}:{}:{:08x}", host, ::getpid(), random());
}
#endif

// A secret-bearing flag's value (--database, --redis): itself, or $NAME for the environment's.
inline std::string from_environment(const std::string& given, std::string_view flag) {
    if (!given.starts_with('$')) return given;
    const char* v = std::getenv(given.c_str() + 1);
    if (v == nullptr || *v == '\0')
        throw std::runtime_error(
            fmt::format("{} {}: the environment has no {}", flag, given, given.substr(1)));
    return v;
}

inline std::string read_token_file(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error(fmt::format("cannot read --auth-token-file {}", file));
    std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' '))
        token.pop_back();
    if (token.empty()) throw std::runtime_error(fmt::format("--auth-token-file {} is empty", file));
    return token;
}

// config.yaml's `uploads:` as written: the lead agent's sections leave out
// the gateway's upload limits (read_deerflow_config), which serve applies.
inline boost::json::value uploads_section(const std::string& config_path) {
    if (config_path.empty()) return nullptr;
    boost::json::value doc;
    if (config_path.ends_with(".json")) {
        std::ifstream in(config_path, std::ios::binary);
        boost::system::error_code ec;
        doc = boost::json::parse(std::string(std::istreambuf_iterator<char>(in), {}), ec);
    } else {
        doc = agentware::yaml_file_to_json(config_path);
    }
    const auto* o = doc.if_object();
    const auto* u = o ? o->if_contains("uploads") : nullptr;
    return u ? *u : boost::json::value(nullptr);
}

} // namespace detail

inline int serve(const serve_options& o) {
    namespace srv = agentware::server;
    auto log = [](const std::string& line) { std::fprintf(stderr, "agentware serve: %s\n", line.c_str()); };
    auto env = make_lead_environment(o.run, [](agentware::scripted_model m) {
        return agentware::any_chat_model(detail::paced_model(std::move(m)));
    });
    // Each run makes its agent; one now checks the configuration before the first client comes.
    {
        auto probe = agentware::make_lead_agent(env->config, {}, env->setup);
        for (const auto& w : probe.warnings)
            log("warning: " + w);
    }

    srv::server_options so;
    so.host = o.host;
    so.port = o.port;
    so.cors_origins = o.cors;
    so.runs.workers = o.workers;
    so.log = log;
    if (!o.auth_token_file.empty())
        so.auth_token = detail::read_token_file(o.auth_token_file);
    else if (const char* t = std::getenv("AGENTWARE_AUTH_TOKEN"); t && *t)
        so.auth_token = t;

        // The store: PostgreSQL's (on a thread of its pool's own), or the embedded one.
#if AGENTWARE_CLI_POSTGRES
    std::unique_ptr<srv::postgres_deployment> deployment;
#endif
    std::unique_ptr<srv::file_store> embedded;
    srv::store* store = nullptr;
    if (!o.database.empty()) {
#if AGENTWARE_CLI_POSTGRES
        const std::string conninfo = detail::from_environment(o.database, "--database");
        srv::postgres_deployment_options d;
        // A database restart pauses the statements in flight for up to half a
        // lease (then a run may still renew its lease in time) instead of failing them.
        d.pool = agentware::postgres::pool_options{
            .conninfo = conninfo,
            .size = 8,
            .statement_timeout = std::chrono::seconds(60),
            .retry_lost_for = std::chrono::duration_cast<std::chrono::milliseconds>(o.lease) / 2};
        // This process is one worker of the deployment's queue.
        d.queue = srv::postgres_run_queue_options{
            .worker_id = detail::worker_name(),
            .lease = o.lease,
            .grace = std::chrono::duration_cast<std::chrono::milliseconds>(o.lease) / 3};
        // The runs' events, for the clients that follow a run from another
        // process: through Redis when given, else through the database.
        if (!o.redis.empty()) {
            srv::redis_event_bus_options ro;
            ro.server = agentware::redis::address::parse(detail::from_environment(o.redis, "--redis"));
            ro.expire = std::chrono::duration_cast<std::chrono::seconds>(so.runs.keep_streams) +
                        std::chrono::seconds(60);
            log("carrying the runs' events through Redis at " + ro.server.text());
            d.events = std::make_unique<srv::redis_event_bus>(std::move(ro));
        }
        deployment = std::make_unique<srv::postgres_deployment>(std::move(d));
        const int applied = deployment->migrations_applied();
        log(fmt::format("keeping threads in PostgreSQL at {}{}", agentware::postgres::redact(conninfo),
                        applied > 0 ? fmt::format(" ({} migrations applied)", applied) : ""));
        deployment->use_in(so.runs);
        store = &deployment->store();
        log("working the shared run queue as " + deployment->queue().options().worker_id);
#else
        throw std::runtime_error("--database: this agentware was built without PostgreSQL (libpq-dev)");
#endif
    } else {
        embedded = std::make_unique<srv::file_store>(o.data, log);
        store = embedded.get();
    }
    std::shared_ptr<const boost::json::value> config(std::shared_ptr<void>(), &env->config);
    std::shared_ptr<const agentware::lead_agent_setup> setup(std::shared_ptr<void>(), &env->setup);
    // A skill switched over HTTP applies to the runs that start after it: each
    // run takes the current setup; a replaced one is kept for the runs that have it.
    struct live_setup {
        std::mutex mutex;
        std::vector<std::shared_ptr<const agentware::lead_agent_setup>> all;
    };
    auto live = std::make_shared<live_setup>();
    live->all.push_back(setup);
    std::vector<srv::assistant_spec> assistants{srv::lead_agent_assistant(config, [live] {
        std::lock_guard lock(live->mutex);
        return live->all.back();
    })};
    // The deep agent too, when the configuration has a `deep_agent` section
    // (its options; its model is the first configured one).
    if (const auto* d = env->sections.if_contains("deep_agent"); d && !d->is_null()) {
        auto options = std::make_shared<const agentware::deep_agent_options>(
            agentware::json_read_as<agentware::deep_agent_options>(*d, "deep_agent"));
        std::string model_name;
        if (const auto* ms = env->sections.if_contains("models");
            ms && ms->is_array() && !ms->get_array().empty())
            if (const auto* n = ms->get_array().front().as_object().if_contains("name"); n && n->is_string())
                model_name = n->get_string();
        const auto* e = env.get();
        assistants.push_back(srv::make_assistant("deep_agent", [e, options, model_name] {
            auto a = agentware::make_deep_agent(e->setup.model_factory(model_name, false),
                                                agentware::tool_set{}, *options);
            return std::make_unique<decltype(a)>(std::move(a));
        }));
        assistants.back().description = "the deep agent (deepagents' create_deep_agent)";
        log("serving the deep agent as \"deep_agent\"");
    }
    srv::agent_server server(*store, std::move(assistants), so);
    // DeerFlow's gateway routes (models, skills, memory, uploads, artifacts, MCP) for its web UI.
    srv::deerflow_gateway_options gateway;
    gateway.config = env->sections;
    if (auto uploads = detail::uploads_section(env->config_path); uploads.is_object())
        gateway.config["uploads"] = std::move(uploads);
    gateway.config_path = env->config_path;
    gateway.extensions_path = env->extensions_path;
    gateway.on_extensions_changed = [log, live, skills = env->skills](const std::filesystem::path& file) {
        if (skills) {
            try {
                const boost::json::value doc(srv::detail::read_extensions_file(file));
                auto catalog = std::make_shared<const agentware::skill_catalog>(
                    agentware::load_skills(*skills, agentware::read_skill_states(doc)));
                std::lock_guard lock(live->mutex);
                auto next = std::make_shared<agentware::lead_agent_setup>(*live->all.back());
                next->skills = std::move(catalog);
                live->all.push_back(std::move(next));
            } catch (const std::exception& e) {
                log(std::string("the skills were not reloaded: ") + e.what());
            }
        }
        log(file.string() +
            " was changed: skills apply to the runs from now on, MCP servers from the next start");
    };
    srv::add_deerflow_gateway(server.routes(), std::move(gateway));
    server.listen();
    boost::asio::signal_set signals(server.io_context(), SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int) {
        if (!ec) server.stop();
    });
    std::printf("agentware serve: listening on %s\n", server.url().c_str());
    std::fflush(stdout);
    server.run();
    server.stop();
#if AGENTWARE_CLI_POSTGRES
    if (deployment) deployment->stop(); // its statements in flight end before the server goes
#endif
    log("stopped");
    return 0;
}

inline int serve_main(const std::vector<std::string>& args) {
    try {
        return serve(parse_serve_options(args));
    } catch (const run_usage_error& e) {
        if (e.what.empty()) {
            std::fputs(serve_usage.data(), stdout);
            return 0;
        }
        std::fprintf(stderr, "agentware serve: %s (see agentware serve --help)\n", e.what.c_str());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "agentware serve: %s\n", detail::one_line(e.what(), 4000).c_str());
        return 1;
    }
}

} // namespace agentware_cli

#endif
