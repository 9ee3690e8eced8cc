#ifndef AGENTWARE_MODEL_HTTP_TRANSPORT_HPP
#define AGENTWARE_MODEL_HTTP_TRANSPORT_HPP

// HTTP/1.1 and HTTPS on Boost.Beast for the model clients: keep-alive
// connection reuse, HTTPS_PROXY through CONNECT, connect/first-byte/total
// timeouts, cancellation, and bodies handed over as they arrive (for SSE).
// Beast and OpenSSL are in the implementation (impl/http_transport.ipp):
// with AGENTWARE_SEPARATE_COMPILATION this header includes neither.

#include <agentware/detail/config.hpp>

#include <boost/asio/awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <memory>
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
    std::string target;          ///< path and query
    std::string method = "POST"; ///< also "GET", "DELETE" (MCP's Streamable HTTP)
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
};

struct http_response_head {
    int status = 0;
    std::string content_type;
    std::optional<std::chrono::milliseconds> retry_after;
    /// Every header field, names as sent (MCP reads `Mcp-Session-Id`).
    std::vector<std::pair<std::string, std::string>> headers;
    /// The value of header `name` (case-insensitive), or "".
    std::string header(std::string_view name) const {
        for (const auto& [n, v] : headers)
            if (n.size() == name.size() && std::equal(n.begin(), n.end(), name.begin(), [](char a, char b) {
                    return (a | 0x20) == (b | 0x20);
                }))
                return v;
        return {};
    }
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

class blocking_runner;
class call_control;
struct http_transport_state;

struct url {
    std::string scheme; ///< "http" or "https"
    std::string host;
    std::string port;
    std::string path; ///< without a trailing '/'
    std::string userinfo;

    bool tls() const noexcept { return scheme == "https"; }
    /// The Host header: the port only when not the scheme's default.
    AGENTWARE_DECL std::string authority() const;
};

/// Splits an http(s) URL. Throws model_error (configuration) for anything else.
AGENTWARE_DECL url parse_url(std::string_view text);

/// The environment variable `name`, or "" when unset.
inline std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr ? std::string() : std::string(v);
}

/// Whether NO_PROXY (a comma list of host suffixes, or "*") covers `host`.
AGENTWARE_DECL bool no_proxy_covers(std::string_view list, std::string_view host);

/// Whether `host` is `localhost` or a name under it (`api.localhost`), in any
/// case, with or without a final dot: such names are the loopback addresses
/// and are connected to without asking the system resolver (RFC 6761, as
/// curl and browsers do), so local model servers work where /etc/hosts is
/// missing.
AGENTWARE_DECL bool is_localhost_name(std::string_view host);

} // namespace detail

/// Sends requests and keeps idle connections for reuse. Thread-safe; shared
/// by the copies of a client. Connections are tied to the executor of the
/// call that opened them, so destroy the transport (or call
/// close_idle_connections) before an io_context it was used with.
class http_transport {
public:
    /// Throws model_error (configuration) when `options.ca_file` cannot be loaded.
    AGENTWARE_DECL explicit http_transport(http_options options = {});
    http_transport(const http_transport&) = delete;
    http_transport& operator=(const http_transport&) = delete;
    AGENTWARE_DECL ~http_transport();

    AGENTWARE_DECL const http_options& options() const noexcept;

    /// Drops every kept-alive connection.
    AGENTWARE_DECL void close_idle_connections();
    AGENTWARE_DECL std::size_t idle_connections() const;

    /// POSTs `request` to `target_url` (whose path is the request's prefix) on
    /// the calling coroutine's executor and feeds the response to `sink`.
    /// Throws model_error (connection, timeout, cancelled) for transport failures.
    AGENTWARE_DECL boost::asio::awaitable<void> post(const detail::url& target_url,
                                                     const http_request_spec& request,
                                                     http_response_sink& sink, detail::call_control& control);

    /// Where the blocking `invoke` of a client runs its call. Sequential calls
    /// from one thread reuse one io_context, and so its kept-alive connections.
    AGENTWARE_DECL detail::blocking_runner& runner() noexcept;

private:
    std::unique_ptr<detail::http_transport_state> state_;
};

} // namespace agentware

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/model/impl/http_transport.ipp>
#endif

#endif
