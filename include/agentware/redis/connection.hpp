#ifndef AGENTWARE_REDIS_CONNECTION_HPP
#define AGENTWARE_REDIS_CONNECTION_HPP

// One connection to a Redis server, over TCP or a Unix socket, driven by
// Asio coroutines: a command and its reply, several commands written at once
// and their replies read in order (pipelining), and the messages a
// subscribed connection receives. RESP2 only: what the event bus needs
// (strings, streams, publish and subscribe), with no dependency beyond Asio.
// A connection belongs to one executor; it is not shared between coroutines
// that could interleave their commands.

#include <agentware/redis/address.hpp>
#include <agentware/redis/reply.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <charconv>
#include <chrono>
#include <cstddef>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace agentware::redis {

class connection {
public:
    using command_args = std::vector<std::string>;

    /// Connects (and authenticates, and selects the database) within `timeout`.
    static boost::asio::awaitable<connection>
    connect(address where, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
        namespace asio = boost::asio;
        auto ex = co_await asio::this_coro::executor;
        connection c(ex);
        asio::steady_timer limit(ex, timeout);
        limit.async_wait([s = c.socket_.get()](const boost::system::error_code& ec) {
            if (!ec) {
                boost::system::error_code ignore;
                s->close(ignore); // the connect in progress ends with an error
            }
        });
        boost::system::error_code ec;
        if (!where.path.empty()) {
            asio::local::stream_protocol::endpoint ep(where.path);
            std::tie(ec) = co_await c.socket_->async_connect(asio::generic::stream_protocol::endpoint(ep),
                                                             asio::as_tuple(asio::use_awaitable));
        } else {
            asio::ip::tcp::resolver resolver(ex);
            auto [rec, found] = co_await resolver.async_resolve(where.host, std::to_string(where.port),
                                                                asio::as_tuple(asio::use_awaitable));
            ec = rec;
            if (!ec) {
                ec = asio::error::host_not_found;
                for (const auto& entry : found) {
                    boost::system::error_code ignore;
                    c.socket_->close(ignore);
                    std::tie(ec) = co_await c.socket_->async_connect(
                        asio::generic::stream_protocol::endpoint(entry.endpoint()),
                        asio::as_tuple(asio::use_awaitable));
                    if (!ec) break;
                }
            }
        }
        limit.cancel();
        if (ec) throw redis::error("redis: cannot connect to " + where.text() + ": " + ec.message());
        if (!where.password.empty()) (co_await c.command("AUTH", where.password)).ok("AUTH");
        if (where.db != 0) (co_await c.command("SELECT", std::to_string(where.db))).ok("SELECT");
        co_return c;
    }

    /// One command, its words given one by one, and its reply (an error
    /// reply is returned, not thrown: see reply::ok).
    template <class... Words>
        requires(sizeof...(Words) > 0 && (std::is_convertible_v<Words, std::string_view> && ...))
    boost::asio::awaitable<reply> command(Words&&... words) {
        // Made here, outside the coroutine: g++ 12 mishandles a braced list under co_await.
        std::vector<command_args> one(1);
        one.front().reserve(sizeof...(Words));
        (one.front().emplace_back(std::string_view(words)), ...);
        return first_reply(std::move(one));
    }

    /// Several commands, written at once; their replies, in order.
    boost::asio::awaitable<std::vector<reply>> pipeline(std::vector<command_args> commands) {
        std::string out;
        for (const auto& args : commands) {
            out += '*' + std::to_string(args.size()) + "\r\n";
            for (const auto& a : args)
                out += '$' + std::to_string(a.size()) + "\r\n" + a + "\r\n";
        }
        auto [ec, n] = co_await boost::asio::async_write(*socket_, boost::asio::buffer(out),
                                                         boost::asio::as_tuple(boost::asio::use_awaitable));
        (void)n;
        if (ec) throw redis::error("redis: cannot send: " + ec.message());
        std::vector<reply> replies;
        replies.reserve(commands.size());
        for (std::size_t i = 0; i < commands.size(); ++i)
            replies.push_back(co_await read_reply());
        co_return replies;
    }

    /// The next message the server pushes (on a connection that subscribed).
    boost::asio::awaitable<reply> next() { return read_reply(); }

    /// Ends the operations in progress (they throw redis::error).
    void cancel() {
        boost::system::error_code ignore;
        socket_->cancel(ignore);
    }
    void close() {
        boost::system::error_code ignore;
        socket_->close(ignore);
    }
    bool is_open() const { return socket_->is_open(); }

private:
    boost::asio::awaitable<reply> first_reply(std::vector<command_args> one) {
        auto replies = co_await pipeline(std::move(one));
        co_return std::move(replies.front());
    }

    explicit connection(const boost::asio::any_io_executor& ex)
        : socket_(std::make_unique<boost::asio::generic::stream_protocol::socket>(ex)),
          in_(std::make_unique<boost::asio::streambuf>()) {}

    boost::asio::awaitable<std::string> read_line() {
        auto [ec, n] = co_await boost::asio::async_read_until(
            *socket_, *in_, "\r\n", boost::asio::as_tuple(boost::asio::use_awaitable));
        if (ec) throw redis::error("redis: the connection broke: " + ec.message());
        std::string line(n - 2, '\0');
        std::istream is(in_.get());
        is.read(line.data(), static_cast<std::streamsize>(n - 2));
        in_->consume(2);
        co_return line;
    }

    static long long number(const std::string& s) {
        long long v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc{} || end != s.data() + s.size())
            throw redis::error("redis: the server sent a length that is not a number: " + s.substr(0, 32));
        return v;
    }

    boost::asio::awaitable<reply> read_reply() {
        const std::string line = co_await read_line();
        if (line.empty()) throw redis::error("redis: the server sent an empty line");
        const std::string rest = line.substr(1);
        reply r;
        switch (line[0]) {
        case '+':
            r.type = reply::kind::simple;
            r.text = rest;
            break;
        case '-':
            r.type = reply::kind::error;
            r.text = rest;
            break;
        case ':':
            r.type = reply::kind::integer;
            r.integer = number(rest);
            break;
        case '$': {
            const long long size = number(rest);
            if (size < 0) break; // nil
            r.type = reply::kind::bulk;
            const auto need = static_cast<std::size_t>(size) + 2;
            if (in_->size() < need) {
                auto [ec, n] = co_await boost::asio::async_read(
                    *socket_, *in_, boost::asio::transfer_exactly(need - in_->size()),
                    boost::asio::as_tuple(boost::asio::use_awaitable));
                (void)n;
                if (ec) throw redis::error("redis: the connection broke: " + ec.message());
            }
            r.text.resize(static_cast<std::size_t>(size));
            std::istream is(in_.get());
            is.read(r.text.data(), size);
            in_->consume(2);
            break;
        }
        case '*': {
            const long long size = number(rest);
            if (size < 0) break; // nil array
            r.type = reply::kind::array;
            r.items.reserve(static_cast<std::size_t>(size));
            for (long long i = 0; i < size; ++i)
                r.items.push_back(co_await read_reply());
            break;
        }
        default:
            throw redis::error("redis: the server sent a reply of unknown type '" + std::string(1, line[0]) +
                               "'");
        }
        co_return r;
    }

    // Behind pointers: a connection moves (out of connect()) while its socket's
    // address is held by a pending timer.
    std::unique_ptr<boost::asio::generic::stream_protocol::socket> socket_;
    std::unique_ptr<boost::asio::streambuf> in_;
};

} // namespace agentware::redis

#endif
