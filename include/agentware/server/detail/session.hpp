#ifndef AGENTWARE_SERVER_DETAIL_SESSION_HPP
#define AGENTWARE_SERVER_DETAIL_SESSION_HPP

// One connection: requests read within their limits and times, answered
// whole, as an SSE stream of a run's events, or after a wait with keep-alive
// newlines (server.md §3). A client that stops reading is dropped when a
// write does not finish within the idle timeout.

#include <agentware/server/server.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cctype>
#include <memory>
#include <string>

namespace agentware::server {

namespace detail {

inline std::string query_decode(std::string_view s) {
    std::string plus;
    plus.reserve(s.size());
    for (char c : s)
        plus += c == '+' ? ' ' : c;
    return percent_decode(plus);
}

inline void split_target(std::string_view target, http_request& req) {
    const auto q = target.find('?');
    req.path = std::string(target.substr(0, q));
    if (q == std::string_view::npos) return;
    std::string_view rest = target.substr(q + 1);
    while (!rest.empty()) {
        const auto amp = rest.find('&');
        const auto pair = rest.substr(0, amp);
        const auto eq = pair.find('=');
        if (!pair.empty())
            req.query[query_decode(pair.substr(0, eq))] =
                eq == std::string_view::npos ? std::string() : query_decode(pair.substr(eq + 1));
        if (amp == std::string_view::npos) break;
        rest = rest.substr(amp + 1);
    }
}

// Kept for parity with DeerFlow's stream bridge: the `gap` event a client
// gets, once and without an id, when events it had not read were dropped.
inline std::string gap_text(const http_response& res, std::size_t asked, std::size_t first, std::size_t end) {
    boost::json::object gap{
        {"code", "stream_replay_gap"},
        {"run_id", res.run_id},
        {"requested_event_id", asked == 0 ? boost::json::value(nullptr) : boost::json::value(asked - 1)},
        {"earliest_available_event_id", first},
        {"latest_available_event_id", end == 0 ? 0 : end - 1},
        {"recovery", "reload_durable_state"}};
    return "event: gap\ndata: " + boost::json::serialize(gap) + "\n\n";
}

inline std::string sse_text(const std::vector<stream_event>& events, bool ids) {
    std::string out;
    for (const auto& e : events) {
        out += "event: ";
        out += e.name;
        out += "\ndata: ";
        out += e.data;
        out += '\n';
        if (ids) {
            out += "id: ";
            out += std::to_string(e.id);
            out += '\n';
        }
        out += '\n';
    }
    return out;
}

} // namespace detail

inline boost::asio::awaitable<void> agent_server::session(boost::asio::ip::tcp::socket socket) {
    namespace http = boost::beast::http;
    namespace asio = boost::asio;
    constexpr auto tuple = asio::as_tuple(asio::use_awaitable);
    ++connections_;
    struct count_guard {
        std::atomic<std::size_t>& n;
        ~count_guard() { --n; }
    } guard{connections_};

    boost::beast::tcp_stream stream(std::move(socket));
    boost::beast::flat_buffer buffer;
    // A refusal before the request is read whole: the answer, then the connection closes.
    auto refuse = [&](http::status status, std::string text) -> asio::awaitable<void> {
        http::response<http::string_body> r{status, 11};
        r.set(http::field::content_type, "text/plain; charset=utf-8");
        r.body() = std::move(text);
        r.keep_alive(false);
        r.prepare_payload();
        stream.expires_after(options_.header_timeout);
        co_await http::async_write(stream, r, tuple);
    };
    auto too_large = [&](bool upload) {
        return agentware::detail::format("The body is larger than the server's limit of {} bytes",
                                         upload ? options_.max_upload_bytes : options_.max_body_bytes);
    };
    bool first = true;
    for (;;) {
        http::request_parser<http::string_body> parser;
        parser.header_limit(static_cast<std::uint32_t>(options_.max_header_bytes));
        parser.body_limit(options_.max_body_bytes);
        stream.expires_after(first ? options_.header_timeout : options_.idle_timeout);
        first = false;
        {
            auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, tuple);
            if (ec == http::error::header_limit)
                co_await refuse(http::status::request_header_fields_too_large,
                                "Request header fields too large");
            // A declared length over the limit is refused from the head (uploads have their own limit).
            if (ec == http::error::body_limit) {
                const bool upload =
                    std::string_view(parser.get().target()).find("/uploads") != std::string_view::npos;
                if (!upload || parser.content_length().value_or(0) > options_.max_upload_bytes) {
                    co_await refuse(http::status::payload_too_large, too_large(upload));
                    break;
                }
            } else if (ec) {
                break;
            }
        }
        const std::string target(parser.get().target());
        if (target.find("/uploads") != std::string::npos) parser.body_limit(options_.max_upload_bytes);
        stream.expires_after(options_.body_timeout);
        {
            auto [ec, n] = co_await http::async_read(stream, buffer, parser, tuple);
            if (ec == http::error::body_limit)
                co_await refuse(http::status::payload_too_large,
                                too_large(target.find("/uploads") != std::string::npos));
            if (ec) break;
        }
        auto& msg = parser.get();
        http_request req;
        req.method = std::string(msg.method_string());
        detail::split_target(target, req);
        for (const auto& f : msg) {
            std::string name(f.name_string());
            for (auto& c : name)
                c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            req.headers[name] = std::string(f.value());
        }
        req.body = std::move(msg.body());
        const bool keep_alive = msg.keep_alive();

        http_response res = co_await handle(req);
        const std::string origin = allowed_origin(req.header("origin"));
        auto set_common = [&](auto& head, const http_response& r) {
            for (const auto& [k, v] : r.headers)
                head.set(k, v);
            if (!origin.empty()) {
                head.set(http::field::access_control_allow_origin, origin);
                head.set(http::field::access_control_expose_headers, "content-location,x-pagination-total");
                if (origin != "*") head.set(http::field::vary, "Origin");
            }
            if (!r.content_type.empty()) head.set(http::field::content_type, r.content_type);
        };
        auto write_whole = [&](http_response& r, bool keep) -> asio::awaitable<bool> {
            http::response<http::string_body> out{static_cast<http::status>(r.status), 11};
            set_common(out, r);
            out.body() = std::move(r.body);
            out.keep_alive(keep);
            out.prepare_payload();
            stream.expires_after(options_.idle_timeout);
            auto [ec, n] = co_await http::async_write(stream, out, tuple);
            co_return !ec;
        };
        auto write_chunk = [&](const std::string& text) -> asio::awaitable<bool> {
            stream.expires_after(options_.idle_timeout);
            auto [ec, n] = co_await asio::async_write(stream, http::make_chunk(asio::buffer(text)), tuple);
            co_return !ec;
        };
        auto write_head = [&](const http_response& r) -> asio::awaitable<bool> {
            http::response<http::empty_body> head{static_cast<http::status>(r.status), 11};
            set_common(head, r);
            if (r.kind == http_response::mode::events) {
                head.set(http::field::cache_control, "no-cache");
            }
            head.chunked(true);
            head.keep_alive(keep_alive);
            http::response_serializer<http::empty_body> sr{head};
            stream.expires_after(options_.idle_timeout);
            auto [ec, n] = co_await http::async_write_header(stream, sr, tuple);
            co_return !ec;
        };
        auto end_chunks = [&]() -> asio::awaitable<bool> {
            stream.expires_after(options_.idle_timeout);
            auto [ec, n] = co_await asio::async_write(stream, http::make_chunk_last(), tuple);
            co_return !ec;
        };

        if (res.kind == http_response::mode::whole) {
            if (!co_await write_whole(res, keep_alive) || !keep_alive) break;
            continue;
        }

        auto timer = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor);
        bool connected = true;
        if (res.kind == http_response::mode::events) {
            {
                std::lock_guard lock(res.stream->readers_mutex());
                if (res.stream->readers() >= options_.max_readers_per_run) {
                    auto busy = http_response::text(429, "Too many clients follow this run");
                    if (!co_await write_whole(busy, keep_alive) || !keep_alive) break;
                    continue;
                }
                ++res.stream->readers();
            }
            struct reader_guard {
                run_stream& s;
                ~reader_guard() {
                    std::lock_guard lock(s.readers_mutex());
                    --s.readers();
                }
            } readers{*res.stream};
            connected = co_await write_head(res);
            std::size_t next = res.from;
            while (connected) {
                std::vector<stream_event> batch;
                bool done = false, gap = false;
                const std::size_t asked = next;
                next = res.stream->read(next, batch, done, gap);
                if (gap) { // events this client had not read were dropped: it reloads the state (DeerFlow's
                           // way)
                    connected = co_await write_chunk(detail::gap_text(res, asked, next - batch.size(), next));
                    break;
                }
                if (!batch.empty()) connected = co_await write_chunk(detail::sse_text(batch, res.event_ids));
                if (done || !connected) break;
                timer->expires_after(options_.heartbeat);
                if (res.stream->wait(next, timer)) {
                    auto [ec] = co_await timer->async_wait(tuple);
                    if (!ec) connected = co_await write_chunk(": heartbeat\n\n");
                }
            }
            if (connected) connected = co_await end_chunks();
        } else { // await
            if (res.keep_alive) connected = co_await write_head(res);
            while (connected && !res.stream->closed()) {
                timer->expires_after(options_.heartbeat);
                if (res.stream->wait(res.stream->size(), timer)) {
                    auto [ec] = co_await timer->async_wait(tuple);
                    if (!ec && res.keep_alive) connected = co_await write_chunk("\n");
                }
            }
            if (connected) {
                http_response final = res.then();
                if (res.keep_alive) {
                    connected = co_await write_chunk(final.body);
                    if (connected) connected = co_await end_chunks();
                } else {
                    connected = co_await write_whole(final, keep_alive);
                }
            }
        }
        if (!connected) {
            if (res.on_disconnect) res.on_disconnect();
            break;
        }
        if (!keep_alive) break;
    }
    // A lingering close: what the client still sends (the rest of a refused
    // body) is read and dropped for a moment, so that closing does not reset
    // the connection before the client has read the answer.
    boost::system::error_code ec;
    stream.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ec);
    stream.expires_after(std::chrono::seconds(1));
    char sink[4096];
    for (;;) {
        auto [read_ec, n] = co_await stream.async_read_some(asio::buffer(sink), tuple);
        if (read_ec) break;
    }
}

} // namespace agentware::server

#endif
