// server_bench: N threads, each with one streamed run at once
// (`POST /threads/{id}/runs/stream`, stream_mode values + messages-tuple) of
// an agent with one tool, whose model first calls the tool and then answers:
// two model calls per run, each answered by a fake OpenAI-compatible model
// (chat completions, SSE) after a fixed delay (100 ms). The same runs against
// agentware's server and against the LangGraph JS dev server
// (@langchain/langgraph-cli `dev`, a createAgent graph on ChatOpenAI pointed at
// the same fake), side by side in one run.
//
// Each server is a process of its own, so that its CPU time (utime + stime
// from /proc/<pid>/stat, before and after the runs) and its peak memory
// (VmHWM) are its own: agentware's is this binary re-executed as
// `server_bench --serve` (the library's agent_server, an agent over the OpenAI
// client, a file_store in a fresh directory: what `agentware serve` runs,
// without DeerFlow's middleware chain); the JS server is node's, with every
// process it starts. The fake model is this binary too (`--fake-model`), in a
// process of its own; the client (one io_context, one coroutine per run,
// Boost.Beast) runs in this one. No figure is asserted: incomplete runs are
// counted and named in the label (docs/benchmarks.md, "server").
//
// Environment: AGENTWARE_SERVER_BENCH_N (comma list of N, default
// "10,100,1000"), AGENTWARE_SERVER_BENCH_WORKERS ("default": each server's
// default number of runs executed at once, agentware 32 and the JS server 10;
// "N": as many as runs; default "default,N"), AGENTWARE_SERVER_BENCH_SIDES
// ("agentware,js"), AGENTWARE_SERVER_BENCH_DELAY_MS (100),
// AGENTWARE_SERVER_BENCH_STORE ("files", or "memory"), AGENTWARE_SERVER_BENCH_TRACE
// (print the first run's events with their times). The JS side needs
// benchmarks/server/install.sh; without it, it is skipped with a note.
//
// server/agentware_postgres/processes:P/N:n: the same runs against P agentware
// processes sharing one PostgreSQL database (the store, the run queue and the
// event bus: what `agentware serve --database` runs), the runs spread over the
// processes in turn, on a PostgreSQL 15 server the benchmark starts
// (tests/support/postgres_server.hpp). AGENTWARE_SERVER_BENCH_PROCESSES
// ("1,2,4"). `runs_per_s` and `first_p99_ms` are the figures to read.
#include <agentware/agent/agent.hpp>
#include <agentware/model/openai_chat_model.hpp>
#include <agentware/server/file_store.hpp>
#include <agentware/server/server.hpp>
#include <agentware/src.hpp>
#include <agentware/tool/make_tool.hpp>

#include "skipped.hpp"

#if AGENTWARE_BENCH_POSTGRES
#include "../tests/support/postgres_server.hpp"

#include <agentware/server/postgres_deployment.hpp>
#endif

#include <benchmark/benchmark.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::string_view final_answer = "The echo said: hi.";

std::string env_or(const char* name, std::string fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : std::move(fallback);
}

std::vector<std::string> comma_list(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

std::chrono::milliseconds model_delay() {
    return std::chrono::milliseconds(std::stoi(env_or("AGENTWARE_SERVER_BENCH_DELAY_MS", "100")));
}

// ---------------------------------------------------------------------------
// The fake model: OpenAI's chat completions on 127.0.0.1. It answers after the
// delay, from the conversation: a tool call of `echo` when the last message is
// not a tool result, else the final answer in four text chunks. Streams (SSE)
// when the request asks to; keeps connections alive.

std::string chunk(std::string_view delta, std::string_view finish) {
    return "data: "
           "{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"fake\","
           "\"choices\":[{\"index\":0,\"delta\":" +
           std::string(delta) + ",\"finish_reason\":" + std::string(finish) + "}]}\n\n";
}

std::string answer_body(bool after_tool, bool streamed) {
    constexpr std::string_view call =
        R"({"index":0,"id":"call_echo","type":"function","function":{"name":"echo","arguments":"{\"text\":\"hi\"}"}})";
    constexpr std::string_view usage =
        R"("usage":{"prompt_tokens":20,"completion_tokens":5,"total_tokens":25})";
    if (!streamed) {
        const std::string message =
            after_tool ? R"({"role":"assistant","content":")" + std::string(final_answer) + "\"}"
                       : R"({"role":"assistant","content":null,"tool_calls":[)" + std::string(call) + "]}";
        return R"({"id":"chatcmpl-bench","object":"chat.completion","created":1,"model":"fake","choices":[{"index":0,"message":)" +
               message + R"(,"finish_reason":")" + (after_tool ? "stop" : "tool_calls") + "\"}]," +
               std::string(usage) + "}";
    }
    std::string out;
    if (after_tool) {
        out += chunk(R"({"role":"assistant","content":""})", "null");
        for (std::string_view piece : {"The ", "echo ", "said: ", "hi."})
            out += chunk(R"({"content":")" + std::string(piece) + "\"}", "null");
        out += chunk("{}", "\"stop\"");
    } else {
        out +=
            chunk(R"({"role":"assistant","content":null,"tool_calls":[)" + std::string(call) + "]}", "null");
        out += chunk("{}", "\"tool_calls\"");
    }
    out +=
        R"(data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"fake","choices":[],)" +
        std::string(usage) + "}\n\n";
    out += "data: [DONE]\n\n";
    return out;
}

