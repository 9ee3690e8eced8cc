// tools/call round trips to the reference server-everything (its `echo`
// tool), over stdio and over Streamable HTTP on 127.0.0.1: agentware's MCP
// client beside the official TypeScript SDK's client, which a node script
// (tests/mcp/sdk_client_bench.mjs) drives on the same server with the same
// calls. Each iteration makes a batch of calls with 1 or 64 in flight; the
// figure to read is items_per_second (calls per second). agentware's calls
// are made two ways: `call_tool` from one thread per call in flight
// (agentware_threads), and `async_call_tool` from coroutines on one thread
// (agentware: what the asynchronous agent loop does). Needs the servers that
// cmake/install-deps.sh installs into tests/mcp/node_modules.

#include <agentware/mcp/client.hpp>
#include <agentware/src.hpp>

#include "../tests/mcp/node_server.hpp"

#include <benchmark/benchmark.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace mcp = agentware::mcp;
using namespace std::chrono_literals;

const std::filesystem::path servers_dir = AGENTWARE_MCP_SERVERS_DIR;

std::string everything_module() {
    return (servers_dir / "node_modules/@modelcontextprotocol/server-everything/dist/index.js").string();
}

bool servers_installed() { return std::filesystem::exists(everything_module()); }

/// The calls of one iteration: enough that starting the callers is a small part of it.
std::int64_t batch_of(int concurrency) { return std::max(64, 4 * concurrency); }

/// server-everything's Streamable HTTP server, shared by both clients' HTTP runs.
mcp_test::http_server& everything_http() {
    static mcp_test::http_server server(
        {(servers_dir / "loopback.mjs").string(), everything_module(), "streamableHttp"}, false, true);
    return server;
}

mcp::client& agentware_client(bool http) {
    static const auto make = [](bool over_http) {
        mcp::server_config cfg;
        cfg.name = "everything";
        if (over_http) {
            cfg.type = mcp::transport_type::http;
            cfg.url = everything_http().url();
        } else {
            cfg.command = "node";
            cfg.args = {everything_module(), "stdio"};
        }
        cfg.session_init_timeout = 30s;
        auto c = std::make_unique<mcp::client>(cfg);
        c->connect();
        return c;
    };
    static std::unique_ptr<mcp::client> stdio, over_http;
    auto& slot = http ? over_http : stdio;
    if (!slot) slot = make(http);
    return *slot;
}

