// The floor for a program that talks to an OpenAI-compatible endpoint: one
// chat-completions request posted by hand over HTTPS with Boost.Beast and
// OpenSSL (resolver, Beast's ssl_stream, http::request and http::response), its body
// written and the answer read with Boost.JSON, without agentware. What any C++
// program on these libraries pays to call such a model; the figure of
// openai_agent.cpp is read against it.
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <openssl/ssl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;

int main() {
    const char* key = std::getenv("OPENAI_API_KEY");
    if (key == nullptr) {
        std::fprintf(stderr, "OPENAI_API_KEY is not set\n");
        return 1;
    }
    const std::string host = "api.openai.com";
    json::object body{
        {"model", "gpt-4o-mini"},
        {"messages", json::array{json::object{{"role", "user"}, {"content", "What is 2 + 40?"}}}}};
    try {
        asio::io_context io;
        asio::ssl::context tls(asio::ssl::context::tls_client);
        tls.set_default_verify_paths();
        tls.set_verify_mode(asio::ssl::verify_peer);
        asio::ip::tcp::resolver resolver(io);
        beast::ssl_stream<beast::tcp_stream> stream(io, tls);
        if (!SSL_set_tlsext_host_name(stream.native_handle(), host.c_str()))
            throw beast::system_error(static_cast<int>(::ERR_get_error()), asio::error::get_ssl_category());
        stream.set_verify_callback(asio::ssl::host_name_verification(host));
        beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(60));
        beast::get_lowest_layer(stream).connect(resolver.resolve(host, "443"));
        stream.handshake(asio::ssl::stream_base::client);

        http::request<http::string_body> request{http::verb::post, "/v1/chat/completions", 11};
        request.set(http::field::host, host);
        request.set(http::field::authorization, std::string("Bearer ") + key);
        request.set(http::field::content_type, "application/json");
        request.body() = json::serialize(body);
        request.prepare_payload();
        http::write(stream, request);

        beast::flat_buffer buffer;
        http::response<http::string_body> response;
        http::read(stream, buffer, response);
        beast::error_code ec;
        stream.shutdown(ec);

        const json::value answer = json::parse(response.body());
        if (response.result() != http::status::ok) {
            std::fprintf(stderr, "HTTP %u: %s\n", response.result_int(), response.body().c_str());
            return 1;
        }
        const json::value& text = answer.at("choices").at(0).at("message").at("content");
        std::printf("%s\n", text.as_string().c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