class fake_model {
public:
    explicit fake_model(std::chrono::milliseconds delay)
        : delay_(delay), acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}) {
        asio::co_spawn(io_, accept_loop(), asio::detached);
        thread_ = std::thread([this] { io_.run(); });
    }
    ~fake_model() {
        io_.stop();
        thread_.join();
    }
    std::string base_url() const {
        return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()) + "/v1";
    }
    std::size_t calls() const { return calls_.load(); }

private:
    asio::awaitable<void> accept_loop() {
        for (;;) {
            auto [ec, socket] = co_await acceptor_.async_accept(asio::as_tuple(asio::use_awaitable));
            if (ec) {
                if (!acceptor_.is_open()) co_return;
                // Out of descriptors, say: wait for connections to close rather than spin.
                asio::steady_timer pause(io_, 5ms);
                co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
                continue;
            }
            asio::co_spawn(io_, session(std::move(socket)), asio::detached);
        }
    }

    asio::awaitable<void> session(tcp::socket socket) {
        beast::tcp_stream stream(std::move(socket));
        beast::flat_buffer buffer;
        for (;;) {
            http::request<http::string_body> req;
            auto [ec, n] =
                co_await http::async_read(stream, buffer, req, asio::as_tuple(asio::use_awaitable));
            if (ec) co_return;
            if (req.target() == "/calls") { // for the benchmark, which runs the fake in a process of its own
                http::response<http::string_body> res{http::status::ok, req.version()};
                res.keep_alive(req.keep_alive());
                res.body() = std::to_string(calls_.load());
                res.prepare_payload();
                auto [wec, wn] = co_await http::async_write(stream, res, asio::as_tuple(asio::use_awaitable));
                if (wec || !req.keep_alive()) co_return;
                continue;
            }
            bool streamed = false;
            bool after_tool = false;
            boost::system::error_code parse_error;
            const auto body = boost::json::parse(req.body(), parse_error);
            if (!parse_error && body.is_object()) {
                const auto& o = body.get_object();
                if (const auto* s = o.if_contains("stream"); s && s->is_bool()) streamed = s->get_bool();
                if (const auto* ms = o.if_contains("messages");
                    ms && ms->is_array() && !ms->get_array().empty())
                    if (const auto* last = ms->get_array().back().if_object())
                        if (const auto* role = last->if_contains("role"); role && role->is_string())
                            after_tool = role->get_string() == "tool";
            }
            ++calls_;
            asio::steady_timer timer(stream.get_executor(), delay_);
            co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
            http::response<http::string_body> res{http::status::ok, req.version()};
            res.set(http::field::content_type, streamed ? "text/event-stream" : "application/json");
            res.keep_alive(req.keep_alive());
            res.body() = answer_body(after_tool, streamed);
            res.prepare_payload();
            auto [wec, wn] = co_await http::async_write(stream, res, asio::as_tuple(asio::use_awaitable));
            if (wec || !req.keep_alive()) co_return;
        }
    }

    std::chrono::milliseconds delay_;
    asio::io_context io_;
    tcp::acceptor acceptor_;
    std::atomic<std::size_t> calls_{0};
    std::thread thread_;
};

