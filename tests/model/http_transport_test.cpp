// model/http_transport.hpp: HTTPS against a local TLS server with a throw-away certificate
// (certificate verification, SNI, keep-alive over TLS), and the parts of a URL.

#include <agentware/model/http_transport.hpp>

#include <agentware/model/openai_chat_model.hpp>

#include "../support/openai_fixtures.hpp"
#include "../support/scripted_http_server.hpp"
#include "../support/test_certificate.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace agentware;
using namespace agentware::test;
using namespace std::chrono_literals;

namespace {

struct tls_fixture {
    test_certificate cert = make_test_certificate();
    tls_identity identity{cert.cert_pem, cert.key_pem};
    std::filesystem::path ca_file =
        std::filesystem::temp_directory_path() / ("agentware-test-ca-" + std::to_string(::getpid()) + ".pem");

    tls_fixture() { std::ofstream(ca_file) << cert.cert_pem; }
    ~tls_fixture() { std::filesystem::remove(ca_file); }
};

openai_config https_config(const scripted_http_server& server) {
    openai_config c;
    c.base_url = server.base_url();
    c.model = "m";
    c.api_key_env = "";
    c.retry = retry_policy::none();
    c.http.first_byte_timeout = 2s;
    c.http.use_environment_proxy = false;
    return c;
}

chat_request transport_hello() {
    chat_request r;
    r.messages = cow_vector<message>(std::vector<message>{human_message("hello")});
    return r;
}

} // namespace

TEST_CASE("https: a trusted certificate, SNI, and keep-alive over TLS", "[client][https]") {
    tls_fixture tls;
    scripted_http_server server(&tls.identity);
    openai_config c = https_config(server);
    c.http.ca_file = tls.ca_file.string();
    openai_chat_model model(c);

    server.push(scripted_response::json(openai_plain_answer));
    server.push(scripted_response::sse(
        {"data: "
         "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"secure\"},\"finish_reason\":\"stop\"}]}\n\n",
         "data: [DONE]\n\n"}));
    CHECK(model.invoke(transport_hello()).ai.text() == "Hello! How can I help?");
    chat_request r = transport_hello();
    std::string streamed;
    r.stream.on_text = [&](std::string_view d) { streamed += d; };
    CHECK(model.invoke(r).ai.text() == "secure");
    CHECK(streamed == "secure");
    CHECK(server.connections() == 1);
    CHECK(server.requests().at(0).sni == "localhost");
    CHECK(server.requests().at(0).header("host") == "localhost:" + std::to_string(server.port()));
}

TEST_CASE("https: an untrusted certificate fails the handshake, verification can be turned off",
          "[client][https]") {
    tls_fixture tls;
    scripted_http_server server(&tls.identity);
    {
        openai_chat_model model(https_config(server));
        try {
            (void)model.invoke(transport_hello());
            FAIL("no error");
        } catch (const model_error& e) {
            CHECK(e.kind() == model_error_kind::connection);
            CHECK(std::string(e.what()).find("TLS handshake") != std::string::npos);
        }
        CHECK(server.request_count() == 0);
    }
    openai_config insecure = https_config(server);
    insecure.http.verify_peer = false;
    openai_chat_model model(insecure);
    server.push(scripted_response::json(openai_plain_answer));
    CHECK(model.invoke(transport_hello()).ai.text() == "Hello! How can I help?");
}

TEST_CASE("urls: parts, default ports, IPv6, paths", "[transport]") {
    const auto u = detail::parse_url("https://api.openai.com/v1/");
    CHECK(u.host == "api.openai.com");
    CHECK(u.port == "443");
    CHECK(u.path == "/v1");
    CHECK(u.authority() == "api.openai.com");
    const auto l = detail::parse_url("http://[::1]:8080");
    CHECK(l.host == "::1");
    CHECK(l.port == "8080");
    CHECK(l.authority() == "[::1]:8080");
    CHECK_THROWS_AS(detail::parse_url("localhost:8080"), model_error);
    CHECK_THROWS_AS(detail::parse_url("http://:80"), model_error);
}
