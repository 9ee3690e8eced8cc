#ifndef AGENTWARE_MCP_IMPL_HTTP_CHANNEL_IPP
#define AGENTWARE_MCP_IMPL_HTTP_CHANNEL_IPP

// The MCP client's Streamable HTTP channel, on the project's HTTP transport:
// a POST per message (its answer as JSON or as an SSE stream), the session's
// standalone stream, resumption with Last-Event-ID.

#include <agentware/detail/blocking_runner.hpp>
#include <agentware/mcp/client.hpp>
#include <agentware/mcp/impl/channel.ipp>
#include <agentware/model/detail/call_control.hpp>
#include <agentware/model/error.hpp>
#include <agentware/model/http_transport.hpp>
#include <agentware/model/sse_parser.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace agentware::mcp::detail {

class http_channel final : public channel {
public:
    http_channel(const server_config& cfg, const client_options& opts, channel_events ev)
        : cfg_(cfg), opts_(opts), ev_(std::move(ev)), transport_(make_options(cfg, opts)) {}
    ~http_channel() override { shutdown(); }

    bool multiplexed() const noexcept override { return false; }
    bool alive() const noexcept override { return !closed_; }

    void start() override {
        try {
            target_ = agentware::detail::parse_url(cfg_.url);
        } catch (const std::exception& e) {
            throw mcp_error(mcp_error_kind::configuration, "MCP server \"" + cfg_.name + "\": " + e.what());
        }
        closed_ = false;
    }

    void set_era(protocol_era era, std::string_view version) override {
        std::lock_guard lock(mutex_);
        era_ = era;
        version_ = std::string(version);
    }

    std::optional<resume_point> send(const boost::json::object& msg, std::string_view method,
                                     std::string_view name, const std::stop_token& stop,
                                     std::chrono::milliseconds timeout) override {
        http_request_spec spec = post_request(msg);
        std::optional<std::int64_t> announce; // a 2025-era request: cancelled before its stream is closed
        {
            std::lock_guard lock(mutex_);
            if (era_ == protocol_era::modern) {
                spec.headers.emplace_back("Mcp-Method", std::string(method));
                if (!name.empty()) spec.headers.emplace_back("Mcp-Name", std::string(name));
            } else if (const auto* id = msg.if_contains("id");
                       id && id->is_int64() && msg.contains("method")) {
                announce = id->as_int64();
            }
        }
        const bool is_initialize = method == "initialize";

        int status = 0;
        bool sse = false;
        std::string body;
        sse_reader stream(*this);
        http_response_sink sink;
        sink.on_head = [&](const http_response_head& h) {
            status = h.status;
            sse = h.content_type.starts_with("text/event-stream");
            if (const std::string sid = h.header("Mcp-Session-Id"); !sid.empty() && is_initialize) {
                std::lock_guard lock(mutex_);
                session_id_ = sid;
            }
        };
        sink.on_data = [&](std::string_view bytes) {
            if (!sse) {
                if (body.size() + bytes.size() > opts_.max_message_bytes)
                    throw mcp_error(mcp_error_kind::limit,
                                    "MCP server \"" + cfg_.name + "\" answered more than " +
                                        std::to_string(opts_.max_message_bytes) + " bytes");
                body.append(bytes);
                return true;
            }
            stream.feed(bytes);
            return true;
        };
        post(spec, sink, stop, timeout, announce);
        if (status == 202 || status == 204) return std::nullopt;
        if (status >= 400) {
            // A JSON-RPC error in the body answers the request; anything else is the transport's.
            boost::system::error_code ec;
            if (!sse && !body.empty()) {
                boost::json::value v = boost::json::parse(body, ec);
                if (!ec && v.is_object() && v.get_object().contains("error")) {
                    ev_.deliver(std::move(v));
                    return std::nullopt;
                }
            }
            if (status == 404) {
                std::lock_guard lock(mutex_);
                if (!session_id_.empty()) {
                    // The server forgot the session: the client starts a new one.
                    session_id_.clear();
                    closed_ = true;
                    throw mcp_error(mcp_error_kind::closed,
                                    "MCP server \"" + cfg_.name + "\" ended the session (HTTP 404)");
                }
            }
            throw mcp_error(mcp_error_kind::protocol,
                            "MCP server \"" + cfg_.name + "\" answered HTTP " + std::to_string(status) +
                                (body.empty() ? std::string() : ": " + excerpt(body)),
                            status);
        }
        if (!sse && !body.empty()) deliver_text(body);
        return stream.where();
    }