// ---------------------------------------------------------------------------
// agentware's side, in the child process: `server_bench --serve MODEL_URL
// WORKERS DATA_DIR` prints "listening on URL" and serves until SIGTERM.

agentware::tool_set bench_tools() {
    agentware::tool_set t;
    t.add(agentware::make_tool(
        "echo", "Echoes its text.",
        R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})",
        [](const boost::json::object& a) { return "echo: " + std::string(a.at("text").as_string()); }));
    return t;
}

/// `server_bench --fake-model DELAY_MS`: the fake model in a process of its
/// own (its connections do not count against the client's descriptors);
/// prints its base URL and serves until SIGTERM.
int fake_model_child(int argc, char** argv) {
    if (argc < 3) {
        std::fputs("usage: server_bench --fake-model DELAY_MS\n", stderr);
        return 2;
    }
    fake_model model(std::chrono::milliseconds(std::stoi(argv[2])));
    std::printf("listening on %s\n", model.base_url().c_str());
    std::fflush(stdout);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    ::pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    int signal = 0;
    ::sigwait(&stop, &signal);
    return 0;
}

int serve_child(int argc, char** argv) {
    if (argc < 5) {
        std::fputs("usage: server_bench --serve MODEL_URL WORKERS DATA_DIR\n", stderr);
        return 2;
    }
    namespace srv = agentware::server;
    agentware::openai_config config;
    config.base_url = argv[2];
    config.model = "fake";
    config.api_key_env.clear();
    agentware::openai_chat_model model(config); // copies share its connection pool

    srv::server_options options;
    const std::size_t workers = std::stoul(argv[3]);
    if (workers > 0) options.runs.workers = workers;
    options.max_connections = 1 << 20; // the client's connections are the measure, not a limit
    options.log = [](const std::string& line) {
        std::fprintf(stderr, "server_bench --serve: %s\n", line.c_str());
    };
    // DATA_DIR "": kept in memory only (AGENTWARE_SERVER_BENCH_STORE=memory), to tell the store's share;
    // "postgres:CONNINFO": one worker of a deployment on that database.
    const std::string data = argv[4];
#if AGENTWARE_BENCH_POSTGRES
    std::unique_ptr<srv::postgres_deployment> deployment;
#endif
    std::unique_ptr<srv::file_store> embedded;
    srv::store* store = nullptr;
    if (data.starts_with("postgres:")) {
#if AGENTWARE_BENCH_POSTGRES
        srv::postgres_deployment_options d;
        d.pool = agentware::postgres::pool_options{.conninfo = data.substr(9), .size = 8};
        d.queue.worker_id = "bench-" + std::to_string(::getpid());
        deployment = std::make_unique<srv::postgres_deployment>(std::move(d));
        deployment->use_in(options.runs);
        store = &deployment->store();
#else
        std::fputs("server_bench --serve: built without PostgreSQL\n", stderr);
        return 2;
#endif
    } else if (!data.empty()) {
        embedded = std::make_unique<srv::file_store>(std::filesystem::path(data), options.log);
        store = embedded.get();
    } else {
        embedded = std::make_unique<srv::file_store>();
        store = embedded.get();
    }
    auto assistant = srv::make_assistant("agent", [model] {
        using agent_type = decltype(agentware::make_agent(model, bench_tools()));
        return std::make_unique<agent_type>(agentware::make_agent(model, bench_tools()));
    });
    srv::agent_server server(*store, {std::move(assistant)}, options);
    server.listen();
    asio::signal_set signals(server.io_context(), SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int) {
        if (!ec) server.stop();
    });
    std::printf("listening on %s\n", server.url().c_str());
    std::fflush(stdout);
    server.run();
    server.stop();
#if AGENTWARE_BENCH_POSTGRES
    if (deployment) deployment->stop();
#endif
    return 0;
}

// ---------------------------------------------------------------------------
// The servers' processes.

/// The process and every process it started (the JS CLI starts the server as its child).
std::vector<pid_t> process_tree(pid_t root) {
    std::vector<pid_t> out{root};
    for (std::size_t i = 0; i < out.size(); ++i) {
        std::error_code ec;
        for (const auto& task :
             std::filesystem::directory_iterator("/proc/" + std::to_string(out[i]) + "/task", ec)) {
            std::ifstream children(task.path() / "children");
            for (pid_t child; children >> child;)
                out.push_back(child);
        }
    }
    return out;
}

