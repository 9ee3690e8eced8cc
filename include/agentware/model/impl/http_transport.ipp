#ifndef AGENTWARE_MODEL_IMPL_HTTP_TRANSPORT_IPP
#define AGENTWARE_MODEL_IMPL_HTTP_TRANSPORT_IPP

// The HTTP transport's implementation: in every translation unit that
// includes http_transport.hpp (header-only), or once in <agentware/src.hpp>
// (AGENTWARE_SEPARATE_COMPILATION).

#include <agentware/detail/blocking_runner.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/message/detail/base64.hpp>
#include <agentware/model/detail/call_control.hpp>
#include <agentware/model/error.hpp>
#include <agentware/model/http_transport.hpp>
#include <agentware/model/retry.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

namespace detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using steady_clock = std::chrono::steady_clock;

std::string url::authority() const {
    const bool default_port = (tls() && port == "443") || (!tls() && port == "80");
    const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    return default_port ? h : h + ":" + port;
}

url parse_url(std::string_view text) {
    auto fail = [&](std::string_view why) -> model_error {
        return model_error(model_error_kind::configuration,
                           detail::format("invalid URL \"{}\": {}", text, why));
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

bool no_proxy_covers(std::string_view list, std::string_view host) {
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

bool is_localhost_name(std::string_view host) {
    if (!host.empty() && host.back() == '.') host.remove_suffix(1);
    constexpr std::string_view name = "localhost";
    if (host.size() < name.size()) return false;
    const std::string_view tail = host.substr(host.size() - name.size());
    for (std::size_t i = 0; i < name.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(tail[i])) != name[i]) return false;
    return host.size() == name.size() || host[host.size() - name.size() - 1] == '.';
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

struct connection {
    std::string key;
    asio::any_io_executor executor;
    std::optional<beast::tcp_stream> plain;
    std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
    beast::flat_buffer buffer;

    beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
};

/// What an http_transport owns: its options, TLS context and idle connections.
struct http_transport_state {
    explicit http_transport_state(http_options options)
        : options_(std::move(options)), ssl_(asio::ssl::context::tls_client) {
        ssl_.set_default_verify_paths();
        if (!options_.ca_file.empty()) {
            boost::system::error_code ec;
            ssl_.load_verify_file(options_.ca_file, ec);
            if (ec)
                throw model_error(
                    model_error_kind::configuration,
                    detail::format("cannot load CA file \"{}\": {}", options_.ca_file, ec.message()));
        }
        ssl_.set_verify_mode(options_.verify_peer ? asio::ssl::verify_peer : asio::ssl::verify_none);
    }

    ~http_transport_state() { close_idle_connections(); }

    void close_idle_connections() {
        std::vector<std::unique_ptr<connection>> drop;
        std::lock_guard lock(mutex_);
        drop.swap(idle_);
    }

    std::size_t idle_connections() const {
        std::lock_guard lock(mutex_);
        return idle_.size();
    }

    boost::asio::awaitable<void> post(const url& target_url, const http_request_spec& request,
                                      http_response_sink& sink, call_control& control) {
        namespace asio = boost::asio;
        const auto executor = co_await asio::this_coro::executor;
        const auto deadline = steady_clock::now() + options_.total_timeout;
        const std::optional<url> proxy = proxy_for(target_url, options_);
        const std::string key =
            target_url.scheme + "://" + target_url.authority() + (proxy ? "|" + proxy->authority() : "");

        std::unique_ptr<connection> conn = take_idle(key, executor);
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

    enum class exchange_result { reusable, done, stale };

    std::unique_ptr<connection> take_idle(const std::string& key, const boost::asio::any_io_executor& ex) {
        std::lock_guard lock(mutex_);
        for (auto it = idle_.rbegin(); it != idle_.rend(); ++it) {
            if ((*it)->key == key && (*it)->executor == ex) {
                std::unique_ptr<connection> c = std::move(*it);
                idle_.erase(std::next(it).base());
                return c;
            }
        }
        return nullptr;
    }

    void give_idle(std::unique_ptr<connection> c) {
        std::unique_ptr<connection> dropped;
        std::lock_guard lock(mutex_);
        if (options_.max_idle_connections == 0) return;
        if (idle_.size() >= options_.max_idle_connections) {
            dropped = std::move(idle_.front());
            idle_.erase(idle_.begin());
        }
        idle_.push_back(std::move(c));
    }

    /// The time left before `deadline`, at most `limit`; a timeout error when none is left.
    static std::chrono::milliseconds budget(steady_clock::time_point deadline,
                                            std::chrono::milliseconds limit,
                                            std::chrono::milliseconds total) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady_clock::now());
        if (left.count() <= 0)
            throw model_error(model_error_kind::timeout,
                              detail::format("the call exceeded its total timeout of {} ms", total.count()));
        return std::min(left, limit);
    }

    model_error io_error(const boost::system::error_code& ec, std::string_view during,
                         std::chrono::milliseconds limit, steady_clock::time_point deadline) const {
        if (ec == boost::beast::error::timeout) {
            if (steady_clock::now() >= deadline - std::chrono::milliseconds(5))
                return model_error(model_error_kind::timeout,
                                   detail::format("the call exceeded its total timeout of {} ms",
                                                  options_.total_timeout.count()));
            return model_error(model_error_kind::timeout,
                               detail::format("timeout {} (no progress for {} ms)", during, limit.count()));
        }
        return model_error(model_error_kind::connection,
                           detail::format("connection error {}: {}", during, ec.message()));
    }

    boost::asio::awaitable<std::unique_ptr<connection>>
    connect(const url& target, const std::optional<url>& proxy, const std::string& key,
            steady_clock::time_point deadline, call_control& control) {
        namespace asio = boost::asio;
        namespace beast = boost::beast;
        namespace http = boost::beast::http;
        const auto executor = co_await asio::this_coro::executor;
        throw_if_cancelled(control);

        const url& first_hop = proxy ? *proxy : target;
        boost::system::error_code ec;
        std::vector<tcp::endpoint> endpoints;
        if (is_localhost_name(first_hop.host)) {
            // RFC 6761: the loopback addresses, IPv4 first (where most local
            // servers listen), without the resolver.
            const unsigned long number = std::stoul(first_hop.port);
            if (number > 65535)
                throw model_error(model_error_kind::connection,
                                  detail::format("cannot connect to {}: port {} is out of range",
                                                 first_hop.host, first_hop.port));
            const auto port = static_cast<unsigned short>(number);
            endpoints = {tcp::endpoint(asio::ip::address_v4::loopback(), port),
                         tcp::endpoint(asio::ip::address_v6::loopback(), port)};
        } else {
            tcp::resolver resolver(executor);
            const auto results = co_await resolver.async_resolve(
                first_hop.host, first_hop.port, asio::redirect_error(asio::use_awaitable, ec));
            throw_if_cancelled(control);
            if (ec)
                throw model_error(model_error_kind::connection,
                                  detail::format("cannot resolve {}: {}", first_hop.host, ec.message()));
            for (const auto& entry : results)
                endpoints.push_back(entry.endpoint());
        }

        auto conn = std::make_unique<connection>();
        conn->key = key;
        conn->executor = executor;
        conn->plain.emplace(executor);
        watch_guard guard{control};
        control.watch(&*conn->plain);

        const auto connect_limit = budget(deadline, options_.connect_timeout, options_.total_timeout);
        conn->plain->expires_after(connect_limit);
        co_await conn->plain->async_connect(endpoints, asio::redirect_error(asio::use_awaitable, ec));
        throw_if_cancelled(control);
        if (ec) {
            if (ec == beast::error::timeout)
                throw model_error(model_error_kind::timeout,
                                  detail::format("connect timeout: {}:{} did not accept within {} ms",
                                                 first_hop.host, first_hop.port, connect_limit.count()));
            throw model_error(
                model_error_kind::connection,
                detail::format("cannot connect to {}:{}: {}", first_hop.host, first_hop.port, ec.message()));
        }
        conn->plain->socket().set_option(tcp::no_delay(true), ec);

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
            throw_if_cancelled(control);
            if (ec) throw io_error(ec, "talking to the proxy", limit, deadline);
            const unsigned status = parser.get().result_int();
            if (status != 200)
                throw model_error(model_error_kind::connection,
                                  detail::format("the proxy {} refused the tunnel to {}: HTTP {}",
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
            throw_if_cancelled(control);
            if (ec)
                throw io_error(ec, detail::format("in the TLS handshake with {}", target.host), limit,
                               deadline);
        }
        co_return conn;
    }

    boost::asio::awaitable<exchange_result> exchange(connection& conn, const url& target,
                                                     const http_request_spec& spec, http_response_sink& sink,
                                                     steady_clock::time_point deadline, call_control& control,
                                                     bool reused) {
        if (conn.tls)
            co_return co_await exchange_on(*conn.tls, conn, target, spec, sink, deadline, control, reused);
        co_return co_await exchange_on(*conn.plain, conn, target, spec, sink, deadline, control, reused);
    }

    template <class Stream>
    boost::asio::awaitable<exchange_result>
    exchange_on(Stream& stream, connection& conn, const url& target, const http_request_spec& spec,
                http_response_sink& sink, steady_clock::time_point deadline, call_control& control,
                bool reused) {
        namespace asio = boost::asio;
        namespace beast = boost::beast;
        namespace http = boost::beast::http;
        watch_guard guard{control};
        control.watch(&conn.lowest());
        throw_if_cancelled(control);

        const http::verb verb = spec.method == "POST" ? http::verb::post : http::string_to_verb(spec.method);
        if (verb == http::verb::unknown)
            throw model_error(model_error_kind::configuration, "unknown HTTP method " + spec.method);
        std::string request_target = target.path + spec.target;
        if (request_target.empty()) request_target = "/"; // a URL without a path names the root
        http::request<http::string_body> request{verb, request_target, 11};
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
        throw_if_cancelled(control);
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
        throw_if_cancelled(control);
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
            h.retry_after = parse_retry_after(ms->value(), true);
        if (!h.retry_after)
            if (const auto ra = head.find(http::field::retry_after); ra != head.end())
                h.retry_after = parse_retry_after(ra->value());
        for (const auto& field : head)
            h.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
        if (sink.on_head) sink.on_head(h);

        std::array<char, 16384> chunk{};
        while (!parser.is_done()) {
            parser.get().body().data = chunk.data();
            parser.get().body().size = chunk.size();
            limit = budget(deadline, options_.first_byte_timeout, options_.total_timeout);
            conn.lowest().expires_after(limit);
            co_await http::async_read_some(stream, conn.buffer, parser,
                                           asio::redirect_error(asio::use_awaitable, ec));
            throw_if_cancelled(control);
            if (ec == http::error::need_buffer) ec = {};
            const std::size_t got = chunk.size() - parser.get().body().size;
            if (got != 0 && sink.on_data && !sink.on_data(std::string_view(chunk.data(), got)))
                co_return parser.is_done() && parser.keep_alive() ? exchange_result::reusable
                                                                  : exchange_result::done;
            if (ec) {
                if (ec == beast::error::timeout)
                    throw io_error(ec, "reading the response (the server stalled)", limit, deadline);
                throw model_error(model_error_kind::connection,
                                  detail::format("the connection dropped mid-response: {}", ec.message()));
            }
        }
        conn.lowest().expires_never();
        co_return parser.keep_alive() ? exchange_result::reusable : exchange_result::done;
    }

    http_options options_;
    boost::asio::ssl::context ssl_;
    mutable std::mutex mutex_;
    // Declared before idle_ so that the connections bound to its contexts go first.
    blocking_runner runner_;
    std::vector<std::unique_ptr<connection>> idle_;
};

} // namespace detail

http_transport::http_transport(http_options options)
    : state_(std::make_unique<detail::http_transport_state>(std::move(options))) {}

http_transport::~http_transport() = default;

const http_options& http_transport::options() const noexcept { return state_->options_; }

void http_transport::close_idle_connections() { state_->close_idle_connections(); }

std::size_t http_transport::idle_connections() const { return state_->idle_connections(); }

boost::asio::awaitable<void> http_transport::post(const detail::url& target_url,
                                                  const http_request_spec& request, http_response_sink& sink,
                                                  detail::call_control& control) {
    return state_->post(target_url, request, sink, control);
}

detail::blocking_runner& http_transport::runner() noexcept { return state_->runner_; }

} // namespace agentware

#endif
