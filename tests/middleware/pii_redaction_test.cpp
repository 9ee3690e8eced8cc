// pii_redaction (DeerFlow's PiiRedactionMiddleware): each detector's matches
// become numbered placeholders in the user messages the model is sent and in
// remote tools' results; other messages and local tools' results pass; the
// section is off unless `enabled` is true.
#include "deerflow_support.hpp"

#include <agentware/middleware/pii_redaction.hpp>
#include <agentware/presets/deerflow.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>

#include <memory>
#include <string>

using namespace agentware;

namespace {

std::string redacted(std::string_view text, pii_redaction_options o = {}) {
    return pii_redactor(o).redact_text(text);
}

auto page_tool(std::string name, std::string page) {
    return make_tool(std::move(name), "Returns a page.", R"({"type":"object","properties":{}})",
                     [page](const boost::json::object&) { return page; });
}

// A tool as an MCP server's would be: is_mcp() is what marks it.
class fake_mcp_tool final : public tool_interface {
public:
    fake_mcp_tool(std::string name, std::string answer)
        : schema_{std::move(name), "An MCP tool.", boost::json::object{{"type", "object"}}},
          answer_(std::move(answer)) {}
    const tool_schema& schema() const override { return schema_; }
    tool_output call(const boost::json::object&, const tool_runtime&) override { return answer_; }
    bool is_mcp() const noexcept override { return true; }

private:
    tool_schema schema_;
    std::string answer_;
};

std::string config_error(std::string_view text) {
    try {
        (void)make_deerflow_pipeline(boost::json::parse(text));
    } catch (const json_error& e) {
        return e.what();
    }
    return {};
}

} // namespace

TEST_CASE("each detector's matches become its placeholders", "[middleware][pii_redaction]") {
    CHECK(redacted("Mail alice@example.com or bob@corp.example.org, again alice@example.com.") ==
          "Mail [EMAIL_1] or [EMAIL_2], again [EMAIL_1].");
    CHECK(redacted("key sk-abcdefghijklmnopqrstuvwx and AKIAIOSFODNN7EXAMPLE and "
                   "ghp_abcdefghijklmnopqrstuvwxyz0123456789") ==
          "key [API_KEY_1] and [API_KEY_2] and [API_KEY_3]");
    CHECK(
        redacted("id 11010519491231002X cpf 529.982.247-25 bad 529.982.247-26 cuit 20-1234567890-1 "
                 "rfc GODE561231GR8") ==
        "id [NATIONAL_ID_1] cpf [NATIONAL_ID_2] bad 529.982.247-26 cuit [NATIONAL_ID_3] rfc [NATIONAL_ID_4]");
    CHECK(redacted("card 4111 1111 1111 1111 bad 4111 1111 1111 1112 raw 4111111111111111") ==
          "card [CREDIT_CARD_1] bad 4111 1111 1111 1112 raw [CREDIT_CARD_2]");
    CHECK(redacted("call +1 415 555 2671 or 13812345678 or (415) 555-2671; short +1 23") ==
          "call [PHONE_1] or [PHONE_2] or [PHONE_3]; short +1 23");
    // The email pattern's backtracking: the domain ends after the last dot that two letters follow.
    CHECK(redacted("a@b.cc.x@d.ee and bad.dot@x.c") == "[EMAIL_1][EMAIL_2] and bad.dot@x.c");
    CHECK(redacted("nothing to see here") == "nothing to see here");
}

TEST_CASE("a detector turned off leaves its matches", "[middleware][pii_redaction]") {
    pii_redaction_options o;
    o.redact_email = false;
    o.redact_phone = false;
    CHECK(redacted("alice@example.com 13812345678 4111111111111111", o) ==
          "alice@example.com 13812345678 [CREDIT_CARD_1]");
    pii_redaction mw(o);
    CHECK(mw.redact_text("sk-abcdefghijklmnopqrstuvwx alice@example.com") == "[API_KEY_1] alice@example.com");
}

TEST_CASE("user messages are redacted in the request only, other messages pass",
          "[middleware][pii_redaction]") {
    scripted_model model({ai_message("ok")});
    auto a = make_agent(model, tool_set{}, pii_redaction{});
    typename decltype(a)::state_type state;
    state.messages.push_back(human_message("I am alice@example.com"));
    state.messages.push_back(ai_message("Noted, alice@example.com")); // the model's own words
    message hidden = human_message("reminder for carol@example.com");
    hidden.metadata["hide_from_ui"] = true;
    state.messages.push_back(hidden);
    auto r = a.run(state, human_message("write to bob@example.org and alice@example.com"));
    REQUIRE(r.reason == stop_reason::finished);
    const auto req = model.requests().at(0);
    CHECK(req.messages.at(0).text() == "I am [EMAIL_1]");
    CHECK(req.messages.at(1).text() == "Noted, alice@example.com");
    CHECK(req.messages.at(2).text() == "reminder for carol@example.com");
    // One numbering across the request: alice stays [EMAIL_1].
    CHECK(req.messages.at(3).text() == "write to [EMAIL_2] and [EMAIL_1]");
    // The thread keeps what the user wrote.
    CHECK(state.messages.at(0).text() == "I am alice@example.com");
    CHECK(state.messages.at(3).text() == "write to bob@example.org and alice@example.com");
}

