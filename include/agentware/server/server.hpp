#ifndef AGENTWARE_SERVER_SERVER_HPP
#define AGENTWARE_SERVER_SERVER_HPP

// The agent server: HTTP/1.1 on Boost.Beast, one Asio coroutine per
// connection, the LangGraph API (api.hpp) and any routes a program adds.
// Safe by default: it binds 127.0.0.1, every limit has a value (body and
// header size, idle and header-read time, SSE readers per run, connections),
// and with a token every route but the CORS preflight needs it.
//
//     agentware::server::file_store store("data");
//     agentware::server::agent_server srv(store, {make_assistant("agent", make_my_agent)});
//     srv.listen();          // 127.0.0.1, a free port
//     srv.run();             // until stop()

#include <agentware/server/api.hpp>
#include <agentware/server/http.hpp>
#include <agentware/server/run_manager.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace agentware::server {

struct server_options {
    std::string host = "127.0.0.1";
    unsigned short port = 0; ///< 0: a free port (see agent_server::port())
    /// Bearer token every request must carry (`Authorization: Bearer ...` or
    /// `X-Api-Key`); empty: no authentication.
    std::string auth_token;
    /// Origins a browser may call from; "*" (the default) allows any.
    std::vector<std::string> cors_origins{"*"};
    std::size_t max_body_bytes = 10 * 1024 * 1024;
    std::size_t max_upload_bytes = 100 * 1024 * 1024; ///< bodies of multipart uploads
    std::size_t max_header_bytes = 16 * 1024;
    std::chrono::seconds header_timeout{10};   ///< a request's head must arrive within this (slow clients)
    std::chrono::seconds idle_timeout{60};     ///< a kept-alive connection with no request is closed
    std::chrono::seconds body_timeout{120};    ///< the whole body
    std::chrono::milliseconds heartbeat{5000}; ///< SSE `: heartbeat` and wait/join newlines when idle
    std::size_t max_readers_per_run = 64;
    std::size_t max_connections = 20000;
    std::size_t io_threads = 2;
    std::chrono::seconds shutdown_grace{10}; ///< how long stop() waits for cancelled runs to end
    run_manager_options runs;
    std::function<void(const std::string&)> log; ///< warnings and failures, one line each
};

class agent_server {
public:
    agent_server(store& s, std::vector<assistant_spec> assistants, server_options o = {})
        : options_(std::move(o)),
          runs_(s, std::move(assistants), io_.get_executor(), with_log(options_.runs, options_.log)),
          api_(runs_), acceptor_(io_) {
        api_.add_routes(router_);
    }
    ~agent_server() { stop(); }

    /// Routes of the program's own (DeerFlow's gateway, say), beside the API.
    server::router& routes() noexcept { return router_; }
    run_manager& runs() noexcept { return runs_; }
    langgraph_api& api() noexcept { return api_; }
    const server_options& options() const noexcept { return options_; }

    /// Binds and listens (throws when the address is taken or invalid).
    void listen() {
        namespace ip = boost::asio::ip;
        const auto address = ip::make_address(options_.host);
        ip::tcp::endpoint endpoint(address, options_.port);
        acceptor_.open(endpoint.protocol());
        acceptor_.set_option(ip::tcp::acceptor::reuse_address(true));
        acceptor_.bind(endpoint);
        acceptor_.listen(boost::asio::socket_base::max_listen_connections);
        if (!address.is_loopback() && options_.auth_token.empty() && options_.log)
            options_.log(agentware::detail::format(
                "warning: listening on {} without authentication: anyone who can reach it can run the agents "
                "(set a token, or bind 127.0.0.1)",
                options_.host));
        boost::asio::co_spawn(accept_strand_, serve(), boost::asio::detached);
    }
    unsigned short port() const { return acceptor_.local_endpoint().port(); }
    std::string url() const {
        const auto ep = acceptor_.local_endpoint();
        const std::string host =
            ep.address().is_v6() ? "[" + ep.address().to_string() + "]" : ep.address().to_string();
        return agentware::detail::format("http://{}:{}", host, ep.port());
    }

    /// Serves until stop(), on `io_threads` threads (this one included).
    void run() {
        std::vector<std::jthread> more;
        for (std::size_t i = 1; i < options_.io_threads; ++i)
            more.emplace_back([this] { io_.run(); });
        io_.run();
    }
    /// Stops accepting, cancels the runs in progress (they end interrupted and
    /// their threads keep their last checkpoint), and ends run() once they
    /// have (or after `shutdown_grace`). Returns at once; safe from any thread.
    void stop() {
        if (stopped_.exchange(true)) return;
        runs_.begin_shutdown();
        boost::asio::co_spawn(io_, drain(), boost::asio::detached);
    }
    boost::asio::io_context& io_context() noexcept { return io_; }

private:
    static run_manager_options with_log(run_manager_options o,
                                        const std::function<void(const std::string&)>& log) {
        if (!o.log) o.log = log;
        return o;
    }

