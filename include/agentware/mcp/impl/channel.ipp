#ifndef AGENTWARE_MCP_IMPL_CHANNEL_IPP
#define AGENTWARE_MCP_IMPL_CHANNEL_IPP

// What the MCP client's channels share: the interface the protocol
// (impl/client.ipp) sends through, stdio (impl/stdio_channel.ipp) and
// Streamable HTTP (impl/http_channel.ipp) implement it, and the small
// helpers they and the protocol use.

#include <agentware/mcp/client.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

namespace agentware::mcp::detail {

/// At most `n` bytes of `s`, for error messages.
inline std::string excerpt(std::string_view s, std::size_t n = 200) {
    if (s.size() <= n) return std::string(s);
    return std::string(s.substr(0, n)) + "...";
}

/// `notifications/cancelled` for the request `id`.
inline boost::json::object cancelled_notification(std::int64_t id, std::string_view reason) {
    return {{"jsonrpc", "2.0"},
            {"method", "notifications/cancelled"},
            {"params", boost::json::object{{"requestId", id}, {"reason", reason}}}};
}

/// Whether requests of a session at `version` carry the MCP-Protocol-Version
/// header over HTTP: 2025-06-18 added it, 2025-03-26 has none.
inline bool has_version_header(std::string_view version) { return version != "2025-03-26"; }

/// How long the POST of a `notifications/cancelled` may take (HTTP): the
/// caller is already giving up, and waits this long at most more.
inline constexpr std::chrono::milliseconds cancel_notification_timeout{2'000};

/// What a channel calls with each message it receives, and when it fails.
struct channel_events {
    std::function<void(boost::json::value&&)> deliver;
    std::function<void(const mcp_error&)> fail;
};

/// Where an SSE stream of the server's stopped: what resumes it (a GET with
/// `Last-Event-ID`, after the `retry` delay).
struct resume_point {
    std::string last_event_id;
    std::optional<std::chrono::milliseconds> retry;
};

class channel {
public:
    virtual ~channel() = default;
    virtual void start() = 0;
    /// Sends one message. A multiplexed channel returns at once (answers come
    /// through `deliver` from its reader); the HTTP channel returns once the
    /// answer to this POST has been delivered, or throws mcp_error
    /// (cancelled) once `stop` is requested.
    /// The HTTP channel returns where the answer's SSE stream stopped when
    /// its events had ids (the stream can be resumed). It waits at most
    /// `timeout` (zero: its transport's limits) and then throws mcp_error
    /// (timeout); a 2025-era request it gives up on that way or on `stop` is
    /// first cancelled with `notifications/cancelled`. (A multiplexed channel
    /// ignores `timeout`: its caller waits, and cancels.)
    virtual std::optional<resume_point> send(const boost::json::object& msg, std::string_view method,
                                             std::string_view name, const std::stop_token& stop,
                                             std::chrono::milliseconds timeout) = 0;
    /// Resumes a stream that ended before `answered()`, until it is true, the
    /// server refuses, or `timeout` passes. False when it could not resume.
    virtual bool resume(resume_point, const std::stop_token&, std::chrono::milliseconds /*timeout*/,
                        const std::function<bool()>& /*answered*/) {
        return false;
    }
    /// Opens the session's standalone stream, on which the server sends
    /// requests and notifications that belong to no request (HTTP).
    virtual void open_listener() {}
    virtual bool multiplexed() const noexcept = 0;
    virtual bool alive() const noexcept = 0;
    virtual void shutdown() = 0;
    virtual std::string stderr_tail() const { return {}; }
    virtual void set_era(protocol_era, std::string_view /*version*/) {}
};

} // namespace agentware::mcp::detail

#endif