TEST_CASE("a later run of the thread keeps the numbering, reading only what is new",
          "[middleware][pii_redaction]") {
    scripted_model model({ai_message("one"), ai_message("two"), ai_message("three")});
    auto a = make_agent(model, tool_set{}, pii_redaction{});
    typename decltype(a)::state_type state;
    REQUIRE(a.run(state, human_message("mail alice@example.com")).reason == stop_reason::finished);
    REQUIRE(a.run(state, human_message("now bob@example.org, not alice@example.com")).reason ==
            stop_reason::finished);
    CHECK(model.requests().at(0).messages.at(0).text() == "mail [EMAIL_1]");
    const auto second = model.requests().at(1);
    CHECK(second.messages.at(0).text() == "mail [EMAIL_1]");
    CHECK(second.messages.at(2).text() == "now [EMAIL_2], not [EMAIL_1]");
    // A history rewritten under it (here: its first turn dropped) is read again from the start.
    state.messages.erase(state.messages.begin(), state.messages.begin() + 2);
    REQUIRE(a.run(state, human_message("and carol@example.net")).reason == stop_reason::finished);
    const auto third = model.requests().at(2);
    CHECK(third.messages.at(0).text() == "now [EMAIL_1], not [EMAIL_2]");
    CHECK(third.messages.at(2).text() == "and [EMAIL_3]");
}

TEST_CASE("remote tools' results are redacted, local tools' are not", "[middleware][pii_redaction]") {
    scripted_model model({test::calls({test::call("c1", "web_fetch"), test::call("c2", "local_note"),
                                       test::call("c3", "crm_lookup")}),
                          ai_message("done")});
    tool_set tools;
    tools.add(share_tool(page_tool("web_fetch", "Contact: ceo@example.com, +1 415 555 2671")));
    tools.add(share_tool(page_tool("local_note", "mine: me@example.com")));
    tools.add(std::make_shared<fake_mcp_tool>("crm_lookup", "owner dana@example.com, dana@example.com"));
    auto a = make_agent(model, std::move(tools), pii_redaction{});
    auto r = a.invoke("go");
    REQUIRE(r.ok());
    // The stored tool messages are the redacted ones; numbering restarts per result.
    CHECK(r.state.messages.at(2).text() == "Contact: [EMAIL_1], [PHONE_1]");
    CHECK(r.state.messages.at(3).text() == "mine: me@example.com");
    CHECK(r.state.messages.at(4).text() == "owner [EMAIL_1], [EMAIL_1]");
    CHECK(model.requests().at(1).messages.at(2).text() == "Contact: [EMAIL_1], [PHONE_1]");
}

TEST_CASE("pii_redaction options in JSON", "[middleware][pii_redaction][options]") {
    const pii_redaction_options defaults;
    CHECK(defaults.redact_email);
    CHECK(defaults.redact_api_key);
    CHECK(defaults.redact_credit_card);
    CHECK(defaults.redact_phone);
    CHECK(defaults.redact_national_id);
    auto o = boost::json::value_to<pii_redaction_options>(
        boost::json::parse(R"({"redact_phone": false, "redact_national_id": false})"));
    CHECK_FALSE(o.redact_phone);
    CHECK_FALSE(o.redact_national_id);
    CHECK(o.redact_email);
    CHECK(boost::json::value_to<pii_redaction_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(
        boost::json::value_to<pii_redaction_options>(boost::json::parse(R"({"redact_emial": false})")),
        Catch::StartsWith("pii_redaction.redact_emial: unknown key"));
    CHECK_THROWS_WITH(
        boost::json::value_to<pii_redaction_options>(boost::json::parse(R"({"redact_phone": "no"})")),
        Catch::StartsWith("pii_redaction.redact_phone: expected true or false"));
}

TEST_CASE("DeerFlow's chain engages it only when pii_redaction.enabled is true",
          "[middleware][pii_redaction][preset]") {
    CHECK_FALSE(make_deerflow_pipeline(boost::json::parse("{}")).enabled<pii_redaction>());
    CHECK_FALSE(make_deerflow_pipeline(boost::json::parse(R"({"pii_redaction": {"redact_phone": false}})"))
                    .enabled<pii_redaction>());
    CHECK_FALSE(make_deerflow_pipeline(boost::json::parse(R"({"pii_redaction": {"enabled": false}})"))
                    .enabled<pii_redaction>());
    CHECK(make_deerflow_pipeline(boost::json::parse(R"({"pii_redaction": true})")).enabled<pii_redaction>());
    auto chain = make_deerflow_pipeline(
        boost::json::parse(R"({"pii_redaction": {"enabled": true, "redact_phone": false}})"));
    REQUIRE(chain.enabled<pii_redaction>());
    CHECK_FALSE(chain.get<pii_redaction>()->options.redact_phone);
    // A bad key is named even when the section stays off.
    CHECK(config_error(R"({"pii_redaction": {"redact_emial": false}})")
              .starts_with("pii_redaction.redact_emial: unknown key"));
    CHECK(config_error(R"({"pii_redaction": {"enabled": "yes"}})") ==
          R"(pii_redaction.enabled: expected true or false, got "yes")");
}
