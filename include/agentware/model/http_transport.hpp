#ifndef AGENTWARE_MODEL_HTTP_TRANSPORT_HPP
#define AGENTWARE_MODEL_HTTP_TRANSPORT_HPP

// HTTP/1.1 and HTTPS on Boost.Beast for the model clients: keep-alive
// connection reuse, HTTPS_PROXY through CONNECT, connect/first-byte/total
// timeouts, cancellation, and bodies handed over as they arrive (for SSE).
// This is the only header of the model layer that compiles Beast and OpenSSL.

#include <agentware/detail/blocking_runner.hpp>
#include <agentware/message/detail/base64.hpp>
#include <agentware/model/error.hpp>
#include <agentware/model/retry.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// Connection settings of a model client.
struct http_options {
    std::chrono::milliseconds connect_timeout{10'000};
    /// Longest wait for the response head, and for each further piece of the
    /// body (a stream that goes silent this long has stalled).
    std::chrono::milliseconds first_byte_timeout{120'000};
    /// Longest time for one attempt, from connecting to the last byte.
    std::chrono::milliseconds total_timeout{600'000};
    /// An http:// proxy for https:// targets, tunnelled with CONNECT. Empty:
    /// HTTPS_PROXY / https_proxy from the environment unless NO_PROXY excludes the host.
    std::string proxy;
    bool use_environment_proxy = true;
    bool verify_peer = true; ///< verify the server certificate against the system store
    std::string ca_file;     ///< an extra CA bundle in PEM (company gateways, tests)
    std::size_t max_idle_connections = 8;
    std::size_t max_body_bytes = 64u << 20; ///< of a non-streamed response
};

/// One HTTP request, without the host (the transport adds it).
struct http_request_spec {
    std::string target; ///< path and query
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
};

struct http_response_head {
    int status = 0;
    std::string content_type;
    std::optional<std::chrono::milliseconds> retry_after;
};

/// Receives a response: its head once, then its body in pieces as they arrive.
/// Either may throw (a model_error) to abandon the response. `on_data`
/// returns false when it needs no more (a stream that said it is finished),
/// so a server that keeps the body open afterwards cannot hold the call.
struct http_response_sink {
    std::function<void(const http_response_head&)> on_head;
    std::function<bool(std::string_view)> on_data;
};

namespace detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using steady_clock = std::chrono::steady_clock;

struct url {
    std::string scheme; ///< "http" or "https"
    std::string host;
    std::string port;
    std::string path; ///< without a trailing '/'
    std::string userinfo;

    bool tls() const noexcept { return scheme == "https"; }
    /// The Host header: the port only when not the scheme's default.
    std::string authority() const {
        const bool default_port = (tls() && port == "443") || (!tls() && port == "80");
        const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
        return default_port ? h : h + ":" + port;
    }
};

/// Splits an http(s) URL. Throws model_error (configuration) for anything else.
inline url parse_url(std::string_view text) {
    auto fail = [&](std::string_view why) -> model_error {
        return model_error(model_error_kind::configuration, fmt::format("invalid URL \"{}\": {}", text, why));
    };
    url u;
    const std::size_t sep = text.find("://");
    if (sep == std::string_view::npos) throw fail("expected http:// or https://");
    u.scheme = std::string(text.substr(0, sep));
    std::transform(u.scheme.begin(), u.scheme.end(), u.scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (u.scheme != "http" && u.scheme != "https") throw fail("expected http:// or https://");
    std::string_view rest = text.substr(sep + 3);
    const std::size_t slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    u.path = slash == std::string_view::npos ? std::string() : std::string(rest.substr(slash));
    while (!u.path.empty() && u.path.back() == '/')
        u.path.pop_back();
    if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
        u.userinfo = std::string(authority.substr(0, at));
        authority.remove_prefix(at + 1);
    }
    if (!authority.empty() && authority.front() == '[') { // IPv6 literal
        const std::size_t close = authority.find(']');
        if (close == std::string_view::npos) throw fail("unclosed '['");
        u.host = std::string(authority.substr(1, close - 1));
        authority.remove_prefix(close + 1);
        if (!authority.empty() && authority.front() == ':') u.port = std::string(authority.substr(1));
    } else {
        const std::size_t colon = authority.rfind(':');
        u.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos) u.port = std::string(authority.substr(colon + 1));
    }
    if (u.host.empty()) throw fail("no host");
    if (u.port.empty()) u.port = u.tls() ? "443" : "80";
    if (u.port.find_first_not_of("0123456789") != std::string::npos) throw fail("invalid port");
    return u;
}

inline std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr ? std::string() : std::string(v);
}

/// Whether NO_PROXY (a comma list of host suffixes, or "*") covers `host`.
inline bool no_proxy_covers(std::string_view list, std::string_view host) {
    std::size_t from = 0;
    while (from <= list.size()) {
        std::size_t to = list.find(',', from);
        if (to == std::string_view::npos) to = list.size();
        std::string_view entry = list.substr(from, to - from);
        while (!entry.empty() && entry.front() == ' ')
            entry.remove_prefix(1);
        while (!entry.empty() && entry.back() == ' ')
            entry.remove_suffix(1);
        if (const std::size_t colon = entry.find(':');
            colon != std::string_view::npos && entry.find(':', colon + 1) == std::string_view::npos)
            entry = entry.substr(0, colon);
        if (!entry.empty() && entry.front() == '.') entry.remove_prefix(1);
        if (entry == "*") return true;
        if (!entry.empty() && host.size() >= entry.size() && host.ends_with(entry) &&
            (host.size() == entry.size() || host[host.size() - entry.size() - 1] == '.'))
            return true;
        from = to + 1;
    }
    return false;
}

/// The proxy an https target goes through, if any.
inline std::optional<url> proxy_for(const url& target, const http_options& options) {
    if (!target.tls()) return std::nullopt;
    std::string proxy = options.proxy;
    if (proxy.empty() && options.use_environment_proxy) {
        proxy = env_or_empty("HTTPS_PROXY");
        if (proxy.empty()) proxy = env_or_empty("https_proxy");
        std::string no_proxy = env_or_empty("NO_PROXY");
        if (no_proxy.empty()) no_proxy = env_or_empty("no_proxy");
        if (no_proxy_covers(no_proxy, target.host)) return std::nullopt;
    }
    if (proxy.empty()) return std::nullopt;
    if (proxy.find("://") == std::string::npos) proxy = "http://" + proxy;
    url p = parse_url(proxy);
    if (p.tls())
        throw model_error(model_error_kind::configuration, "an https:// proxy is not supported; use http://");
    return p;
}

/// Cancellation of one call: requested from any thread, carried out on the
/// call's executor (where its I/O objects live).
class call_control : public std::enable_shared_from_this<call_control> {
public:
    explicit call_control(asio::any_io_executor ex) : executor_(std::move(ex)) {}