/// utime + stime of the processes, in seconds.
double cpu_seconds(const std::vector<pid_t>& pids) {
    const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
    double total = 0;
    for (pid_t p : pids) {
        std::ifstream in("/proc/" + std::to_string(p) + "/stat");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const auto close = text.rfind(')'); // the command name may hold spaces
        if (close == std::string::npos) continue;
        std::istringstream fields(text.substr(close + 2));
        std::string field;
        // After the name: state(3) ... utime is field 14, stime 15.
        for (int i = 3; i <= 15 && fields >> field; ++i)
            if (i >= 14) total += std::stod(field) / tick;
    }
    return total;
}

/// A field of /proc/<pid>/status (VmHWM, VmRSS) summed over the processes, in kB.
double status_kb(const std::vector<pid_t>& pids, std::string_view key) {
    double total = 0;
    for (pid_t p : pids) {
        std::ifstream in("/proc/" + std::to_string(p) + "/status");
        for (std::string line; std::getline(in, line);)
            if (line.starts_with(key) && line.size() > key.size() && line[key.size()] == ':')
                total += std::stod(line.substr(key.size() + 1));
    }
    return total;
}

/// A child process in a process group of its own, stopped (the whole group) when destroyed.
class child_process {
public:
    /// Runs `argv` in `dir` with `env` added; its standard output comes back
    /// through output() when `capture`, else both outputs go to `log`.
    child_process(std::vector<std::string> argv, const std::string& dir,
                  const std::vector<std::pair<std::string, std::string>>& env, bool capture,
                  const std::string& log) {
        int out[2] = {-1, -1};
        if (capture && ::pipe(out) != 0) throw std::runtime_error("pipe failed");
        pid_ = ::fork();
        if (pid_ < 0) throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            ::setpgid(0, 0);
            if (!dir.empty() && ::chdir(dir.c_str()) != 0) ::_exit(126);
            for (const auto& [k, v] : env)
                ::setenv(k.c_str(), v.c_str(), 1);
            if (!log.empty()) {
                const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd >= 0) {
                    ::dup2(fd, 1);
                    ::dup2(fd, 2);
                }
            }
            if (capture) {
                ::dup2(out[1], 1);
                ::close(out[0]);
            }
            std::vector<char*> args;
            for (auto& a : argv)
                args.push_back(a.data());
            args.push_back(nullptr);
            ::execvp(args[0], args.data());
            ::_exit(127);
        }
        ::setpgid(pid_, pid_);
        if (capture) {
            ::close(out[1]);
            output_ = ::fdopen(out[0], "r");
        }
    }
    ~child_process() {
        if (output_) std::fclose(output_);
        ::kill(-pid_, SIGTERM);
        for (int i = 0; i < 100; ++i) { // up to 5 s, then killed
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                ::kill(-pid_, SIGKILL); // what it started, if anything is left
                return;
            }
            std::this_thread::sleep_for(50ms);
        }
        ::kill(-pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    child_process(const child_process&) = delete;
    child_process& operator=(const child_process&) = delete;

    pid_t pid() const noexcept { return pid_; }
    std::optional<std::string> read_line() {
        char line[512];
        if (output_ == nullptr || std::fgets(line, sizeof line, output_) == nullptr) return std::nullopt;
        std::string s(line);
        while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
            s.pop_back();
        return s;
    }

private:
    pid_t pid_ = -1;
    std::FILE* output_ = nullptr;
};

// ---------------------------------------------------------------------------
// The client.

/// One blocking request on a kept-alive connection (setup: creating threads, polling /ok).
class setup_client {
public:
    explicit setup_client(unsigned short port) : port_(port), stream_(io_) {}

    std::optional<std::string> request(http::verb verb, const std::string& target,
                                       const std::string& body = {}) {
        for (int attempt = 0; attempt < 2; ++attempt) {
            try {
                if (!connected_) {
                    stream_.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
                    connected_ = true;
                }
                http::request<http::string_body> req{verb, target, 11};
                req.set(http::field::host, "127.0.0.1");
                if (!body.empty()) req.set(http::field::content_type, "application/json");
                req.body() = body;
                req.prepare_payload();
                stream_.expires_after(30s);
                http::write(stream_, req);
                beast::flat_buffer buffer;
                http::response<http::string_body> res;
                http::read(stream_, buffer, res);
                if (!res.keep_alive()) close();
                if (res.result() != http::status::ok) return std::nullopt;
                return res.body();
            } catch (const std::exception&) {
                close();
            }
        }
        return std::nullopt;
    }

private:
    void close() {
        boost::system::error_code ignore;
        stream_.socket().close(ignore); // connect() opens it again
        connected_ = false;
    }
    unsigned short port_;
    asio::io_context io_;
    beast::tcp_stream stream_;
    bool connected_ = false;
};