    boost::asio::awaitable<void> drain() {
        boost::asio::post(accept_strand_, [this] { // the acceptor is the accept loop's: closed on its strand
            boost::system::error_code ignore;
            acceptor_.close(ignore);
        });
        const auto until = std::chrono::steady_clock::now() + options_.shutdown_grace;
        boost::asio::steady_timer wait(io_);
        while (!runs_.drained() && std::chrono::steady_clock::now() < until) {
            wait.expires_after(std::chrono::milliseconds(10));
            co_await wait.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
        }
        io_.stop();
    }

    // Connections wait in the listen queue until the runs the last process
    // left behind are settled (or, with a shared run queue, its worker is
    // up): no client sees a run of a dead process as running.
    boost::asio::awaitable<void> serve() {
        try {
            co_await runs_.start();
        } catch (const std::exception& e) {
            if (options_.log)
                options_.log(agentware::detail::format("cannot recover the runs left behind: {}", e.what()));
        }
        co_await accept_loop();
    }

    boost::asio::awaitable<void> accept_loop() {
        for (;;) {
            auto [ec, socket] = co_await acceptor_.async_accept(
                boost::asio::make_strand(io_), boost::asio::as_tuple(boost::asio::use_awaitable));
            if (ec) {
                if (!acceptor_.is_open()) co_return;
                continue;
            }
            if (connections_.load() >= options_.max_connections) {
                boost::system::error_code ignore;
                socket.close(ignore);
                continue;
            }
            auto ex = socket.get_executor();
            boost::asio::co_spawn(ex, session(std::move(socket)), boost::asio::detached);
        }
    }

    // The CORS origin to allow for a request's Origin, or "" (none).
    std::string allowed_origin(const std::string& origin) const {
        for (const auto& o : options_.cors_origins) {
            if (o == "*") return "*";
            if (!origin.empty() && o == origin) return origin;
        }
        return {};
    }

    bool authorized(const http_request& req) const {
        if (options_.auth_token.empty()) return true;
        auto equal = [&](std::string_view given) {
            // The same time whatever the first difference.
            const std::string& want = options_.auth_token;
            unsigned char diff = given.size() == want.size() ? 0 : 1;
            for (std::size_t i = 0; i < given.size(); ++i)
                diff |= static_cast<unsigned char>(given[i] ^ want[i % want.size()]);
            return diff == 0;
        };
        const std::string auth = req.header("authorization");
        if (auth.size() > 7 && (auth.starts_with("Bearer ") || auth.starts_with("bearer ")) &&
            equal(std::string_view(auth).substr(7)))
            return true;
        const std::string key = req.header("x-api-key");
        return !key.empty() && equal(key);
    }

    boost::asio::awaitable<http_response> handle(http_request& req) {
        if (req.method == "OPTIONS") {
            auto r = http_response::empty(204);
            r.headers.emplace_back("access-control-allow-methods", "GET, POST, PUT, PATCH, DELETE, OPTIONS");
            const std::string asked = req.header("access-control-request-headers");
            r.headers.emplace_back("access-control-allow-headers", asked.empty() ? "*" : asked);
            r.headers.emplace_back("access-control-max-age", "600");
            co_return r;
        }
        if (!authorized(req)) {
            auto r = http_response::text(
                401, "Unauthorized: give the server's token as `Authorization: Bearer ...`");
            r.headers.emplace_back("www-authenticate", "Bearer");
            co_return r;
        }
        // DeerFlow's web UI calls the LangGraph API under /api/langgraph (its nginx strips the prefix).
        if (req.path == "/api/langgraph" || req.path.starts_with("/api/langgraph/")) {
            req.path.erase(0, std::string_view("/api/langgraph").size());
            if (req.path.empty()) req.path = "/";
        }
        try {
            co_return co_await router_.dispatch(req);
        } catch (const json_error& e) {
            co_return validation_error(e);
        } catch (const std::invalid_argument& e) {
            co_return validation_error(json_error("", e.what()));
        } catch (const std::exception& e) {
            if (options_.log)
                options_.log(agentware::detail::format("{} {}: {}", req.method, req.path, e.what()));
            co_return http_response::text(500, "Internal Server Error");
        }
    }

    boost::asio::awaitable<void> session(boost::asio::ip::tcp::socket socket);

    server_options options_;
    // Before the event loop: the sessions' coroutines, which the loop's
    // destructor may destroy while they wait, count themselves here.
    std::atomic<std::size_t> connections_{0};
    std::atomic<bool> stopped_{false};
    boost::asio::io_context io_; // before the runs: their coroutines live on it
    run_manager runs_;
    langgraph_api api_;
    server::router router_;
    boost::asio::strand<boost::asio::io_context::executor_type> accept_strand_{boost::asio::make_strand(io_)};
    boost::asio::ip::tcp::acceptor acceptor_;
};

} // namespace agentware::server

#include <agentware/server/detail/session.hpp>

#endif
