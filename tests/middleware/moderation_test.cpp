// moderation: input, output and tool results checked; end, error and
// replace; the violation text and its placeholders; the OpenAI wire format.
#include <agentware/middleware/moderation.hpp>
#include <agentware/state/basic_state.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

using namespace agentware;

namespace {
using plain_state = basic_state<type_list<>>;

// Flags any text that contains "bad".
moderation_options checking(std::string exit = "end") {
    moderation_options o;
    o.exit_behavior = std::move(exit);
    o.check = [](const std::string& text, const std::string&) {
        moderation_result r;
        r.flagged = text.find("bad") != std::string::npos;
        r.categories = {{"hate", false}, {"self_harm", r.flagged}, {"violence", r.flagged}};
        r.category_scores = {{"self_harm", 0.5}};
        return r;
    };
    return o;
}
} // namespace

TEST_CASE("moderation ends the run on flagged input with LangChain's text", "[middleware][moderation]") {
    moderation m(checking());
    plain_state s;
    runtime rt;
    s.messages.push_back(human_message("something bad"));
    auto j = m.before_model(s, rt);
    CHECK(j == jump_to::end);
    REQUIRE(s.messages.size() == 2);
    CHECK(s.messages[1].is_ai());
    CHECK(s.messages[1].text() ==
          "I'm sorry, but I can't comply with that request. It was flagged for self harm, violence.");
    s.messages.push_back(human_message("fine"));
    CHECK_FALSE(m.before_model(s, rt));
}

TEST_CASE("moderation: error throws, replace rewrites the flagged message", "[middleware][moderation]") {
    plain_state s;
    runtime rt;
    s.messages.push_back(human_message("hi"));
    s.messages.push_back(ai_message("a bad answer"));
    try {
        moderation(checking("error")).after_model(s, rt);
        FAIL("no throw");
    } catch (const moderation_flagged& e) {
        CHECK(e.stage == "output");
        CHECK(e.content == "a bad answer");
    }
    auto o = checking("replace");
    o.violation_message = "Removed ({categories}; {category_scores}): {original_content}";
    CHECK_FALSE(moderation(o).after_model(s, rt));
    CHECK(s.messages[1].text() == "Removed (self harm, violence; {\"self_harm\":5E-1}): a bad answer");
    CHECK(s.messages[1].metadata.at("moderation").at("stage") == "output");
}

TEST_CASE("moderation checks tool results only when asked, output can be switched off",
          "[middleware][moderation]") {
    plain_state s;
    runtime rt;
    s.messages.push_back(human_message("go"));
    s.messages.push_back(ai_message("", {tool_call{"c", "t", {}}}));
    s.messages.push_back(tool_message("c", "t", "bad result"));
    auto o = checking("replace");
    CHECK_FALSE(moderation(o).before_model(s, rt));
    CHECK(s.messages[2].text() == "bad result"); // default: tool results not checked
    o.check_tool_results = true;
    moderation(o).before_model(s, rt);
    CHECK(s.messages[2].text().starts_with("I'm sorry"));
    o.check_output = false;
    s.messages.push_back(ai_message("bad"));
    CHECK_FALSE(moderation(o).after_model(s, rt));
    CHECK(s.messages.back().text() == "bad");
}

TEST_CASE("moderation: an unknown placeholder leaves the template as it is, no check is an error",
          "[middleware][moderation]") {
    auto o = checking();
    o.violation_message = "Flagged: {reason}";
    CHECK(moderation(o).violation_text("bad", moderation_result{true, {}, {}}) == "Flagged: {reason}");
    CHECK(moderation(checking()).violation_text("bad", moderation_result{true, {}, {}}) ==
          "I'm sorry, but I can't comply with that request. It was flagged for OpenAI's safety policies.");
    // Without a check (built from configuration): the first check says what is missing; set_check mends it.
    moderation m{moderation_options{}};
    plain_state s;
    s.messages.push_back(human_message("bad"));
    runtime rt;
    CHECK_THROWS_WITH(m.before_model(s, rt), Catch::Contains("moderation: no check function"));
    CHECK(s.messages.size() == 1);
    m.set_check(checking().check);
    CHECK(m.before_model(s, rt) == jump_to::end);
    CHECK(s.messages.back().text().starts_with("I'm sorry"));
}

TEST_CASE("moderation: the OpenAI wire format", "[middleware][moderation]") {
    CHECK(openai_moderation_body("text", "omni-moderation-latest") ==
          boost::json::parse(R"({"model":"omni-moderation-latest","input":"text"})"));
    auto r = parse_openai_moderation(R"({"id":"m","results":[{"flagged":true,
        "categories":{"harassment":true,"hate/threatening":false},"category_scores":{"harassment":0.9}}]})");
    CHECK(r.flagged);
    CHECK(r.categories.at("harassment"));
    CHECK(r.category_scores.at("harassment") == Approx(0.9));
    CHECK_THROWS_AS(parse_openai_moderation("{}"), model_error);
    CHECK_THROWS_AS(parse_openai_moderation("not json"), model_error);
}

TEST_CASE("moderation options: JSON round trip and bad input", "[middleware][moderation][options]") {
    auto o = boost::json::value_to<moderation_options>(
        boost::json::parse(R"({"check_tool_results": true, "exit_behavior": "replace"})"));
    CHECK(o.check_tool_results);
    CHECK(boost::json::value_to<moderation_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(
        boost::json::value_to<moderation_options>(boost::json::parse(R"({"exit_behavior": "warn"})")),
        Catch::Contains("moderation") && Catch::Contains("exit_behavior"));
    CHECK_THROWS_WITH(boost::json::value_to<moderation_options>(boost::json::parse(R"({"check_input": 1})")),
                      Catch::Contains("moderation.check_input"));
}