struct run_record {
    double first_event_ms = -1; ///< the first `messages` event: the model's first output
    double end_ms = -1;
    bool answered = false; ///< the final answer came in a `values` event
    std::string failure;   ///< why not completed ("" if it did)
    bool trace = false;    ///< print each event with its time (AGENTWARE_SERVER_BENCH_TRACE)
};

void read_event(std::string_view event, run_record& r, clock_type::time_point start) {
    std::string_view name;
    std::string_view data;
    for (std::size_t at = 0; at < event.size();) {
        auto end = event.find('\n', at);
        if (end == std::string_view::npos) end = event.size();
        auto line = event.substr(at, end - at);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.starts_with("event:")) name = line.substr(line.starts_with("event: ") ? 7 : 6);
        if (line.starts_with("data:")) data = line.substr(5);
        at = end + 1;
    }
    const double at_ms = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
    if (r.trace)
        std::fprintf(stderr, "  %8.1f ms  %.*s  %.100s\n", at_ms, int(name.size()), name.data(),
                     std::string(data).c_str());
    if (name == "messages" && r.first_event_ms < 0) r.first_event_ms = at_ms;
    if (name == "error" && r.failure.empty()) r.failure = "error event";
    if (name == "values" && data.find(final_answer) != std::string_view::npos) r.answered = true;
}