    void request_cancel() {
        cancelled_ = true;
        asio::post(executor_, [self = shared_from_this()] { self->interrupt(); });
    }
    /// Also true once Asio cancelled the awaiting coroutine (per-operation cancellation).
    bool cancelled() const noexcept {
        return cancelled_ || (asio_state_ && asio_state_->cancelled() != asio::cancellation_type::none);
    }
    /// Follows the cancellation state of the coroutine making the call.
    void follow(asio::cancellation_state state) { asio_state_ = state; }

    // The I/O object to interrupt, set and cleared by the call on its executor.
    void watch(beast::tcp_stream* stream) noexcept { stream_ = stream; }
    void watch(asio::steady_timer* timer) noexcept { timer_ = timer; }
    void unwatch() noexcept {
        stream_ = nullptr;
        timer_ = nullptr;
    }

private:
    void interrupt() {
        if (stream_ != nullptr) stream_->cancel();
        if (timer_ != nullptr) timer_->cancel();
    }

    asio::any_io_executor executor_;
    std::atomic<bool> cancelled_{false};
    std::optional<asio::cancellation_state> asio_state_;
    beast::tcp_stream* stream_ = nullptr;
    asio::steady_timer* timer_ = nullptr;
};

/// Clears what a call_control watches when a scope ends, on every path.
struct watch_guard {
    call_control& control;
    ~watch_guard() { control.unwatch(); }
};

inline model_error cancelled_error() {
    return model_error(model_error_kind::cancelled, "the model call was cancelled");
}

/// Throws `cancelled` when the call was cancelled by the client or by Asio's
/// per-operation cancellation of the awaiting coroutine. Not a coroutine:
/// Asio refuses any further co_await in a cancelled coroutine.
inline void throw_if_cancelled(const call_control& control) {
    if (control.cancelled()) throw cancelled_error();
}

struct connection {
    std::string key;
    asio::any_io_executor executor;
    std::optional<beast::tcp_stream> plain;
    std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
    beast::flat_buffer buffer;

    beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
};

} // namespace detail

/// Sends requests and keeps idle connections for reuse. Thread-safe; shared
/// by the copies of a client. Connections are tied to the executor of the
/// call that opened them, so destroy the transport (or call
/// close_idle_connections) before an io_context it was used with.
class http_transport {
public:
    explicit http_transport(http_options options = {})
        : options_(std::move(options)), ssl_(detail::asio::ssl::context::tls_client) {
        ssl_.set_default_verify_paths();
        if (!options_.ca_file.empty()) {
            boost::system::error_code ec;
            ssl_.load_verify_file(options_.ca_file, ec);
            if (ec)
                throw model_error(
                    model_error_kind::configuration,
                    fmt::format("cannot load CA file \"{}\": {}", options_.ca_file, ec.message()));
        }
        ssl_.set_verify_mode(options_.verify_peer ? detail::asio::ssl::verify_peer
                                                  : detail::asio::ssl::verify_none);
    }

    http_transport(const http_transport&) = delete;
    http_transport& operator=(const http_transport&) = delete;

    ~http_transport() { close_idle_connections(); }

    const http_options& options() const noexcept { return options_; }

    /// Drops every kept-alive connection.
    void close_idle_connections() {
        std::vector<std::unique_ptr<detail::connection>> drop;
        std::lock_guard lock(mutex_);
        drop.swap(idle_);
    }

    std::size_t idle_connections() const {
        std::lock_guard lock(mutex_);
        return idle_.size();
    }

    /// POSTs `request` to `target_url` (whose path is the request's prefix) on
    /// the calling coroutine's executor and feeds the response to `sink`.
    /// Throws model_error (connection, timeout, cancelled) for transport failures.
    boost::asio::awaitable<void> post(const detail::url& target_url, const http_request_spec& request,
                                      http_response_sink& sink, detail::call_control& control) {
        namespace asio = boost::asio;
        const auto executor = co_await asio::this_coro::executor;
        const auto deadline = detail::steady_clock::now() + options_.total_timeout;
        const std::optional<detail::url> proxy = detail::proxy_for(target_url, options_);
        const std::string key =
            target_url.scheme + "://" + target_url.authority() + (proxy ? "|" + proxy->authority() : "");

        std::unique_ptr<detail::connection> conn = take_idle(key, executor);
        const bool reused = conn != nullptr;
        if (!conn) conn = co_await connect(target_url, proxy, key, deadline, control);

        exchange_result result =
            co_await exchange(*conn, target_url, request, sink, deadline, control, reused);
        if (result == exchange_result::stale) {
            // A kept-alive connection the server had closed: nothing was sent, so try a fresh one.
            conn = co_await connect(target_url, proxy, key, deadline, control);
            result = co_await exchange(*conn, target_url, request, sink, deadline, control, false);
        }
        if (result == exchange_result::reusable) give_idle(std::move(conn));
    }

