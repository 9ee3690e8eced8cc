// message/provider_metadata.hpp: what a provider reports about an answer, typed on the message.
#include <agentware/message/provider_metadata.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <type_traits>

namespace json = boost::json;
using namespace agentware;
using message_test::obj;
using message_test::through_json;

TEST_CASE("provider metadata is typed, one pointer when absent, and a value", "[message][provider]") {
    STATIC_REQUIRE(sizeof(provider_metadata) == sizeof(void*));
    STATIC_REQUIRE(sizeof(message) <= 160); // 240 with every role's members inline
    STATIC_REQUIRE(std::is_nothrow_move_constructible_v<provider_metadata>);

    provider_metadata none;
    CHECK(none.empty());
    CHECK(none.finish_reason().empty());
    CHECK(none.model().empty());
    CHECK(none.usage() == token_usage{});
    CHECK(provider_metadata("", "", {}).empty()); // nothing reported holds nothing

    provider_metadata p("tool_calls", "gpt-4o-2024-08-06", token_usage{82, 17, 99});
    CHECK(p.finish_reason() == "tool_calls");
    CHECK(p.model() == "gpt-4o-2024-08-06");
    CHECK(p.usage() == token_usage{82, 17, 99});

    provider_metadata copy = p;
    CHECK(copy == p);
    copy.set_finish_reason("stop"); // the copy is its own
    CHECK(copy.finish_reason() == "stop");
    CHECK(copy.model() == "gpt-4o-2024-08-06");
    CHECK(p.finish_reason() == "tool_calls");
    CHECK(copy != p);

    copy.set_model(copy.finish_reason()); // a view of itself is read before it is replaced
    CHECK(copy.model() == "stop");
    copy.set_usage({});
    copy = p;
    CHECK(copy == p);

    provider_metadata moved = std::move(copy);
    CHECK(moved == p);
    CHECK(copy.empty()); // NOLINT: a moved-from value reads empty
    moved.clear();
    CHECK(moved.empty());
    CHECK(moved == none);
}

TEST_CASE(
    "a state saved with metadata as one JSON object loads into the typed members and saves the same keys",
    "[message][json][provider]") {
    const json::value saved = json::parse(R"({"role":"assistant","id":"chatcmpl-1","content":"Done.",
        "metadata":{"finish_reason":"stop","model":"gpt-4o","refusal":"",
                    "usage":{"input_tokens":120,"output_tokens":8,"total_tokens":128},
                    "run_id":"run-7","tool_meta":{"status":"success"}}})");
    const message m = json::value_to<message>(saved);
    CHECK(m.provider == provider_metadata("stop", "gpt-4o", token_usage{120, 8, 128}));
    CHECK(m.metadata == obj(R"({"refusal":"","run_id":"run-7","tool_meta":{"status":"success"}})"));
    CHECK(json::value_from(m) == saved);
    CHECK(through_json(m) == m);
}

TEST_CASE("metadata the typed members cannot hold exactly stays JSON, unchanged",
          "[message][json][provider]") {
    for (const char* metadata :
         {R"({"finish_reason":7,"model":["a"]})",                    // not strings
          R"({"finish_reason":"","model":""})",                      // empty strings
          R"({"usage":{"prompt_tokens":12,"completion_tokens":7}})", // another provider's shape
          R"({"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3,"x":0}})", // more keys
          R"({"usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}})",       // zero: unset
          R"({"usage":{"input_tokens":-1,"output_tokens":2,"total_tokens":1}})",      // negative
          R"({"usage":{"input_tokens":1.5,"output_tokens":2,"total_tokens":3}})"}) {  // not an integer
        INFO(metadata);
        const json::value saved{{"role", "assistant"}, {"content", "x"}, {"metadata", json::parse(metadata)}};
        const message m = json::value_to<message>(saved);
        CHECK(m.provider.empty());
        CHECK(json::value(m.metadata) == json::parse(metadata));
        CHECK(json::value_from(m) == saved);
    }
    // A key of both is written once, from the typed member.
    message both = ai_message("x");
    both.provider.set_finish_reason("stop");
    both.metadata["finish_reason"] = "length";
    both.metadata["seed"] = 4;
    CHECK(json::value_from(both).at("metadata") == json::parse(R"({"finish_reason":"stop","seed":4})"));
}

TEST_CASE("token_usage and provider_metadata convert on their own", "[message][json][provider]") {
    const token_usage usage{5, 6, 11};
    CHECK(json::value_from(usage) ==
          json::parse(R"({"input_tokens":5,"output_tokens":6,"total_tokens":11})"));
    CHECK(json::value_to<token_usage>(json::value_from(usage)) == usage);
    CHECK(json::value_to<token_usage>(json::parse(R"({"output_tokens":2})")) == token_usage{0, 2, 0});

    const provider_metadata p("end_turn", "claude-sonnet-4-20250514", usage);
    CHECK(json::value_from(p) ==
          json::parse(R"({"finish_reason":"end_turn","model":"claude-sonnet-4-20250514",
        "usage":{"input_tokens":5,"output_tokens":6,"total_tokens":11}})"));
    CHECK(json::value_to<provider_metadata>(json::value_from(p)) == p);
    CHECK(json::value_from(provider_metadata()) == json::object());

    std::string error;
    try {
        (void)json::value_to<token_usage>(json::parse(R"({"input_tokens":"many"})"));
    } catch (const message_format_error& e) {
        error = e.what();
    }
    CHECK(error == R"(token_usage: field "input_tokens" must be a non-negative integer (got "many"))");
}