asio::awaitable<void> one_run(tcp::endpoint server, std::string target, const std::string& body,
                              run_record& r) {
    const auto start = clock_type::now();
    beast::tcp_stream stream(co_await asio::this_coro::executor);
    auto fail = [&](std::string_view what, const boost::system::error_code& ec) {
        r.failure = std::string(what) + ": " + ec.message();
    };
    stream.expires_after(120s);
    if (auto [ec] = co_await stream.async_connect(server, asio::as_tuple(asio::use_awaitable)); ec) {
        fail("connect", ec);
        co_return;
    }
    http::request<http::string_body> req{http::verb::post, target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "text/event-stream");
    req.body() = body;
    req.prepare_payload();
    stream.expires_after(120s);
    if (auto [ec, n] = co_await http::async_write(stream, req, asio::as_tuple(asio::use_awaitable)); ec) {
        fail("write", ec);
        co_return;
    }
    beast::flat_buffer buffer;
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(boost::none);
    stream.expires_after(120s);
    if (auto [ec, n] =
            co_await http::async_read_header(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
        ec) {
        fail("read", ec);
        co_return;
    }
    if (parser.get().result() != http::status::ok) {
        r.failure = "HTTP " + std::to_string(parser.get().result_int());
        co_return;
    }
    char piece[8192];
    std::string pending;
    while (!parser.is_done()) {
        parser.get().body().data = piece;
        parser.get().body().size = sizeof piece;
        stream.expires_after(120s); // the servers send heartbeats well within this
        // read_some: each event as it comes (async_read would wait until the buffer is full)
        auto [ec, n] =
            co_await http::async_read_some(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
        if (ec == http::error::need_buffer) ec = {};
        if (ec) {
            fail("stream", ec);
            co_return;
        }
        pending.append(piece, sizeof piece - parser.get().body().size);
        for (std::size_t end; (end = pending.find("\n\n")) != std::string::npos;) {
            read_event(std::string_view(pending).substr(0, end), r, start);
            pending.erase(0, end + 2);
        }
    }
    if (!pending.empty()) read_event(pending, r, start);
    r.end_ms = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
    if (r.failure.empty() && !r.answered) r.failure = "no final answer";
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

// ---------------------------------------------------------------------------
// One measurement.

enum class side { agentware, js };

struct measured {
    double cpu_ms_per_run = 0;
    double kb_per_run = 0;
    double peak_mb = 0;
};

/// agentware's figures per (N, workers), for the JS side's ratios.
std::map<std::pair<int, std::string>, measured>& agentware_figures() {
    static std::map<std::pair<int, std::string>, measured> figures;
    return figures;
}

std::filesystem::path js_dir() {
    return env_or("AGENTWARE_SERVER_BENCH_JS_DIR", AGENTWARE_SERVER_BENCH_JS_DIR);
}

std::filesystem::path js_cli() { return js_dir() / "node_modules/@langchain/langgraph-cli/dist/cli/cli.mjs"; }

unsigned short free_port() {
    asio::io_context io;
    tcp::acceptor a(io, {asio::ip::make_address("127.0.0.1"), 0});
    return a.local_endpoint().port();
}

unsigned short port_of(const std::string& url) {
    return static_cast<unsigned short>(std::stoi(url.substr(url.rfind(':') + 1)));
}

// processes > 0: that many agentware processes on one PostgreSQL database.
void bm_server(benchmark::State& state, side which, int n, std::string workers, int processes = 0) {
    const bool all = workers == "N";
    if (which == side::js && !std::filesystem::exists(js_cli())) {
        const std::string note =
            "skipped: the LangGraph JS server is not installed (benchmarks/server/install.sh)";
        agentware::bench::skip_with_note(state, "server_bench", note);
        for (auto _ : state)
            state.SetIterationTime(0);
        return;
    }
    // The fake model in a process of its own: one socket per model call in
    // flight would otherwise share the client's descriptors (the hard limit
    // may be as low as 20,000 where the benchmark cannot raise it).
    child_process model({"/proc/self/exe", "--fake-model", std::to_string(model_delay().count())}, "", {},
                        true, "");
    std::string model_url;
    if (auto line = model.read_line(); line && line->starts_with("listening on "))
        model_url = line->substr(13);
    else {
        state.SkipWithError("the fake model did not start");
        return;
    }
    setup_client model_client(port_of(model_url.substr(0, model_url.size() - 3)));
    auto model_calls = [&]() -> double {
        const auto calls = model_client.request(http::verb::get, "/calls");
        return calls ? std::stod(*calls) : -1;
    };
    std::vector<std::unique_ptr<child_process>> servers;
    std::vector<unsigned short> ports;
    std::filesystem::path data;
    try {
        if (which == side::agentware) {
            // The processes' storage: files in a fresh folder, memory, or one fresh PostgreSQL database.
            std::string where;
            if (processes > 0) {
#if AGENTWARE_BENCH_POSTGRES
                static int databases = 0;
                auto& pg = agentware::test::postgres_server::shared();
                const std::string name =
                    "server_bench_" + std::to_string(::getpid()) + "_" + std::to_string(++databases);
                {
                    agentware::postgres::pool_thread admin(
                        agentware::postgres::pool_options{.conninfo = pg.conninfo(), .size = 1});
                    admin.wait(admin.query("CREATE DATABASE " + name));
                }
                where = "postgres:" + pg.conninfo(name);
#endif
            } else if (env_or("AGENTWARE_SERVER_BENCH_STORE", "files") != "memory") {
                char dir[] = "/tmp/server_bench.XXXXXX";
                if (::mkdtemp(dir) == nullptr) throw std::runtime_error("mkdtemp failed");
                data = dir;
                where = data.string();
            }
            for (int p = 0; p < std::max(1, processes); ++p) {
                servers.push_back(std::make_unique<child_process>(
                    std::vector<std::string>{"/proc/self/exe", "--serve", model_url,
                                             all ? std::to_string(n) : "0", where},
                    "", std::vector<std::pair<std::string, std::string>>{}, true, ""));
                const auto line = servers.back()->read_line();
                if (!line || !line->starts_with("listening on "))
                    throw std::runtime_error("the agentware server did not start");
                ports.push_back(port_of(*line));
            }
        } else {
            std::filesystem::remove_all(js_dir() / ".langgraph_api");
            ports.push_back(free_port());
            servers.push_back(std::make_unique<child_process>(
                std::vector<std::string>{"node", js_cli().string(), "dev", "--port", std::to_string(ports[0]),
                                         "--host", "127.0.0.1", "--no-browser", "--no-reload",
                                         "--n-jobs-per-worker", all ? std::to_string(n) : "10", "--config",
                                         "langgraph.json"},
                js_dir().string(),
                std::vector<std::pair<std::string, std::string>>{
                    {"AGENTWARE_BENCH_MODEL_URL", model_url},
                    {"LANGGRAPH_CLI_NO_ANALYTICS", "1"},
                    {"LANGSMITH_TRACING", "false"},
                    {"LANGCHAIN_TRACING_V2", "false"},
                    {"BROWSER", "none"},
                    // no line per request: agentware writes none either
                    {"LOG_LEVEL", "warn"}},
                false, (js_dir() / "server.log").string()));
        }
        // Ready when /ok answers (the JS server compiles its graph first).
        const auto deadline = clock_type::now() + 120s;
        for (const auto port : ports) {
            setup_client ready(port);
            while (!ready.request(http::verb::get, "/ok")) {
                if (clock_type::now() > deadline)
                    throw std::runtime_error("the server did not answer /ok within 120 s (see its log)");
                std::this_thread::sleep_for(200ms);
            }
        }
        // The threads, made before the clock starts (one more per process for its warm-up run).
        setup_client setup(ports[0]);
        std::vector<std::string> threads;
        for (std::size_t i = 0; i < static_cast<std::size_t>(n) + ports.size(); ++i) {
            const auto made = setup.request(http::verb::post, "/threads", R"({"metadata":{}})");
            if (!made) throw std::runtime_error("creating thread " + std::to_string(i) + " failed");
            threads.emplace_back(boost::json::parse(*made).at("thread_id").as_string());
        }
        const std::string body =
            R"({"assistant_id":"agent","input":{"messages":[{"role":"user","content":"Echo hi, please."}]},)"
            R"("stream_mode":["values","messages-tuple"]})";
        std::vector<tcp::endpoint> endpoints;
        for (const auto port : ports)
            endpoints.emplace_back(asio::ip::make_address("127.0.0.1"), port);

        // A warm-up run on each process first: the JS server loads and compiles
        // its graph's modules on the first run, which is not what a run costs.
        for (std::size_t p = 0; p < endpoints.size(); ++p) {
            run_record warm_up;
            asio::io_context io(1);
            asio::co_spawn(io,
                           one_run(endpoints[p],
                                   "/threads/" + threads[static_cast<std::size_t>(n) + p] + "/runs/stream",
                                   body, warm_up),
                           asio::detached);
            io.run();
            if (!warm_up.failure.empty())
                throw std::runtime_error("the warm-up run failed: " + warm_up.failure);
        }
        auto all_pids = [&] {
            std::vector<pid_t> pids;
            for (const auto& server : servers)
                for (const pid_t p : process_tree(server->pid()))
                    pids.push_back(p);
            return pids;
        };
        for (auto _ : state) {
            const auto pids = all_pids();
            const double cpu_before = cpu_seconds(pids);
            const double rss_before = status_kb(pids, "VmRSS");
            const double calls_before = model_calls();
            std::vector<run_record> records(static_cast<std::size_t>(n));
            records[0].trace = !env_or("AGENTWARE_SERVER_BENCH_TRACE", "").empty();
            asio::io_context io(1);
            const auto start = clock_type::now();
            for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i)
                asio::co_spawn(io,
                               one_run(endpoints[i % endpoints.size()],
                                       "/threads/" + threads[i] + "/runs/stream", body, records[i]),
                               asio::detached);
            io.run();
            const double wall = std::chrono::duration<double>(clock_type::now() - start).count();
            state.SetIterationTime(wall);
            std::this_thread::sleep_for(200ms); // the server's last writes after the streams closed
            const auto pids_after = all_pids();
            const double cpu = cpu_seconds(pids_after) - cpu_before;
            const double peak_kb = status_kb(pids_after, "VmHWM");

            std::vector<double> first;
            std::vector<double> end;
            std::map<std::string, int> failures;
            for (const auto& r : records) {
                if (!r.failure.empty()) {
                    ++failures[r.failure];
                    continue;
                }
                first.push_back(r.first_event_ms);
                end.push_back(r.end_ms);
            }
            const auto completed = static_cast<double>(first.size());
            state.counters["completed"] = completed;
            state.counters["wall_s"] = wall;
            state.counters["runs_per_s"] = completed / wall;
            state.counters["first_p50_ms"] = percentile(first, 0.50);
            state.counters["first_p99_ms"] = percentile(first, 0.99);
            state.counters["end_p50_ms"] = percentile(end, 0.50);
            state.counters["end_p99_ms"] = percentile(end, 0.99);
            state.counters["model_calls"] = model_calls() - calls_before;
            measured m;
            m.cpu_ms_per_run = cpu * 1000 / n;
            m.peak_mb = peak_kb / 1024;
            m.kb_per_run = std::max(0.0, peak_kb - rss_before) / n;
            state.counters["cpu_s"] = cpu;
            state.counters["cpu_ms_per_run"] = m.cpu_ms_per_run;
            state.counters["peak_MB"] = m.peak_mb;
            state.counters["kB_per_run"] = m.kb_per_run;
            if (processes > 0) {
                // Several processes: the figures are the deployment's; no JS side to compare.
            } else if (which == side::agentware) {
                agentware_figures()[{n, workers}] = m;
            } else if (auto it = agentware_figures().find({n, workers}); it != agentware_figures().end()) {
                const auto& a = it->second;
                if (a.cpu_ms_per_run > 0) state.counters["cpu_x"] = m.cpu_ms_per_run / a.cpu_ms_per_run;
                if (a.peak_mb > 0) state.counters["peak_x"] = m.peak_mb / a.peak_mb;
                if (a.kb_per_run > 0) state.counters["kB_per_run_x"] = m.kb_per_run / a.kb_per_run;
            }
            std::string label;
            for (const auto& [why, count] : failures)
                label += (label.empty() ? "" : "; ") + std::to_string(count) + " failed: " + why;
            if (!label.empty()) {
                state.SetLabel(label);
                std::fprintf(stderr, "server_bench: %s N=%d: %s\n",
                             which == side::agentware ? "agentware" : "js", n, label.c_str());
            }
        }
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
    }
    servers.clear();
    if (!data.empty()) {
        std::error_code ignore;
        std::filesystem::remove_all(data, ignore);
    }
}

/// Room for every connection: the client's, the fake model's and (inherited) the servers'.
void raise_file_limit() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
    rlimit wanted = limit;
    wanted.rlim_max = std::max<rlim_t>(limit.rlim_max, 1 << 20); // root may raise the hard limit
    wanted.rlim_cur = wanted.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &wanted) == 0) return;
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
}

