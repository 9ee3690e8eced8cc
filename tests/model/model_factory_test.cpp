// model/model_factory.hpp: models from configuration, built by name, and its errors.

#include <agentware/model/model_factory.hpp>

#include "../support/anthropic_fixtures.hpp"
#include "../support/openai_fixtures.hpp"
#include "../support/scripted_http_server.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

namespace json = boost::json;
using namespace agentware;
using namespace agentware::test;
using model_test::ask;

namespace {

std::string configuration_error(auto&& f) {
    try {
        f();
    } catch (const model_error& e) {
        CHECK(e.kind() == model_error_kind::configuration);
        return e.what();
    }
    FAIL("no configuration error");
    return {};
}
} // namespace

TEST_CASE("factory: models from JSON, built by name, talking to their servers", "[factory]") {
    scripted_http_server server;
    ::setenv("AGENTWARE_TEST_FACTORY_KEY", "k-123456", 1);
    const std::string config = fmt::format(R"({{"models":[
      {{"name":"fast","provider":"openai","model":"gpt-4o-mini","base_url":"{0}","api_key_env":"AGENTWARE_TEST_FACTORY_KEY",
        "supports_vision":true,"max_input_tokens":128000,
        "defaults":{{"temperature":0.2,"max_tokens":512,"extra_body":{{"seed":7}}}},
        "headers":{{"HTTP-Referer":"https://example.org"}},
        "timeouts":{{"connect_ms":500,"first_byte_ms":500,"total_ms":2000}},"retry":{{"max_retries":1,"initial_backoff_ms":5}}}},
      {{"name":"thinker","provider":"deepseek","model":"deepseek-reasoner","base_url":"{0}","api_key_env":"",
        "supports_thinking":true,"when_thinking":{{"reasoning_effort":"high","extra_body":{{"thinking":{{"type":"enabled"}}}}}}}},
      {{"name":"claude","provider":"anthropic","model":"claude-test","base_url":"{1}","api_key_env":"AGENTWARE_TEST_FACTORY_KEY",
        "supports_thinking":true,"thinking_budget_tokens":2048}}
    ]}})",
                                           server.base_url("/v1"), server.base_url(""));
    const model_registry registry = model_registry::from_json_text(config);
    REQUIRE(registry.models().size() == 3);

    any_chat_model fast = registry.create_chat_model("fast");
    CHECK(fast.info().supports_vision);
    CHECK(fast.info().max_input_tokens == 128000);
    server.push(scripted_response::json(openai_plain_answer));
    CHECK(fast.invoke(ask("hi")).ai.text() == "Hello! How can I help?");
    auto req = server.requests().back();
    CHECK(req.header("authorization") == "Bearer k-123456");
    CHECK(req.header("http-referer") == "https://example.org");
    CHECK(req.json().at("temperature") == 0.2);
    CHECK(req.json().at("max_tokens") == 512);
    CHECK(req.json().at("seed") == 7);

    any_chat_model thinker = registry.create_chat_model("thinker", true);
    CHECK(thinker.info().thinking_enabled);
    server.push(scripted_response::json(openai_plain_answer));
    (void)thinker.invoke(ask("hi"));
    req = server.requests().back();
    CHECK(req.header("authorization").empty());
    CHECK(req.json().at("reasoning_effort") == "high");
    CHECK(req.json().at("thinking").at("type") == "enabled");
    CHECK(req.json().at("model") == "deepseek-reasoner");

    any_chat_model claude = registry.create_chat_model("claude", true);
    server.push(scripted_response::json(anthropic_answer));
    CHECK(claude.invoke(ask("hi")).ai.tool_calls.size() == 1);
    req = server.requests().back();
    CHECK(req.target == "/v1/messages");
    CHECK(req.json().at("thinking").at("budget_tokens") == 2048);

    // Asynchronously through the erased type, on one io_context.
    boost::asio::io_context io;
    server.push(scripted_response::json(openai_plain_answer));
    std::string answer;
    const chat_request r = ask("hi");
    boost::asio::co_spawn(io, fast.async_invoke(r), [&](std::exception_ptr e, model_response m) {
        CHECK(e == nullptr);
        answer = m.ai.text();
    });
    io.run();
    CHECK(answer == "Hello! How can I help?");
    fast.target<openai_chat_model>()->close_idle_connections();
}

