#ifndef AGENTWARE_TESTS_SUPPORT_SCRIPTED_HTTP_SERVER_HPP
#define AGENTWARE_TESTS_SUPPORT_SCRIPTED_HTTP_SERVER_HPP

// A small HTTP/1.1 server on 127.0.0.1 (ephemeral port) that plays a model
// provider in tests: it answers requests in order from a queue of scripted
// responses, which may come in pieces with delays, stall, or drop the
// connection part-way; it records every request. Runs on its own thread and
// stops in its destructor.

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace agentware::test {

/// One scripted answer.
struct scripted_response {
    int status = 200;
    std::string content_type = "application/json";
    std::vector<std::pair<std::string, std::string>> headers;
    std::vector<std::string> parts;             ///< the body, written piece by piece
    bool chunked = false;                       ///< Transfer-Encoding: chunked, one chunk per part
    std::chrono::milliseconds delay_before{0};  ///< before the status line
    std::chrono::milliseconds delay_between{0}; ///< between body pieces
    /// Close the connection after this many bytes of the encoded body (chunk framing included).
    std::optional<std::size_t> drop_after;
    bool stall = false; ///< read the request and never answer
    bool close = false; ///< "Connection: close" and close after answering

    static scripted_response json(std::string body, int status = 200) {
        scripted_response r;
        r.status = status;
        r.parts = {std::move(body)};
        return r;
    }
    /// A chunked text/event-stream body, one chunk per piece.
    static scripted_response sse(std::vector<std::string> pieces) {
        scripted_response r;
        r.content_type = "text/event-stream";
        r.chunked = true;
        r.parts = std::move(pieces);
        return r;
    }
    scripted_response& header(std::string name, std::string value) {
        headers.emplace_back(std::move(name), std::move(value));
        return *this;
    }
};

struct recorded_request {
    std::string method;
    std::string target;
    std::map<std::string, std::string> headers; ///< lower-case names
    std::string body;
    std::string sni; ///< the TLS server name the client sent (HTTPS only)

    boost::json::value json() const { return boost::json::parse(body); }
    std::string header(const std::string& name) const {
        const auto it = headers.find(name);
        return it == headers.end() ? std::string() : it->second;
    }
};

/// A certificate and key in PEM that make the server speak HTTPS.
struct tls_identity {
    std::string cert_pem;
    std::string key_pem;
};

class scripted_http_server {
public:
    explicit scripted_http_server(const tls_identity* tls = nullptr)
        : acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
        if (tls != nullptr) {
            ssl_.emplace(boost::asio::ssl::context::tls_server);
            ssl_->use_certificate_chain(boost::asio::buffer(tls->cert_pem));
            ssl_->use_private_key(boost::asio::buffer(tls->key_pem), boost::asio::ssl::context::pem);
        }
        port_ = acceptor_.local_endpoint().port();
        boost::asio::co_spawn(io_, accept_loop(), boost::asio::detached);
        thread_ = std::thread([this] { io_.run(); });
    }

    scripted_http_server(const scripted_http_server&) = delete;
    scripted_http_server& operator=(const scripted_http_server&) = delete;

    ~scripted_http_server() { stop(); }

    void stop() {
        if (!thread_.joinable()) return;
        io_.stop();
        thread_.join();
    }

    unsigned short port() const noexcept { return port_; }
    std::string base_url(const std::string& path = "/v1") const {
        return (ssl_ ? "https://localhost:" : "http://127.0.0.1:") + std::to_string(port_) + path;
    }

    void push(scripted_response r) {
        std::lock_guard lock(mutex_);
        script_.push_back(std::move(r));
    }

    std::vector<recorded_request> requests() const {
        std::lock_guard lock(mutex_);
        return requests_;
    }
    std::size_t request_count() const {
        std::lock_guard lock(mutex_);
        return requests_.size();
    }
    std::size_t connections() const noexcept { return connections_; }
    std::size_t pending() const {
        std::lock_guard lock(mutex_);
        return script_.size();
    }

private:
    using tcp = boost::asio::ip::tcp;

    boost::asio::awaitable<void> accept_loop() {
        for (;;) {
            boost::system::error_code ec;
            tcp::socket socket =
                co_await acceptor_.async_accept(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
            if (ec) co_return;
            ++connections_;
            boost::asio::co_spawn(io_, session(std::move(socket)), boost::asio::detached);
        }
    }

    scripted_response next(recorded_request r) {
        std::lock_guard lock(mutex_);
        requests_.push_back(std::move(r));
        if (script_.empty())
            return scripted_response::json(R"({"error":{"message":"no scripted response left"}})", 500);
        scripted_response out = std::move(script_.front());
        script_.pop_front();
        return out;
    }

    static std::string head_of(const scripted_response& r) {
        namespace http = boost::beast::http;
        std::string head_out = "HTTP/1.1 " + std::to_string(r.status) + " " +
                               std::string(http::obsolete_reason(static_cast<http::status>(r.status))) +
                               "\r\n";
        head_out += "Content-Type: " + r.content_type + "\r\n";
        for (const auto& [name, value] : r.headers)
            head_out += name + ": " + value + "\r\n";
        if (r.close) head_out += "Connection: close\r\n";
        if (r.chunked) {
            head_out += "Transfer-Encoding: chunked\r\n";
        } else {
            std::size_t total = 0;
            for (const auto& p : r.parts)
                total += p.size();
            head_out += "Content-Length: " + std::to_string(total) + "\r\n";
        }
        head_out += "\r\n";
        return head_out;
    }

    static std::vector<std::string> encoded_parts(const scripted_response& r) {
        std::vector<std::string> out;
        for (const auto& p : r.parts) {
            if (!r.chunked)
                out.push_back(p);
            else if (!p.empty()) {
                char size[32];
                std::snprintf(size, sizeof size, "%zx\r\n", p.size());
                out.push_back(size + p + "\r\n");
            }
        }
        if (r.chunked) out.push_back("0\r\n\r\n");
        return out;
    }

    static tcp::socket& raw(tcp::socket& s) { return s; }
    static tcp::socket& raw(boost::asio::ssl::stream<tcp::socket>& s) { return s.next_layer(); }
    static std::string server_name(tcp::socket&) { return {}; }
    static std::string server_name(boost::asio::ssl::stream<tcp::socket>& s) {
        const char* name = SSL_get_servername(s.native_handle(), TLSEXT_NAMETYPE_host_name);
        return name == nullptr ? std::string() : std::string(name);
    }

    boost::asio::awaitable<void> session(tcp::socket socket) {
        if (!ssl_) {
            co_await serve(socket);
            co_return;
        }
        boost::asio::ssl::stream<tcp::socket> tls(std::move(socket), *ssl_);
        boost::system::error_code ec;
        co_await tls.async_handshake(boost::asio::ssl::stream_base::server,
                                     boost::asio::redirect_error(boost::asio::use_awaitable, ec));
        if (ec) co_return;
        co_await serve(tls);
    }

    template <class Stream>
    boost::asio::awaitable<void> serve(Stream& socket) {
        namespace asio = boost::asio;
        namespace http = boost::beast::http;
        boost::beast::flat_buffer buffer;
        for (;;) {
            boost::system::error_code ec;
            http::request<http::string_body> req;
            co_await http::async_read(socket, buffer, req, asio::redirect_error(asio::use_awaitable, ec));
            if (ec) co_return;
            recorded_request rec;
            rec.method = std::string(req.method_string());
            rec.target = std::string(req.target());
            for (const auto& field : req) {
                std::string name(field.name_string());
                std::transform(name.begin(), name.end(), name.begin(),
                               [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
                rec.headers[name] = std::string(field.value());
            }
            rec.body = req.body();
            rec.sni = server_name(socket);
            const bool client_keep_alive = req.keep_alive();
            scripted_response r = next(std::move(rec));

            asio::steady_timer timer(raw(socket).get_executor());
            if (r.stall) {
                timer.expires_after(std::chrono::hours(1));
                co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
                co_return;
            }
            if (r.delay_before.count() > 0) {
                timer.expires_after(r.delay_before);
                co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            }
            const std::string head = head_of(r);
            co_await asio::async_write(socket, asio::buffer(head),
                                       asio::redirect_error(asio::use_awaitable, ec));
            if (ec) co_return;
            std::size_t written = 0;
            bool first = true;
            for (const std::string& part : encoded_parts(r)) {
                if (!first && r.delay_between.count() > 0) {
                    timer.expires_after(r.delay_between);
                    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
                }
                first = false;
                std::string_view piece = part;
                bool drop = false;
                if (r.drop_after && written + piece.size() >= *r.drop_after) {
                    piece = piece.substr(0, *r.drop_after - written);
                    drop = true;
                }
                co_await asio::async_write(socket, asio::buffer(piece.data(), piece.size()),
                                           asio::redirect_error(asio::use_awaitable, ec));
                written += piece.size();
                if (ec) co_return;
                if (drop) {
                    raw(socket).shutdown(tcp::socket::shutdown_both, ec);
                    raw(socket).close(ec);
                    co_return;
                }
            }
            if (r.close || !client_keep_alive) {
                raw(socket).shutdown(tcp::socket::shutdown_send, ec);
                co_return;
            }
        }
    }

    boost::asio::io_context io_{1};
    std::optional<boost::asio::ssl::context> ssl_;
    tcp::acceptor acceptor_;
    unsigned short port_ = 0;
    std::thread thread_;
    mutable std::mutex mutex_;
    std::deque<scripted_response> script_;
    std::vector<recorded_request> requests_;
    std::atomic<std::size_t> connections_{0};
};

} // namespace agentware::test

#endif