/// `calls` calls with `concurrency` callers; the seconds it took.
double agentware_calls(mcp::client& c, std::int64_t calls, int concurrency) {
    std::atomic<std::int64_t> next{0};
    std::atomic<bool> failed{false};
    const boost::json::object args{{"message", "bench"}};
    const auto start = std::chrono::steady_clock::now();
    {
        std::vector<std::jthread> callers;
        for (int i = 0; i < concurrency; ++i)
            callers.emplace_back([&] {
                try {
                    while (next.fetch_add(1) < calls)
                        (void)c.call_tool("echo", args);
                } catch (const std::exception&) {
                    failed = true;
                }
            });
    }
    if (failed) throw std::runtime_error("an echo call failed");
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The same with `concurrency` coroutines on one thread (one io_context).
double agentware_async_calls(mcp::client& c, std::int64_t calls, int concurrency) {
    boost::asio::io_context io;
    std::int64_t next = 0;
    bool failed = false;
    const boost::json::object args{{"message", "bench"}};
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < concurrency; ++i)
        boost::asio::co_spawn(
            io,
            [&]() -> boost::asio::awaitable<void> {
                while (next++ < calls)
                    (void)co_await c.async_call_tool("echo", args);
            },
            [&](const std::exception_ptr& e) { failed = failed || e != nullptr; });
    io.run();
    if (failed) throw std::runtime_error("an echo call failed");
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The node script with the TypeScript SDK's client, over pipes.
class sdk_client {
public:
    sdk_client(const std::string& kind, const std::string& target) {
        int in[2], out[2];
        if (::pipe(in) != 0 || ::pipe(out) != 0) throw std::runtime_error("pipe");
        pid_ = ::fork();
        if (pid_ == 0) {
            ::dup2(in[0], 0);
            ::dup2(out[1], 1);
            ::close(in[1]);
            ::close(out[0]);
            const std::string script = (servers_dir / "sdk_client_bench.mjs").string();
            ::execlp("node", "node", script.c_str(), kind.c_str(), target.c_str(),
                     static_cast<char*>(nullptr));
            ::_exit(127);
        }
        ::close(in[0]);
        ::close(out[1]);
        to_ = ::fdopen(in[1], "w");
        from_ = ::fdopen(out[0], "r");
        if (read_line() != "ready") throw std::runtime_error("the SDK client did not start");
    }
    ~sdk_client() {
        std::fputs("0 0\n", to_);
        std::fclose(to_);
        std::fclose(from_);
        int status;
        ::waitpid(pid_, &status, 0);
    }

    double calls(std::int64_t n, int concurrency) {
        std::fprintf(to_, "%lld %d\n", static_cast<long long>(n), concurrency);
        std::fflush(to_);
        return std::stod(read_line()) / 1e9;
    }

private:
    std::string read_line() {
        char buf[128];
        if (std::fgets(buf, sizeof buf, from_) == nullptr) throw std::runtime_error("the SDK client ended");
        std::string s(buf);
        while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
            s.pop_back();
        return s;
    }
    pid_t pid_;
    std::FILE* to_;
    std::FILE* from_;
};

/// The floor: server-everything over its pipes with no client at all. The
/// handshake and each `tools/call` are bytes written as they are, and an
/// answer is any line with a "result"; nothing is parsed. What a call costs
/// here is the pipes' and the server's share, which no client can go under.
class raw_stdio_server {
public:
    raw_stdio_server() {
        int in[2], out[2];
        if (::pipe(in) != 0 || ::pipe(out) != 0) throw std::runtime_error("pipe");
        pid_ = ::fork();
        if (pid_ == 0) {
            ::dup2(in[0], 0);
            ::dup2(out[1], 1);
            ::close(in[1]);
            ::close(out[0]);
            const std::string module = everything_module();
            ::execlp("node", "node", module.c_str(), "stdio", static_cast<char*>(nullptr));
            ::_exit(127);
        }
        ::close(in[0]);
        ::close(out[1]);
        to_ = ::fdopen(in[1], "w");
        from_ = ::fdopen(out[0], "r");
        send(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
             R"("capabilities":{},"clientInfo":{"name":"raw","version":"1"}}})");
        wait_answer();
        send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    }
    ~raw_stdio_server() {
        std::fclose(to_);
        std::fclose(from_);
        ::kill(pid_, SIGTERM);
        int status;
        ::waitpid(pid_, &status, 0);
    }

    double calls(std::int64_t n, int concurrency) {
        const auto start = std::chrono::steady_clock::now();
        std::int64_t sent = 0;
        for (; sent < std::min<std::int64_t>(n, concurrency); ++sent)
            send_call(sent);
        std::fflush(to_);
        for (std::int64_t answered = 0; answered < n; ++answered) {
            wait_answer();
            if (sent < n) {
                send_call(sent++);
                std::fflush(to_);
            }
        }
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }

private:
    void send(const char* line) {
        std::fputs(line, to_);
        std::fputc('\n', to_);
        std::fflush(to_);
    }
    void send_call(std::int64_t id) {
        std::fprintf(to_,
                     R"({"jsonrpc":"2.0","id":%lld,"method":"tools/call","params":{"name":"echo",)"
                     R"("arguments":{"message":"bench"}}})"
                     "\n",
                     static_cast<long long>(id + 1));
    }
    void wait_answer() {
        static char buf[1 << 16];
        for (;;) {
            if (std::fgets(buf, sizeof buf, from_) == nullptr) throw std::runtime_error("the server ended");
            if (std::strstr(buf, "\"result\"") != nullptr) return;
        }
    }
    pid_t pid_;
    std::FILE* to_;
    std::FILE* from_;
};

sdk_client& typescript_client(bool http) {
    static std::unique_ptr<sdk_client> stdio, over_http;
    auto& slot = http ? over_http : stdio;
    if (!slot)
        slot = http ? std::make_unique<sdk_client>("http", everything_http().url())
                    : std::make_unique<sdk_client>("stdio", everything_module());
    return *slot;
}

enum class caller { threads, coroutines, typescript, raw };

template <bool Http, caller Caller>
void BM_mcp_tools_call(benchmark::State& state) {
    if (!servers_installed()) {
        state.SkipWithError("server-everything is not installed: run cmake/install-deps.sh");
        return;
    }
    const int concurrency = static_cast<int>(state.range(0));
    const std::int64_t batch = batch_of(concurrency);
    try {
        for (auto _ : state) {
            static std::unique_ptr<raw_stdio_server> raw;
            if (Caller == caller::raw && !raw) raw = std::make_unique<raw_stdio_server>();
            const double seconds = Caller == caller::raw ? raw->calls(batch, concurrency)
                                   : Caller == caller::typescript
                                       ? typescript_client(Http).calls(batch, concurrency)
                                   : Caller == caller::coroutines
                                       ? agentware_async_calls(agentware_client(Http), batch, concurrency)
                                       : agentware_calls(agentware_client(Http), batch, concurrency);
            state.SetIterationTime(seconds);
        }
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
        return;
    }
    state.SetItemsProcessed(state.iterations() * batch);
}

void concurrency(benchmark::internal::Benchmark* b) {
    b->ArgName("in_flight")->Arg(1)->Arg(64)->UseManualTime()->Unit(benchmark::kMicrosecond);
}

} // namespace

BENCHMARK(BM_mcp_tools_call<false, caller::coroutines>)->Name("BM_mcp_stdio/agentware")->Apply(concurrency);
BENCHMARK(BM_mcp_tools_call<false, caller::threads>)
    ->Name("BM_mcp_stdio/agentware_threads")
    ->Apply(concurrency);
BENCHMARK(BM_mcp_tools_call<false, caller::typescript>)
    ->Name("BM_mcp_stdio/typescript_sdk")
    ->Apply(concurrency);
BENCHMARK(BM_mcp_tools_call<false, caller::raw>)->Name("BM_mcp_stdio/no_client_floor")->Apply(concurrency);
BENCHMARK(BM_mcp_tools_call<true, caller::threads>)
    ->Name("BM_mcp_http/agentware_threads")
    ->Apply(concurrency);
BENCHMARK(BM_mcp_tools_call<true, caller::typescript>)
    ->Name("BM_mcp_http/typescript_sdk")
    ->Apply(concurrency);

BENCHMARK_MAIN();