void register_benchmarks() {
    const auto sides = comma_list(env_or("AGENTWARE_SERVER_BENCH_SIDES", "agentware,js"));
    for (const auto& n_text : comma_list(env_or("AGENTWARE_SERVER_BENCH_N", "10,100,1000")))
        for (const auto& workers : comma_list(env_or("AGENTWARE_SERVER_BENCH_WORKERS", "default,N")))
            for (const auto& s : sides) {
                const int n = std::stoi(n_text);
                const side which = s == "js" ? side::js : side::agentware;
                const std::string name = "server/" + s + "/N:" + n_text + "/workers:" + workers;
                benchmark::RegisterBenchmark(
                    name.c_str(),
                    [which, n, workers](benchmark::State& st) { bm_server(st, which, n, workers); })
                    ->Iterations(1)
                    ->UseManualTime()
                    ->Unit(benchmark::kMillisecond);
            }
#if AGENTWARE_BENCH_POSTGRES
    // Several processes on one database (the default number of runs at once in each).
    for (const auto& n_text : comma_list(env_or("AGENTWARE_SERVER_BENCH_N", "10,100,1000")))
        for (const auto& p_text : comma_list(env_or("AGENTWARE_SERVER_BENCH_PROCESSES", "1,2,4"))) {
            const int n = std::stoi(n_text);
            const int processes = std::stoi(p_text);
            const std::string name = "server/agentware_postgres/processes:" + p_text + "/N:" + n_text;
            benchmark::RegisterBenchmark(name.c_str(),
                                         [n, processes](benchmark::State& st) {
                                             bm_server(st, side::agentware, n, "default", processes);
                                         })
                ->Iterations(1)
                ->UseManualTime()
                ->Unit(benchmark::kMillisecond);
        }
#endif
}

} // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::string_view(argv[1]) == "--serve") return serve_child(argc, argv);
    if (argc > 1 && std::string_view(argv[1]) == "--fake-model") return fake_model_child(argc, argv);
    ::signal(SIGPIPE, SIG_IGN);
    raise_file_limit();
    register_benchmarks();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
