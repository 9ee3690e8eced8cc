#ifndef AGENTWARE_MCP_CLIENT_HPP
#define AGENTWARE_MCP_CLIENT_HPP

// A Model Context Protocol client: one server, over stdio (the server as a
// child process) or Streamable HTTP (on the project's HTTP transport), in
// either era of the protocol (2025-06-18 / 2025-11-25 with `initialize`, or
// the stateless 2026-07-28 with `server/discover`). JSON-RPC 2.0 on
// Boost.JSON. The process and socket code is in impl/stdio_channel.ipp and
// impl/http_channel.ipp (the protocol in impl/client.ipp): with
// AGENTWARE_SEPARATE_COMPILATION this header includes no Beast and of Asio
// only `awaitable` (for async_call_tool).

#include <agentware/detail/config.hpp>
#include <agentware/mcp/config.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

namespace agentware::mcp {

/// The protocol revisions this client speaks.
inline constexpr std::string_view modern_protocol_version = "2026-07-28";
inline constexpr std::string_view latest_legacy_protocol_version = "2025-11-25";
/// The 2025 revisions accepted in answer to `initialize` (2025-03-26, the
/// first with Streamable HTTP, differs from the later ones in nothing this
/// client relies on).
inline constexpr std::string_view legacy_protocol_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

/// Which family of revisions a connection speaks.
enum class protocol_era {
    legacy, ///< 2025-06-18 / 2025-11-25: `initialize`, sessions, server-to-client requests
    modern, ///< 2026-07-28: stateless, `server/discover`, `_meta` on every request
};

/// What the client may pick (`automatic`: the spec's backward-compatibility probe).
enum class era_preference { automatic, legacy, modern };

/// JSON-RPC error codes the client sends or recognises.
namespace error_code {
inline constexpr int parse_error = -32700;
inline constexpr int invalid_request = -32600;
inline constexpr int method_not_found = -32601;
inline constexpr int invalid_params = -32602;
inline constexpr int internal_error = -32603;
inline constexpr int header_mismatch = -32020;
inline constexpr int missing_client_capability = -32021;
inline constexpr int unsupported_protocol_version = -32022;
} // namespace error_code

/// Why an MCP operation failed.
enum class mcp_error_kind {
    configuration,  ///< a bad server entry, a command that cannot start
    protocol,       ///< garbage, a closed stream, an answer of the wrong shape, a version we do not speak
    remote,         ///< the server answered with a JSON-RPC error (code() and data() hold it)
    timeout,        ///< no answer in time (the request was cancelled)
    closed,         ///< the server is gone (exited, connection refused)
    limit,          ///< the server sent more than a configured limit allows
    input_required, ///< the server asks for input (elicitation, sampling) this client cannot give
    cancelled,      ///< the caller asked the call to stop (the request was cancelled)
};

class mcp_error : public std::runtime_error {
public:
    mcp_error(mcp_error_kind kind, std::string what, int code = 0, boost::json::value data = nullptr)
        : std::runtime_error(std::move(what)), kind_(kind), code_(code), data_(std::move(data)) {}
    mcp_error_kind kind() const noexcept { return kind_; }
    int code() const noexcept { return code_; } ///< the JSON-RPC code (remote only)
    const boost::json::value& data() const noexcept { return data_; }

private:
    mcp_error_kind kind_;
    int code_;
    boost::json::value data_;
};

/// A notification of the server passed on to the run: `notifications/progress`
/// and `notifications/message` (a log line), with the server's name.
struct mcp_event {
    std::string server;
    std::string method;
    boost::json::object params;
};

/// Client settings that are not part of DeerFlow's server entry.
struct client_options {
    era_preference era = era_preference::automatic;
    std::string client_name = "agentware";
    std::string client_version = "0.1";
    /// How long the `server/discover` probe waits before falling back to `initialize` (stdio).
    std::chrono::milliseconds discover_timeout{3'000};
    std::size_t max_message_bytes = 16u << 20; ///< one line (stdio) or one SSE event / JSON body (HTTP)
    std::size_t max_stderr_bytes = 64u << 10;  ///< the server's stderr kept (the last bytes)
    std::size_t max_notifications_per_call = 100'000; ///< notifications one request may bring
    std::size_t max_list_pages = 1'000;               ///< `tools/list` pages before the listing is cut off
    std::size_t max_input_rounds = 8;                ///< `input_required` retries of one request (2026-07-28)
    std::chrono::milliseconds shutdown_grace{2'000}; ///< stdio: after closing stdin, then after SIGTERM
    bool restart_crashed_server = true;              ///< stdio: the next call restarts a dead server, once
    /// `roots/list` is answered with these (`file://` URIs or plain paths);
    /// empty: the client does not offer the roots capability and refuses the
    /// request, unless `roots_by_call` is set.
    std::vector<std::string> roots;
    /// Offers the roots capability without fixed `roots`: `roots/list` is
    /// answered with the `call_options::roots` of a call in flight (2025 era:
    /// the oldest that has some; 2026-07-28: the call's own), or with no roots
    /// when none has any. The tools of an mcp_toolkit made with this set give
    /// the run's thread workspace (the `thread_data` state field's
    /// `workspace_path`, set by the thread_data middleware).
    bool roots_by_call = false;
    /// Answers the server's `elicitation/create` requests (a form the user
    /// fills in): given the request's params, returns the result, e.g.
    /// `{"action": "accept", "content": {...}}` or `{"action": "decline"}`.
    /// Called on the thread that reads the server. Set, the client offers the
    /// elicitation capability; empty, it refuses the request (2025 era) or
    /// fails the call with mcp_error (input_required, 2026-07-28 era).
    std::function<boost::json::object(const boost::json::object& params)> on_elicitation;
    /// Offers the elicitation capability without `on_elicitation`: each call
    /// answers with its own `call_options::on_elicitation` (mcp_toolkit sets
    /// this, and its tools pause the run to ask the user). A call without one
    /// refuses the request as when the capability is not offered.
    bool elicitation_by_call = false;
    /// Progress and log notifications; called on the client's reader thread
    /// (stdio) or the calling thread (HTTP). Empty: dropped.
    std::function<void(const mcp_event&)> on_event;
};

/// What one `tools/call` may carry besides its arguments: how long to wait,
/// a stop token (a run being stopped cancels its calls), and a listener for
/// the notifications the server sends while the call runs.
struct call_options {
    /// Default: the server entry's `tool_call_timeout`.
    std::optional<std::chrono::milliseconds> timeout;
    /// When requested, the request is cancelled (`notifications/cancelled`,
    /// or the HTTP stream closed) and the call throws mcp_error (cancelled).
    std::stop_token stop;
    /// The call's own progress notifications (matched by its progress
    /// token) and the server's log lines while the call is in flight, on
    /// the thread that reads them. Called in addition to
    /// client_options::on_event, never after the call has returned.
    std::function<void(const mcp_event&)> on_event;
    /// Calls in flight with the same non-null group share one listener: a
    /// log line reaches it once, not once per call (a run's parallel calls).
    const void* event_group = nullptr;
    /// Answers the server's elicitation requests that come for this call
    /// (when client_options::on_elicitation is not set): a `elicitation/create`
    /// request while the call waits (2025 era; over stdio, the oldest call in
    /// flight that has this handler), or one of the call's `input_required`
    /// requests (2026-07-28). What it throws ends the call: a std::exception
    /// as mcp_error (input_required), anything else (agentware::interrupt) is
    /// rethrown as it is, after the server was told (2025 era: the request is
    /// answered `{"action": "cancel"}` and the call cancelled).
    std::function<boost::json::object(const boost::json::object& params)> on_elicitation;
    /// The roots this call answers `roots/list` with, when the client has
    /// client_options::roots_by_call and no fixed roots (paths or `file://` URIs).
    std::vector<std::string> roots;
};

/// A tool as the server lists it.
struct tool_info {
    std::string name;
    std::string title;
    std::string description;
    boost::json::object input_schema;
    std::optional<boost::json::object> output_schema;
};

namespace detail {
struct client_state;
}

/// One connection to one MCP server. Thread-safe: calls from several threads
/// run side by side (stdio multiplexes them by request id).
class client {
public:
    AGENTWARE_DECL explicit client(server_config config, client_options options = {});
    client(const client&) = delete;
    client& operator=(const client&) = delete;
    AGENTWARE_DECL ~client();

    /// Starts the server (stdio) and runs the handshake of the era it speaks.
    /// Throws mcp_error. Called by the first request when not called before.
    AGENTWARE_DECL void connect();
    /// Ends the session: DELETE (HTTP with a session), or closes stdin, waits,
    /// SIGTERM, SIGKILL (stdio). Safe to call twice.
    AGENTWARE_DECL void close();

    AGENTWARE_DECL const server_config& config() const noexcept;
    AGENTWARE_DECL const client_options& options() const noexcept;
    AGENTWARE_DECL protocol_era era() const;
    /// The revision agreed on ("2025-11-25", "2026-07-28", ...); empty before connect().
    AGENTWARE_DECL std::string protocol_version() const;
    AGENTWARE_DECL boost::json::object server_info() const;
    /// The last bytes the server wrote to stderr (stdio), for error messages.
    AGENTWARE_DECL std::string stderr_tail() const;
    /// True once the server said its tool list changed, until the next list_tools().
    AGENTWARE_DECL bool tools_changed() const noexcept;
    /// How many `notifications/tools/list_changed` the server has sent.
    AGENTWARE_DECL std::uint64_t tools_list_changes() const noexcept;

    /// Every tool, following `nextCursor` until the last page.
    AGENTWARE_DECL std::vector<tool_info> list_tools();
    /// `tools/call`: the result object as the server sent it. A JSON-RPC
    /// error is thrown as mcp_error (remote); `isError: true` is a result.
    /// On timeout the request is cancelled (`notifications/cancelled`).
    AGENTWARE_DECL boost::json::object call_tool(std::string_view name, const boost::json::object& arguments,
                                                 std::optional<std::chrono::milliseconds> timeout = {});
    /// `tools/call` with a stop token and a listener of its own.
    AGENTWARE_DECL boost::json::object call_tool(std::string_view name, const boost::json::object& arguments,
                                                 const call_options& options);
    /// `tools/call` as a coroutine on the awaiting executor. Over stdio no
    /// thread waits for the answer: the reader resumes the coroutine, so many
    /// calls in flight cost no thread each. Over HTTP (and to start or
    /// restart a server) the blocking work runs on a thread of its own while
    /// the coroutine waits. Same results and errors as call_tool.
    AGENTWARE_DECL boost::asio::awaitable<boost::json::object>
    async_call_tool(std::string name, boost::json::object arguments, call_options options = {});
    /// `ping` (legacy era; the modern era has none, and this sends `server/discover`).
    AGENTWARE_DECL void ping();
    /// Any request; its result object.
    AGENTWARE_DECL boost::json::object request(std::string_view method, boost::json::object params,
                                               std::optional<std::chrono::milliseconds> timeout = {});

private:
    AGENTWARE_DECL std::vector<tool_info> list_tools_once();

    std::shared_ptr<detail::client_state> state_;
};

} // namespace agentware::mcp

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/mcp/impl/client.ipp>
#endif

#endif
