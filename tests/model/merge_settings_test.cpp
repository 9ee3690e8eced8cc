// model/merge_settings.hpp: a model's configured defaults combined with one request's settings.
#include <agentware/model/merge_settings.hpp>

#include <catch2/catch.hpp>

#include <boost/json/object.hpp>

#include <string>
#include <vector>

using namespace agentware;

namespace merge_settings_test {

inline model_settings configured_defaults() {
    model_settings d;
    d.temperature = 0.2;
    d.max_tokens = 1000;
    d.stop = {"END"};
    d.tool_choice = "auto";
    d.parallel_tool_calls = true;
    d.reasoning_effort = "low";
    d.extra_body = {{"top_p", 0.9}, {"seed", 7}};
    return d;
}

} // namespace merge_settings_test

TEST_CASE("merge_settings: a request that sets nothing keeps every default", "[merge_settings]") {
    const model_settings defaults = merge_settings_test::configured_defaults();
    CHECK(merge_settings(defaults, model_settings{}) == defaults);
    // Nothing configured: the request's settings as they are.
    model_settings request;
    request.temperature = 1.0;
    request.stop = {"STOP"};
    request.extra_body = {{"user", "u1"}};
    CHECK(merge_settings(model_settings{}, request) == request);
}

TEST_CASE("merge_settings: what the request sets replaces the default, field by field", "[merge_settings]") {
    const model_settings defaults = merge_settings_test::configured_defaults();
    model_settings request;
    request.temperature = 0.0; // a value, even zero, is set
    request.max_tokens = 50;
    request.stop = {"a", "b"};
    request.tool_choice = "none";
    request.parallel_tool_calls = false; // false is set too
    request.reasoning_effort = "high";
    const model_settings merged = merge_settings(defaults, request);
    CHECK(merged.temperature == 0.0);
    CHECK(merged.max_tokens == 50);
    CHECK(merged.stop == std::vector<std::string>{"a", "b"}); // replaced, not appended
    CHECK(merged.tool_choice == "none");
    CHECK(merged.parallel_tool_calls == false);
    CHECK(merged.reasoning_effort == "high");

    // One field at a time: the others keep their defaults.
    model_settings only_tokens;
    only_tokens.max_tokens = 9;
    model_settings expected = defaults;
    expected.max_tokens = 9;
    CHECK(merge_settings(defaults, only_tokens) == expected);
}

TEST_CASE("merge_settings: extra_body merges key by key", "[merge_settings]") {
    const model_settings defaults = merge_settings_test::configured_defaults();
    model_settings request;
    request.extra_body = {{"seed", 8}, {"user", "u1"}};
    const model_settings merged = merge_settings(defaults, request);
    CHECK(merged.extra_body == boost::json::object{{"top_p", 0.9}, {"seed", 8}, {"user", "u1"}});
}

TEST_CASE("merge_settings: thinking is on when either asks for it", "[merge_settings]") {
    for (bool by_default : {false, true})
        for (bool by_request : {false, true}) {
            model_settings defaults, request;
            defaults.thinking = by_default;
            request.thinking = by_request;
            CHECK(merge_settings(defaults, request).thinking == (by_default || by_request));
        }
}