    /// Runs `make()`'s coroutine to completion on a private io_context and
    /// returns its result; for the blocking `invoke` of the clients. Sequential
    /// calls from one thread reuse one io_context, and so its kept-alive connections.
    template <class T, class Make>
    T run_blocking(Make&& make) {
        return runner_.run<T>(make());
    }

private:
    enum class exchange_result { reusable, done, stale };

    std::unique_ptr<detail::connection> take_idle(const std::string& key,
                                                  const boost::asio::any_io_executor& ex) {
        std::lock_guard lock(mutex_);
        for (auto it = idle_.rbegin(); it != idle_.rend(); ++it) {
            if ((*it)->key == key && (*it)->executor == ex) {
                std::unique_ptr<detail::connection> c = std::move(*it);
                idle_.erase(std::next(it).base());
                return c;
            }
        }
        return nullptr;
    }

    void give_idle(std::unique_ptr<detail::connection> c) {
        std::unique_ptr<detail::connection> dropped;
        std::lock_guard lock(mutex_);
        if (options_.max_idle_connections == 0) return;
        if (idle_.size() >= options_.max_idle_connections) {
            dropped = std::move(idle_.front());
            idle_.erase(idle_.begin());
        }
        idle_.push_back(std::move(c));
    }

    /// The time left before `deadline`, at most `limit`; a timeout error when none is left.
    static std::chrono::milliseconds budget(detail::steady_clock::time_point deadline,
                                            std::chrono::milliseconds limit,
                                            std::chrono::milliseconds total) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - detail::steady_clock::now());
        if (left.count() <= 0)
            throw model_error(model_error_kind::timeout,
                              fmt::format("the call exceeded its total timeout of {} ms", total.count()));
        return std::min(left, limit);
    }

    model_error io_error(const boost::system::error_code& ec, std::string_view during,
                         std::chrono::milliseconds limit, detail::steady_clock::time_point deadline) const {
        if (ec == boost::beast::error::timeout) {
            if (detail::steady_clock::now() >= deadline - std::chrono::milliseconds(5))
                return model_error(model_error_kind::timeout,
                                   fmt::format("the call exceeded its total timeout of {} ms",
                                               options_.total_timeout.count()));
            return model_error(model_error_kind::timeout,
                               fmt::format("timeout {} (no progress for {} ms)", during, limit.count()));
        }
        return model_error(model_error_kind::connection,
                           fmt::format("connection error {}: {}", during, ec.message()));
    }

    boost::asio::awaitable<std::unique_ptr<detail::connection>>
    connect(const detail::url& target, const std::optional<detail::url>& proxy, const std::string& key,
            detail::steady_clock::time_point deadline, detail::call_control& control) {
        namespace asio = boost::asio;
        namespace beast = boost::beast;
        namespace http = boost::beast::http;
        const auto executor = co_await asio::this_coro::executor;
        detail::throw_if_cancelled(control);

        const detail::url& first_hop = proxy ? *proxy : target;
        boost::system::error_code ec;
        detail::tcp::resolver resolver(executor);
        const auto endpoints = co_await resolver.async_resolve(first_hop.host, first_hop.port,
                                                               asio::redirect_error(asio::use_awaitable, ec));
        detail::throw_if_cancelled(control);
        if (ec)
            throw model_error(model_error_kind::connection,
                              fmt::format("cannot resolve {}: {}", first_hop.host, ec.message()));

        auto conn = std::make_unique<detail::connection>();
        conn->key = key;
        conn->executor = executor;
        conn->plain.emplace(executor);
        detail::watch_guard guard{control};
        control.watch(&*conn->plain);

        const auto connect_limit = budget(deadline, options_.connect_timeout, options_.total_timeout);
        conn->plain->expires_after(connect_limit);
        co_await conn->plain->async_connect(endpoints, asio::redirect_error(asio::use_awaitable, ec));
        detail::throw_if_cancelled(control);
        if (ec) {
            if (ec == beast::error::timeout)
                throw model_error(model_error_kind::timeout,
                                  fmt::format("connect timeout: {}:{} did not accept within {} ms",
                                              first_hop.host, first_hop.port, connect_limit.count()));
            throw model_error(
                model_error_kind::connection,
                fmt::format("cannot connect to {}:{}: {}", first_hop.host, first_hop.port, ec.message()));
        }
        conn->plain->socket().set_option(detail::tcp::no_delay(true), ec);

        if (proxy) {
            // Ask the proxy for a tunnel; TLS then runs end to end through it.
            http::request<http::empty_body> connect_request{http::verb::connect,
                                                            target.host + ":" + target.port, 11};
            connect_request.set(http::field::host, target.host + ":" + target.port);
            if (!proxy->userinfo.empty())
                connect_request.set(http::field::proxy_authorization,
                                    "Basic " + agentware::detail::base64_encode(proxy->userinfo));
            const auto limit = budget(deadline, options_.connect_timeout, options_.total_timeout);
            conn->plain->expires_after(limit);
            co_await http::async_write(*conn->plain, connect_request,
                                       asio::redirect_error(asio::use_awaitable, ec));
            http::response_parser<http::empty_body> parser;
            parser.skip(true); // a CONNECT answer has no body
            if (!ec)
                co_await http::async_read(*conn->plain, conn->buffer, parser,
                                          asio::redirect_error(asio::use_awaitable, ec));
            detail::throw_if_cancelled(control);
            if (ec) throw io_error(ec, "talking to the proxy", limit, deadline);
            const unsigned status = parser.get().result_int();
            if (status != 200)
                throw model_error(model_error_kind::connection,
                                  fmt::format("the proxy {} refused the tunnel to {}: HTTP {}",
                                              proxy->authority(), target.authority(), status),
                                  static_cast<int>(status));
        }

        if (target.tls()) {
            conn->tls.emplace(std::move(*conn->plain), ssl_);
            conn->plain.reset();
            control.watch(&conn->lowest());
            if (!SSL_set_tlsext_host_name(conn->tls->native_handle(), target.host.c_str()))
                throw model_error(model_error_kind::connection, "cannot set the TLS server name");
            if (options_.verify_peer)
                conn->tls->set_verify_callback(asio::ssl::host_name_verification(target.host));
            const auto limit = budget(deadline, options_.connect_timeout, options_.total_timeout);
            conn->lowest().expires_after(limit);
            co_await conn->tls->async_handshake(asio::ssl::stream_base::client,
                                                asio::redirect_error(asio::use_awaitable, ec));
            detail::throw_if_cancelled(control);
            if (ec)
                throw io_error(ec, fmt::format("in the TLS handshake with {}", target.host), limit, deadline);
        }
        co_return conn;
    }

    boost::asio::awaitable<exchange_result> exchange(detail::connection& conn, const detail::url& target,
                                                     const http_request_spec& spec, http_response_sink& sink,
                                                     detail::steady_clock::time_point deadline,
                                                     detail::call_control& control, bool reused) {
        if (conn.tls)
            co_return co_await exchange_on(*conn.tls, conn, target, spec, sink, deadline, control, reused);
        co_return co_await exchange_on(*conn.plain, conn, target, spec, sink, deadline, control, reused);
    }

    template <class Stream>
    boost::asio::awaitable<exchange_result>
    exchange_on(Stream& stream, detail::connection& conn, const detail::url& target,
                const http_request_spec& spec, http_response_sink& sink,
                detail::steady_clock::time_point deadline, detail::call_control& control, bool reused) {
        namespace asio = boost::asio;
        namespace beast = boost::beast;
        namespace http = boost::beast::http;
        detail::watch_guard guard{control};
        control.watch(&conn.lowest());
        detail::throw_if_cancelled(control);

        http::request<http::string_body> request{http::verb::post, target.path + spec.target, 11};
        request.set(http::field::host, target.authority());
        request.set(http::field::user_agent, "agentware/0.1");
        for (const auto& [name, value] : spec.headers)
            request.set(name, value);
        request.body() = spec.body;
        request.prepare_payload();
        request.keep_alive(true);

        boost::system::error_code ec;
        auto limit = budget(deadline, options_.total_timeout, options_.total_timeout);
        conn.lowest().expires_after(limit);
        co_await http::async_write(stream, request, asio::redirect_error(asio::use_awaitable, ec));
        detail::throw_if_cancelled(control);
        const auto is_stale = [&] {
            return reused && (ec == http::error::end_of_stream || ec == asio::error::eof ||
                              ec == asio::error::connection_reset || ec == asio::error::broken_pipe);
        };
        if (ec) {
            if (is_stale()) co_return exchange_result::stale;
            throw io_error(ec, "sending the request", limit, deadline);
        }

        http::response_parser<http::buffer_body> parser;
        parser.body_limit(boost::none); // the sink bounds what it keeps
        limit = budget(deadline, options_.first_byte_timeout, options_.total_timeout);
        conn.lowest().expires_after(limit);
        co_await http::async_read_header(stream, conn.buffer, parser,
                                         asio::redirect_error(asio::use_awaitable, ec));
        detail::throw_if_cancelled(control);
        if (ec) {
            if (is_stale()) co_return exchange_result::stale;
            if (ec == http::error::end_of_stream)
                throw model_error(model_error_kind::connection,
                                  "the server closed the connection without answering");
            throw io_error(ec, "waiting for the response", limit, deadline);
        }

        const auto& head = parser.get();
        http_response_head h;
        h.status = static_cast<int>(head.result_int());
        h.content_type = std::string(head[http::field::content_type]);
        if (const auto ms = head.find("retry-after-ms"); ms != head.end())
            h.retry_after = detail::parse_retry_after(ms->value(), true);
        if (!h.retry_after)
            if (const auto ra = head.find(http::field::retry_after); ra != head.end())
                h.retry_after = detail::parse_retry_after(ra->value());
        if (sink.on_head) sink.on_head(h);

        std::array<char, 16384> chunk{};
        while (!parser.is_done()) {
            parser.get().body().data = chunk.data();
            parser.get().body().size = chunk.size();
            limit = budget(deadline, options_.first_byte_timeout, options_.total_timeout);
            conn.lowest().expires_after(limit);
            co_await http::async_read_some(stream, conn.buffer, parser,
                                           asio::redirect_error(asio::use_awaitable, ec));
            detail::throw_if_cancelled(control);
            if (ec == http::error::need_buffer) ec = {};
            const std::size_t got = chunk.size() - parser.get().body().size;
            if (got != 0 && sink.on_data && !sink.on_data(std::string_view(chunk.data(), got)))
                co_return parser.is_done() && parser.keep_alive() ? exchange_result::reusable
                                                                  : exchange_result::done;
            if (ec) {
                if (ec == beast::error::timeout)
                    throw io_error(ec, "reading the response (the server stalled)", limit, deadline);
                throw model_error(model_error_kind::connection,
                                  fmt::format("the connection dropped mid-response: {}", ec.message()));
            }
        }
        conn.lowest().expires_never();
        co_return parser.keep_alive() ? exchange_result::reusable : exchange_result::done;
    }

    http_options options_;
    boost::asio::ssl::context ssl_;
    mutable std::mutex mutex_;
    // Declared before idle_ so that the connections bound to its contexts go first.
    detail::blocking_runner runner_;
    std::vector<std::unique_ptr<detail::connection>> idle_;
};

} // namespace agentware

#endif