    bool resume(resume_point from, const std::stop_token& stop, std::chrono::milliseconds timeout,
                const std::function<bool()>& answered) override {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        bool resumed = false;
        // Each GET may end early too (the server closes it again): resume
        // from where the last one stopped, a bounded number of times.
        for (int attempt = 0; attempt < 8 && !answered(); ++attempt) {
            if (!pause(from.retry.value_or(std::chrono::milliseconds(1'000)), stop))
                throw mcp_error(mcp_error_kind::cancelled,
                                "MCP server \"" + cfg_.name + "\": the request was cancelled by the caller");
            if (std::chrono::steady_clock::now() >= deadline) break;
            std::optional<resume_point> next = get_stream(&from, stop, answered);
            if (!next) break; // the server does not resume streams
            resumed = true;
            if (!next->last_event_id.empty()) from.last_event_id = next->last_event_id;
            if (next->retry) from.retry = next->retry;
        }
        return resumed;
    }

    void open_listener() override {
        {
            std::lock_guard lock(mutex_);
            if (session_id_.empty() || listener_.joinable()) return; // stateless: nothing to listen to
        }
        // Until the server has answered the GET, a message it sends for no
        // request would be lost: wait (a little) for the answer's head.
        auto opened = std::make_shared<std::promise<void>>();
        std::future<void> head = opened->get_future();
        listener_ = std::thread([this, opened] { listen(*opened); });
        head.wait_for(std::chrono::seconds(5));
    }

    void shutdown() override {
        listener_stop_.request_stop();
        if (listener_.joinable() && listener_.get_id() != std::this_thread::get_id()) listener_.join();
        if (closed_.exchange(true)) return;
        std::string sid;
        {
            std::lock_guard lock(mutex_);
            sid = session_id_;
        }
        if (!sid.empty()) {
            try {
                http_request_spec spec = base_request("DELETE");
                http_response_sink sink;
                sink.on_data = [](std::string_view) { return true; };
                post(spec, sink, {});
            } catch (const std::exception&) { // the session ends with the server anyway
            }
        }
        transport_.close_idle_connections();
    }

private:
    /// One SSE stream of the server's messages: each delivered, counted
    /// against the limit, and where the stream stands kept for resuming it.
    class sse_reader {
    public:
        explicit sse_reader(http_channel& ch) : ch_(ch), parser_(ch.opts_.max_message_bytes) {}
        void feed(std::string_view bytes) {
            try {
                parser_.feed(bytes, [&](const sse_event& e) {
                    if (e.data.empty()) return; // a priming event: an id to resume from, no message
                    if (++events_ > ch_.opts_.max_notifications_per_call)
                        throw mcp_error(mcp_error_kind::limit,
                                        "MCP server \"" + ch_.cfg_.name + "\" sent more than " +
                                            std::to_string(ch_.opts_.max_notifications_per_call) +
                                            " messages in one answer");
                    ch_.deliver_text(e.data);
                });
            } catch (const sse_error& e) {
                throw mcp_error(mcp_error_kind::limit, "MCP server \"" + ch_.cfg_.name + "\": " + e.what());
            }
        }
        /// Where to resume, when the stream's events had ids.
        std::optional<resume_point> where() const {
            if (parser_.last_event_id().empty()) return std::nullopt;
            return resume_point{std::string(parser_.last_event_id()), parser_.retry()};
        }
        std::optional<std::chrono::milliseconds> retry() const { return parser_.retry(); }

    private:
        http_channel& ch_;
        sse_parser parser_;
        std::size_t events_ = 0;
    };

    /// Waits `delay`; false when `stop` came first.
    static bool pause(std::chrono::milliseconds delay, const std::stop_token& stop) {
        std::mutex m;
        std::condition_variable_any cv;
        std::unique_lock lock(m);
        return !cv.wait_for(lock, stop, delay, [] { return false; }) && !stop.stop_requested();
    }

    /// A GET for an SSE stream, from `from` when resuming. Reads until the
    /// stream ends or `done()`; where it stopped, or nullopt when the server
    /// answered anything but a stream (it offers none, or not that one).
    std::optional<resume_point> get_stream(const resume_point* from, const std::stop_token& stop,
                                           const std::function<bool()>& done,
                                           const std::function<void()>& on_head = {}) {
        http_request_spec spec = base_request("GET");
        spec.headers.emplace_back("Accept", "text/event-stream");
        if (from != nullptr) spec.headers.emplace_back("Last-Event-ID", from->last_event_id);
        int status = 0;
        bool sse = false;
        sse_reader stream(*this);
        http_response_sink sink;
        sink.on_head = [&](const http_response_head& h) {
            status = h.status;
            sse = h.content_type.starts_with("text/event-stream");
            if (on_head) on_head();
        };
        sink.on_data = [&](std::string_view bytes) {
            if (status != 200 || !sse) return true; // read and dropped
            stream.feed(bytes);
            return !(done && done());
        };
        post(spec, sink, stop);
        if (status != 200 || !sse) return std::nullopt;
        resume_point at = stream.where().value_or(resume_point{});
        at.retry = stream.retry();
        return at;
    }

    /// The standalone stream, reopened (resumed when its events have ids)
    /// whenever the server ends it, until shutdown, or until the server says
    /// it offers none or fails three times in a row.
    void listen(std::promise<void>& opened) {
        bool told = false;
        const auto tell = [&] {
            if (!std::exchange(told, true)) opened.set_value();
        };
        struct teller { // tells on every way out too
            decltype(tell)& f;
            ~teller() { f(); }
        } on_exit{tell};
        const std::stop_token stop = listener_stop_.get_token();
        resume_point at;
        int failures = 0;
        while (!stop.stop_requested()) {
            try {
                const std::optional<resume_point> ended =
                    get_stream(at.last_event_id.empty() ? nullptr : &at, stop, {}, tell);
                if (!ended) return;
                failures = 0;
                if (!ended->last_event_id.empty()) at.last_event_id = ended->last_event_id;
                if (ended->retry) at.retry = ended->retry;
            } catch (const mcp_error& e) {
                if (e.kind() == mcp_error_kind::cancelled) return;
                // The transport's time limit ends a quiet stream: reopened like any end.
                if (e.kind() != mcp_error_kind::timeout && ++failures >= 3) return;
            } catch (const std::exception&) {
                if (++failures >= 3) return;
            }
            if (!pause(at.retry.value_or(std::chrono::milliseconds(1'000)), stop)) return;
        }
    }

    static http_options make_options(const server_config& cfg, const client_options&) {
        http_options o;
        const auto longest = std::max(cfg.session_init_timeout, cfg.tool_call_timeout);
        o.first_byte_timeout = longest;
        o.total_timeout = longest;
        return o;
    }

    http_request_spec base_request(std::string method) {
        http_request_spec spec;
        spec.method = std::move(method);
        for (const auto& [k, v] : cfg_.headers)
            spec.headers.emplace_back(k, v);
        std::lock_guard lock(mutex_);
        if (!session_id_.empty()) spec.headers.emplace_back("Mcp-Session-Id", session_id_);
        if (!version_.empty() && has_version_header(version_))
            spec.headers.emplace_back("MCP-Protocol-Version", version_);
        return spec;
    }

    /// A POST of `msg` (its headers but the era's own).
    http_request_spec post_request(const boost::json::object& msg) {
        http_request_spec spec = base_request("POST");
        spec.headers.emplace_back("Content-Type", "application/json");
        spec.headers.emplace_back("Accept", "application/json, text/event-stream");
        spec.body = boost::json::serialize(msg);
        return spec;
    }

    /// How a request in flight ends before its answer, on the executor of
    /// its exchange: the first of a stop and its timeout.
    struct early_end {
        boost::asio::any_io_executor executor;
        std::shared_ptr<agentware::detail::call_control> control;
        std::optional<std::int64_t> announce; // the 2025-era request to cancel first
        bool started = false;
        bool timed_out = false;
    };

    /// On the executor: POSTs `notifications/cancelled` for the request when
    /// it is one of the 2025 era (where closing a stream is no cancellation),
    /// then closes its stream.
    void end_early(const std::shared_ptr<early_end>& e, bool by_timeout) {
        if (std::exchange(e->started, true)) return;
        e->timed_out = by_timeout;
        if (!e->announce) {
            e->control->request_cancel();
            return;
        }
        const boost::json::object note =
            cancelled_notification(*e->announce, by_timeout ? "timeout" : "cancelled by the client");
        boost::asio::co_spawn(e->executor, announce_cancel(post_request(note)),
                              [e](std::exception_ptr) { e->control->request_cancel(); });
    }

    boost::asio::awaitable<void> announce_cancel(http_request_spec spec) {
        const boost::asio::any_io_executor executor = co_await boost::asio::this_coro::executor;
        auto control = std::make_shared<agentware::detail::call_control>(executor);
        boost::asio::steady_timer limit(executor, cancel_notification_timeout);
        limit.async_wait([control](const boost::system::error_code& ec) {
            if (!ec) control->request_cancel();
        });
        http_response_sink sink;
        sink.on_data = [](std::string_view) { return true; };
        co_await transport_.post(target_, spec, sink, *control); // its failure changes nothing
    }

    /// Calls end_early from a stop callback (on the stopping thread).
    struct early_ender {
        http_channel* channel;
        std::shared_ptr<early_end> e;
        void operator()() const {
            boost::asio::post(e->executor, [ch = channel, e = e] { ch->end_early(e, false); });
        }
    };

    /// Sends `spec` and feeds the answer to `sink` until it ends, `stop` is
    /// requested or `timeout` passes (zero: the transport's limits); for a
    /// request of the 2025 era (`announce`), see end_early.
    void post(const http_request_spec& spec, http_response_sink& sink, const std::stop_token& stop,
              std::chrono::milliseconds timeout = {}, std::optional<std::int64_t> announce = {}) {
        auto ending = std::make_shared<early_end>();
        ending->announce = announce;
        try {
            transport_.runner().run([&]() -> boost::asio::awaitable<void> {
                ending->executor = co_await boost::asio::this_coro::executor;
                ending->control = std::make_shared<agentware::detail::call_control>(ending->executor);
                std::optional<std::stop_callback<early_ender>> on_stop;
                if (stop.stop_possible()) on_stop.emplace(stop, early_ender{this, ending});
                boost::asio::steady_timer limit(ending->executor);
                if (timeout.count() > 0) {
                    limit.expires_after(timeout);
                    limit.async_wait([this, ending](const boost::system::error_code& ec) {
                        if (!ec) end_early(ending, true);
                    });
                }
                co_await transport_.post(target_, spec, sink, *ending->control);
            }());
        } catch (const model_error& e) {
            if (ending->timed_out)
                throw mcp_error(mcp_error_kind::timeout,
                                "MCP server \"" + cfg_.name + "\" did not answer within " +
                                    std::to_string(timeout.count()) + " ms; the request was cancelled");
            const auto kind = e.kind() == model_error_kind::timeout     ? mcp_error_kind::timeout
                              : e.kind() == model_error_kind::cancelled ? mcp_error_kind::cancelled
                                                                        : mcp_error_kind::closed;
            throw mcp_error(kind, "MCP server \"" + cfg_.name + "\": " + e.what());
        }
    }

    void deliver_text(std::string_view text) {
        boost::system::error_code ec;
        boost::json::value v = boost::json::parse(text, ec);
        if (ec)
            throw mcp_error(mcp_error_kind::protocol,
                            "MCP server \"" + cfg_.name +
                                "\" sent a message that is not JSON: " + excerpt(text));
        if (v.is_array()) { // a batch
            for (auto& m : v.get_array())
                ev_.deliver(std::move(m));
            return;
        }
        ev_.deliver(std::move(v));
    }

    const server_config& cfg_;
    const client_options& opts_;
    channel_events ev_;
    http_transport transport_;
    agentware::detail::url target_;
    std::mutex mutex_;
    std::string session_id_;
    std::string version_;
    protocol_era era_ = protocol_era::legacy;
    std::atomic<bool> closed_{true};
    std::stop_source listener_stop_;
    std::thread listener_;
};

} // namespace agentware::mcp::detail

#endif
