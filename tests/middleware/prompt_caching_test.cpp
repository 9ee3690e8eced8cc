// prompt_caching: Anthropic's cache_control (placed by our Anthropic client
// on the last block), OpenAI's prompt_cache_key, other providers ignored,
// warned about or refused.
#include <agentware/agent/requests.hpp>
#include <agentware/middleware/prompt_caching.hpp>
#include <agentware/model/anthropic_format.hpp>
#include <agentware/state/basic_state.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

using namespace agentware;

namespace {
using plain_state = basic_state<type_list<>>;

chat_request forwarded(prompt_caching p, chat_request in, runtime* rt = nullptr) {
    model_request<plain_state> req;
    static_cast<chat_request&>(req) = std::move(in);
    req.rt = rt;
    chat_request out;
    p.wrap_model_call(req, [&](auto& r) {
        out = r;
        return model_response{};
    });
    return out;
}
prompt_caching_options with_provider(std::string p) {
    prompt_caching_options o;
    o.provider = std::move(p);
    return o;
}
} // namespace

TEST_CASE("prompt_caching marks Anthropic requests, and the client puts the breakpoint on the last block",
          "[middleware][prompt_caching]") {
    chat_request in;
    in.system_prompt = std::string("You are helpful.");
    in.messages = std::vector<message>{human_message("hi"), ai_message("hello"), human_message("more")};
    auto out = forwarded(prompt_caching{}, in);
    CHECK(out.settings.extra_body.at("cache_control") ==
          boost::json::parse(R"({"type":"ephemeral","ttl":"5m"})"));
    auto body = make_anthropic_request(out, "claude", false);
    CHECK_FALSE(body.contains("cache_control"));
    const auto& last = body.at("messages").as_array().back().at("content").as_array().back();
    CHECK(last.at("cache_control").at("ttl") == "5m");
    CHECK(last.at("text") == "more");
    // no messages: the system prompt carries it
    chat_request only_system;
    only_system.system_prompt = std::string("S");
    auto body2 = make_anthropic_request(forwarded(prompt_caching{}, only_system), "claude", false);
    CHECK(body2.at("system").at(0).at("cache_control").at("type") == "ephemeral");
}

TEST_CASE("prompt_caching: min_messages_to_cache counts the system prompt", "[middleware][prompt_caching]") {
    prompt_caching_options o;
    o.min_messages_to_cache = 3;
    o.ttl = "1h";
    chat_request in;
    in.messages = std::vector<message>{human_message("a"), ai_message("b")};
    CHECK_FALSE(forwarded(prompt_caching(o), in).settings.extra_body.contains("cache_control"));
    in.system_prompt = std::string("S");
    CHECK(forwarded(prompt_caching(o), in).settings.extra_body.at("cache_control").at("ttl") == "1h");
}

TEST_CASE("prompt_caching for OpenAI sets the cache key, other providers per unsupported_model_behavior",
          "[middleware][prompt_caching]") {
    runtime rt{"thread-9", "run-1", {}, 0};
    chat_request in;
    in.messages = std::vector<message>{human_message("a")};
    auto o = with_provider("openai");
    o.openai_cache_retention = "24h";
    auto out = forwarded(prompt_caching(o), in, &rt);
    CHECK(out.settings.extra_body.at("prompt_cache_key") == "thread-9");
    CHECK(out.settings.extra_body.at("prompt_cache_retention") == "24h");
    CHECK_FALSE(out.settings.extra_body.contains("cache_control"));

    auto warn = forwarded(prompt_caching(with_provider("deepseek")), in, &rt);
    CHECK(warn.settings.extra_body.empty());
    forwarded(prompt_caching(with_provider("deepseek")), in, &rt);
    REQUIRE(rt.context.at("events").as_array().size() == 1); // once per run
    CHECK(rt.context.at("events").at(0).at("event") == "prompt_caching_unsupported");

    auto ignore = with_provider("deepseek");
    ignore.unsupported_model_behavior = "ignore";
    runtime quiet;
    forwarded(prompt_caching(ignore), in, &quiet);
    CHECK_FALSE(quiet.context.contains("events"));
    auto raise = with_provider("deepseek");
    raise.unsupported_model_behavior = "raise";
    CHECK_THROWS_WITH(forwarded(prompt_caching(raise), in, &quiet),
                      "prompt_caching supports Anthropic and OpenAI models, not provider 'deepseek'");
}

TEST_CASE("prompt_caching options: JSON round trip and bad input", "[middleware][prompt_caching][options]") {
    auto o = boost::json::value_to<prompt_caching_options>(boost::json::parse(
        R"({"ttl": "1h", "min_messages_to_cache": 2, "unsupported_model_behavior": "ignore"})"));
    CHECK(o.ttl == "1h");
    CHECK(boost::json::value_to<prompt_caching_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(boost::json::value_to<prompt_caching_options>(boost::json::parse(R"({"ttl": "2h"})")),
                      Catch::Contains("prompt_caching") && Catch::Contains("ttl"));
    CHECK_THROWS_WITH(boost::json::value_to<prompt_caching_options>(
                          boost::json::parse(R"({"unsupported_model_behavior": "shout"})")),
                      Catch::Contains("unsupported_model_behavior"));
    CHECK_THROWS_WITH(
        boost::json::value_to<prompt_caching_options>(boost::json::parse(R"({"enable": true})")),
        Catch::Contains("enable"));
}
