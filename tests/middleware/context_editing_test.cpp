// context_editing: clear_tool_uses in the request only, with its trigger,
// keep, clear_at_least, clear_tool_inputs, exclusions and placeholder.
#include <agentware/agent/requests.hpp>
#include <agentware/middleware/context_editing.hpp>
#include <agentware/state/basic_state.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

using namespace agentware;

namespace {
using plain_state = basic_state<type_list<>>;

// A history of n tool rounds, each result `size` characters long.
std::vector<message> history(int n, std::size_t size, std::string name = "read") {
    std::vector<message> ms{human_message("start")};
    for (int i = 0; i < n; ++i) {
        const std::string id = "c" + std::to_string(i);
        ms.push_back(
            ai_message("", {tool_call{id, name, boost::json::parse(R"({"path":"/x"})").as_object()}}));
        ms.push_back(tool_message(id, name, std::string(size, 'a' + static_cast<char>(i))));
    }
    return ms;
}

std::vector<message> sent(context_editing ce, std::vector<message> ms) {
    plain_state s;
    s.messages = ms;
    model_request<plain_state> req;
    req.messages = std::move(ms);
    req.state = &s;
    std::vector<message> seen;
    ce.wrap_model_call(req, [&](auto& r) {
        seen = r.messages.get();
        return model_response{};
    });
    return seen;
}

context_editing_options with(clear_tool_uses_edit e) {
    return context_editing_options{{std::move(e)}, "approximate"};
}
} // namespace

TEST_CASE("context_editing clears all but the last three tool results over the trigger, in the request only",
          "[middleware][context_editing]") {
    clear_tool_uses_edit e;
    e.trigger = 1000;
    context_editing ce(with(e));
    auto ms = history(6, 1000);
    auto out = sent(ce, ms);
    REQUIRE(out.size() == ms.size());
    int cleared = 0;
    for (std::size_t i = 0; i < out.size(); ++i)
        if (out[i].is_tool() && out[i].text() == "[cleared]") {
            ++cleared;
            CHECK(out[i].metadata.at("context_editing").at("cleared") == true);
            CHECK(out[i].metadata.at("context_editing").at("strategy") == "clear_tool_uses");
        }
    CHECK(cleared == 3);
    CHECK(out[12].text() == std::string(1000, 'f')); // the latest kept
    CHECK(out[2].text() == "[cleared]");
    CHECK(out[1].tool_calls[0].args.at("path") == "/x"); // inputs kept by default
    CHECK(ms[2].text() == std::string(1000, 'a'));       // the history untouched
}

TEST_CASE("context_editing: under the trigger nothing changes, the default trigger is 100000 tokens",
          "[middleware][context_editing]") {
    context_editing ce;
    auto ms = history(6, 1000);
    CHECK(sent(ce, ms) == ms);
    CHECK(ce.options().edits.at(0).trigger == 100000);
    CHECK(ce.options().edits.at(0).keep == 3);
    CHECK(ce.options().edits.at(0).placeholder == "[cleared]");
}

TEST_CASE("context_editing: clear_at_least stops early, exclusions, inputs and placeholder",
          "[middleware][context_editing]") {
    clear_tool_uses_edit e;
    e.trigger = 10;
    e.clear_at_least = 300;
    e.keep = 0;
    context_editing ce(with(e));
    auto out = sent(ce, history(4, 1000));
    CHECK(out[2].text() == "[cleared]");
    CHECK(out[4].text() == "[cleared]");            // the first freed about 250 tokens: not enough
    CHECK(out[6].text() == std::string(1000, 'c')); // the second did
    e.clear_at_least = 0;
    e.exclude_tools = {"keepme"};
    e.clear_tool_inputs = true;
    e.placeholder = "(gone)";
    context_editing ce2(with(e));
    auto ms = history(2, 1000);
    auto more = history(1, 1000, "keepme");
    ms.insert(ms.end(), more.begin() + 1, more.end());
    ms.back().set_tool_call_id("k0");
    ms[ms.size() - 2].tool_calls[0].id = "k0";
    auto out2 = sent(ce2, ms);
    CHECK(out2[2].text() == "(gone)");
    CHECK(out2[1].tool_calls[0].args.empty());
    CHECK(out2[1].metadata.at("context_editing").at("cleared_tool_inputs").at(0) == "c0");
    CHECK(out2[6].text() == std::string(1000, 'a')); // excluded
    // already cleared results are not counted again
    CHECK(sent(ce2, out2) == out2);
}

TEST_CASE("context_editing options: JSON round trip and bad input",
          "[middleware][context_editing][options]") {
    auto o = boost::json::value_to<context_editing_options>(boost::json::parse(
        R"({"edits": [{"type": "clear_tool_uses", "trigger": 5000, "keep": 1, "exclude_tools": ["a"]}],
            "token_count_method": "model"})"));
    CHECK(o.edits.at(0).trigger == 5000);
    CHECK(o.token_count_method == "model");
    CHECK(boost::json::value_to<context_editing_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(boost::json::value_to<context_editing_options>(
                          boost::json::parse(R"({"edits": [{"type": "summarize"}]})")),
                      Catch::Contains("edits[0].type"));
    CHECK_THROWS_WITH(boost::json::value_to<context_editing_options>(
                          boost::json::parse(R"({"token_count_method": "exact"})")),
                      Catch::Contains("context_editing.token_count_method"));
    CHECK_THROWS_WITH(
        boost::json::value_to<context_editing_options>(boost::json::parse(R"({"edits": [{"keep": -1}]})")),
        Catch::Contains("keep"));
}
