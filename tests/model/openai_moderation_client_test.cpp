// The moderation endpoint's client against a local scripted server: the
// request it sends, the answer read, retries, errors without the key, the
// coroutine call, and the moderation middleware calling it.

#include <agentware/middleware/moderation.hpp>
#include <agentware/model/openai_moderation_client.hpp>
#include <agentware/state/basic_state.hpp>

#include "../support/scripted_http_server.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>

#include <chrono>
#include <cstdlib>
#include <string>

using namespace agentware;
using namespace agentware::test;
using namespace std::chrono_literals;

namespace moderation_client_test {

constexpr const char* moderation_key_variable = "AGENTWARE_TEST_MODERATION_KEY";
constexpr const char* moderation_test_key = "sk-mod-0123456789abcdef";

openai_moderation_config moderation_config_for(const scripted_http_server& server) {
    ::setenv(moderation_key_variable, moderation_test_key, 1);
    openai_moderation_config c;
    c.base_url = server.base_url();
    c.api_key_env = moderation_key_variable;
    c.http.connect_timeout = 500ms;
    c.http.first_byte_timeout = 300ms;
    c.http.total_timeout = 3s;
    c.retry.initial_backoff = 5ms;
    c.retry.max_backoff = 20ms;
    return c;
}

const char* moderation_flagged_body =
    R"({"id":"modr-1","model":"omni-moderation-latest","results":[{"flagged":true,
    "categories":{"violence":true,"harassment":false},"category_scores":{"violence":0.91,"harassment":0.02}}]})";
const char* moderation_clean_body =
    R"({"id":"modr-2","model":"omni-moderation-latest","results":[{"flagged":false,
    "categories":{"violence":false},"category_scores":{"violence":0.001}}]})";

} // namespace moderation_client_test

using namespace moderation_client_test;

TEST_CASE("moderation client: POST /moderations with the key, and the answer read", "[client][moderation]") {
    scripted_http_server server;
    server.push(scripted_response::json(moderation_flagged_body));
    openai_moderation_client client(moderation_config_for(server));
    moderation_result r = client.check("I will hurt you", "omni-moderation-latest");
    CHECK(r.flagged);
    CHECK(r.categories.at("violence"));
    CHECK_FALSE(r.categories.at("harassment"));
    CHECK(r.category_scores.at("violence") == Approx(0.91));
    REQUIRE(server.request_count() == 1);
    const auto req = server.requests()[0];
    CHECK(req.method == "POST");
    CHECK(req.target == "/v1/moderations");
    CHECK(req.header("authorization") == std::string("Bearer ") + moderation_test_key);
    CHECK(req.json() ==
          boost::json::parse(R"({"model":"omni-moderation-latest","input":"I will hurt you"})"));
}

TEST_CASE(
    "moderation client: retries a 5xx, reports a 401 without the key, rejects an answer without results",
    "[client][moderation]") {
    scripted_http_server server;
    server.push(scripted_response::json(R"({"error":{"message":"overloaded"}})", 503));
    server.push(scripted_response::json(moderation_clean_body));
    openai_moderation_client client(moderation_config_for(server));
    CHECK_FALSE(client.check("hello", "m").flagged);
    CHECK(server.request_count() == 2);

    server.push(scripted_response::json(std::string(R"({"error":{"message":"Incorrect API key provided: )") +
                                            moderation_test_key + R"("}})",
                                        401));
    try {
        (void)client.check("hello", "m");
        FAIL("a 401 must throw");
    } catch (const model_error& e) {
        CHECK(e.kind() == model_error_kind::authentication);
        CHECK(std::string(e.what()).find(moderation_test_key) == std::string::npos);
    }

    server.push(scripted_response::json(R"({"id":"x"})"));
    try {
        (void)client.check("hello", "m");
        FAIL("an answer without results must throw");
    } catch (const model_error& e) {
        CHECK(e.kind() == model_error_kind::invalid_response);
    }
}

TEST_CASE("moderation client: the key comes from the environment only", "[client][moderation]") {
    ::unsetenv("AGENTWARE_TEST_MODERATION_MISSING");
    openai_moderation_config c;
    c.base_url = "http://127.0.0.1:9/v1";
    c.api_key_env = "AGENTWARE_TEST_MODERATION_MISSING";
    try {
        openai_moderation_client client(c);
        FAIL("a missing key must throw");
    } catch (const model_error& e) {
        CHECK(e.kind() == model_error_kind::configuration);
        CHECK(std::string(e.what()).find("AGENTWARE_TEST_MODERATION_MISSING") != std::string::npos);
    }
    c.base_url = "ftp://example.com";
    c.api_key_env = "";
    CHECK_THROWS_AS(openai_moderation_client(c), model_error);
}

TEST_CASE("moderation client: the coroutine call", "[client][moderation][async]") {
    scripted_http_server server;
    server.push(scripted_response::json(moderation_clean_body));
    boost::asio::io_context io; // before the client: its idle connection is bound to the context
    openai_moderation_client client(moderation_config_for(server));
    auto result = boost::asio::co_spawn(io, client.async_check("hello", "omni-moderation-latest"),
                                        boost::asio::use_future);
    io.run();
    CHECK_FALSE(result.get().flagged);
    CHECK(server.requests().at(0).json().at("input") == "hello");
}

TEST_CASE("moderation middleware with the HTTP client ends the run on flagged input",
          "[client][moderation]") {
    scripted_http_server server;
    server.push(scripted_response::json(moderation_flagged_body));
    moderation_options o;
    o.check = openai_moderation_client(moderation_config_for(server));
    moderation m(o);
    basic_state<type_list<>> s;
    runtime rt;
    s.messages.push_back(human_message("I will hurt you"));
    CHECK(m.before_model(s, rt) == jump_to::end);
    REQUIRE(s.messages.size() == 2);
    CHECK(s.messages[1].text() ==
          "I'm sorry, but I can't comply with that request. It was flagged for violence.");
    CHECK(server.requests().at(0).json().at("model") == "omni-moderation-latest");
}