TEST_CASE("factory: clear errors for unknown names, providers, fields and thinking", "[factory]") {
    const auto registry = model_registry::from_json_text(
        R"({"models":[{"name":"a","model":"m1","api_key_env":""},{"name":"b","provider":"ollama","model":"llama3"}]})");
    CHECK(registry.find("").info.name == "a");
    CHECK(registry.find("b").info.provider == "ollama");
    CHECK(configuration_error([&] { (void)registry.find("c"); }) == "unknown model \"c\" (configured: a, b)");
    CHECK(configuration_error([&] {
              (void)registry.create_chat_model("b", true);
          }).find("does not support thinking") != std::string::npos);

    const std::string provider = configuration_error([] {
        (void)model_registry::from_json_text(R"({"models":[{"name":"x","provider":"gemini","model":"g"}]})");
    });
    CHECK(provider.find("unknown provider \"gemini\"") != std::string::npos);
    CHECK(provider.find("openai, anthropic, deepseek") != std::string::npos);
    CHECK(configuration_error([] {
              (void)model_registry::from_json_text(R"({"models":[{"name":"x","model":"m","temprature":1}]})");
          }).find("models[0].temprature: unknown key (known: name, display_name, ") != std::string::npos);
    CHECK(configuration_error([] {
              (void)model_registry::from_json_text(R"({"models":[{"name":"x"}]})");
          }).find("models[0].model: missing") != std::string::npos);
    CHECK(configuration_error([] {
              (void)model_registry::from_json_text(
                  R"({"models":[{"name":"x","model":"m","defaults":{"temperature":"hot"}}]})");
          }) == R"(model configuration: models[0].defaults.temperature: expected a number, got "hot")");
    CHECK(configuration_error([] {
              (void)model_registry::from_json_text(
                  R"({"models":[{"name":"x","model":"m","timeouts":{"connect_ms":-1}}]})");
          }) ==
          "model configuration: models[0].timeouts.connect_ms: expected a non-negative integer, got -1");
    CHECK(configuration_error([] {
              (void)model_registry::from_json_text(
                  R"({"models":[{"name":"x","model":"m"},{"name":"x","model":"n"}]})");
          }).find("used twice") != std::string::npos);
    CHECK(configuration_error([] { (void)model_registry::from_json_text("[1,"); }).find("JSON") !=
          std::string::npos);
    CHECK(configuration_error([] {
              (void)model_registry::from_file("/nonexistent/agentware.json");
          }).find("/nonexistent") != std::string::npos);
    CHECK(configuration_error([] { (void)model_registry().create_chat_model("x"); }) ==
          "no models are configured");

    // The API key variable named in the configuration must be set; the error names the variable.
    ::unsetenv("AGENTWARE_TEST_MISSING_KEY");
    const auto needs_key = model_registry::from_json_text(
        R"({"models":[{"name":"k","model":"m","api_key_env":"AGENTWARE_TEST_MISSING_KEY"}]})");
    CHECK(configuration_error([&] {
              (void)needs_key.create_chat_model("k");
          }).find("AGENTWARE_TEST_MISSING_KEY") != std::string::npos);
}

TEST_CASE("factory: DeerFlow's model classes by a table, any other use: is refused, its key sent nowhere",
          "[factory]") {
    auto entry = [](const std::string& use, const std::string& more = "") {
        return R"({"models":[{"name":"x","use":")" + use + R"(","model":"m","api_key":"secret-key")" + more +
               "}]}";
    };
    // Google's class (and DeerFlow's Codex one) are not spoken: refused at models[0].use, listing the known
    // ones.
    for (const char* use : {"langchain_google_genai:ChatGoogleGenerativeAI",
                            "deerflow.models.openai_codex_provider:CodexChatModel"}) {
        const std::string e = configuration_error([&] { (void)model_registry::from_json_text(entry(use)); });
        CHECK(e.starts_with(
            fmt::format("model configuration: models[0].use: unknown model class \"{}\" (known: ", use)));
        for (const char* known : {"langchain_openai:ChatOpenAI", "langchain_anthropic:ChatAnthropic",
                                  "langchain_deepseek:ChatDeepSeek", "langchain_ollama:ChatOllama"})
            CHECK(e.find(known) != std::string::npos);
        CHECK(e.find("secret-key") == std::string::npos);
    }
    // A class with no endpoint of its own needs the entry's server.
    CHECK(configuration_error([&] {
              (void)model_registry::from_json_text(
                  entry("deerflow.models.patched_minimax:PatchedChatMiniMax"));
          }).find("models[0].base_url: missing") != std::string::npos);
    const auto minimax = model_registry::from_json_text(entry(
        "deerflow.models.patched_minimax:PatchedChatMiniMax", R"(,"base_url":"http://127.0.0.1:9/v1")"));
    CHECK(minimax.find("x").base_url == "http://127.0.0.1:9/v1");
    // Each known class talks to its provider; Ollama's native URL gets its OpenAI-compatible /v1.
    CHECK(
        model_registry::from_json_text(entry("langchain_anthropic:ChatAnthropic")).find("x").info.provider ==
        "anthropic");
    CHECK(model_registry::from_json_text(entry("langchain_deepseek:ChatDeepSeek")).find("x").info.provider ==
          "deepseek");
    const auto ollama = model_registry::from_json_text(
        entry("langchain_ollama:ChatOllama", R"(,"base_url":"http://127.0.0.1:11434/")"));
    CHECK(ollama.find("x").info.provider == "ollama");
    CHECK(ollama.find("x").base_url == "http://127.0.0.1:11434/v1");

    // The key goes to the host the entry names, and only there.
    scripted_http_server server;
    server.push(scripted_response::json(openai_plain_answer));
    const auto local = model_registry::from_json_text(
        entry("langchain_openai:ChatOpenAI", R"(,"base_url":")" + server.base_url("/v1") + "\""));
    CHECK(local.create_chat_model("x").invoke(ask("hi")).ai.text() == "Hello! How can I help?");
    REQUIRE(server.request_count() == 1);
    CHECK(server.requests()[0].header("authorization") == "Bearer secret-key");
}

TEST_CASE("factory: with no configuration, the environment names one model", "[factory]") {
    ::unsetenv("AGENTWARE_CONFIG");
    ::unsetenv("AGENTWARE_MODEL");
    CHECK(configuration_error([] { (void)create_chat_model(); }).find("AGENTWARE_MODEL") !=
          std::string::npos);
    ::setenv("AGENTWARE_MODEL", "qwen2.5:7b", 1);
    ::setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1", 1);
    ::unsetenv("OPENAI_API_KEY");
    const auto registry = model_registry::load_default();
    REQUIRE(registry.models().size() == 1);
    CHECK(registry.models()[0].info.model == "qwen2.5:7b");
    CHECK(registry.models()[0].api_key_env == std::optional<std::string>(""));
    CHECK(create_chat_model("qwen2.5:7b").info().provider == "openai");
    ::unsetenv("AGENTWARE_MODEL");
    ::unsetenv("OPENAI_BASE_URL");
}
