// model/http_chat_client.hpp: what the HTTP model clients share, seen through the OpenAI
// client: the configured defaults under each request's settings, the configured headers.
// (Retries, timeouts, streaming and cancellation: openai_chat_model_test, anthropic_chat_model_test.)
#include <agentware/model/http_chat_client.hpp>

#include <agentware/model/openai_chat_model.hpp>

#include "../support/openai_fixtures.hpp"
#include "../support/scripted_http_server.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

#include <boost/json/value.hpp>

#include <chrono>

using namespace agentware;
using namespace agentware::test;
using namespace std::chrono_literals;

TEST_CASE("http_chat_client: the configured defaults sit under each request's own settings",
          "[client][http_chat_client]") {
    scripted_http_server server;
    server.push(scripted_response::json(openai_plain_answer));
    server.push(scripted_response::json(openai_plain_answer));
    openai_config config;
    config.base_url = server.base_url();
    config.model = "gpt-test";
    config.api_key_env = ""; // a server that needs no key
    config.headers = {{"x-team", "agents"}};
    config.defaults.temperature = 0.2;
    config.defaults.max_tokens = 100;
    config.defaults.extra_body = {{"top_p", 0.9}};
    config.http.first_byte_timeout = 300ms;
    openai_chat_model model(config);

    (void)model.invoke(model_test::ask("plain"));
    chat_request own = model_test::ask("own settings");
    own.settings.temperature = 0.7;
    own.settings.extra_body = {{"top_p", 0.5}};
    (void)model.invoke(own);

    const auto requests = server.requests();
    REQUIRE(requests.size() == 2);
    const boost::json::value plain = requests[0].json();
    CHECK(plain.at("temperature") == 0.2);
    CHECK(plain.at("max_tokens") == 100);
    CHECK(plain.at("top_p") == 0.9);
    const boost::json::value overridden = requests[1].json();
    CHECK(overridden.at("temperature") == 0.7); // the request's own
    CHECK(overridden.at("max_tokens") == 100);  // the default it did not set
    CHECK(overridden.at("top_p") == 0.5);
    for (const auto& r : requests) {
        CHECK(r.header("x-team") == "agents");
        CHECK(r.header("authorization").empty()); // no key configured, none sent
    }
    model.close_idle_connections();
}
