// pii: the built-in detectors (credit cards Luhn-checked, IPs validated), the
// four strategies, input / output / tool results, custom detectors, PII in
// tool arguments and inside JSON strings, and bad options.
#include <agentware/middleware/pii.hpp>
#include <agentware/state/basic_state.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

using namespace agentware;

namespace {
using plain_state = basic_state<type_list<>>;

pii_rule rule(std::string type, pii_strategy s = pii_strategy::redact) {
    pii_rule r;
    r.type = std::move(type);
    r.strategy = s;
    return r;
}
std::string run(const pii& p, std::string text) {
    p.process(0, text);
    return text;
}
} // namespace

TEST_CASE("pii redacts each built-in type with LangChain's placeholder", "[middleware][pii]") {
    CHECK(run(pii(rule("email")), "mail john.doe@example.com now") == "mail [REDACTED_EMAIL] now");
    CHECK(run(pii(rule("credit_card")), "card 4111-1111-1111-1111.") == "card [REDACTED_CREDIT_CARD].");
    CHECK(run(pii(rule("ip")), "from 192.168.0.1 and 10.0.0.255") == "from [REDACTED_IP] and [REDACTED_IP]");
    CHECK(run(pii(rule("mac_address")), "mac 00:1A:2b:3C:4d:5E") == "mac [REDACTED_MAC_ADDRESS]");
    CHECK(run(pii(rule("url")), "see https://example.com/a?b=c and www.x.org") ==
          "see [REDACTED_URL] and [REDACTED_URL]");
}

TEST_CASE("pii: a card number that fails Luhn and an IP octet above 255 are not PII", "[middleware][pii]") {
    CHECK(run(pii(rule("credit_card")), "order 4111-1111-1111-1112") == "order 4111-1111-1111-1112");
    CHECK(run(pii(rule("credit_card")), "4111111111111111") == "[REDACTED_CREDIT_CARD]");
    CHECK(run(pii(rule("ip")), "version 300.1.1.1 or 1.2.3") == "version 300.1.1.1 or 1.2.3");
    CHECK(run(pii(rule("ip")), "01.2.3.4") == "01.2.3.4");
}

TEST_CASE("pii: mask and hash", "[middleware][pii]") {
    CHECK(run(pii(rule("email", pii_strategy::mask)), "a john@example.com") == "a john@****.com");
    CHECK(run(pii(rule("credit_card", pii_strategy::mask)), "4111 1111 1111 1111") == "**** **** **** 1111");
    CHECK(run(pii(rule("credit_card", pii_strategy::mask)), "4111111111111111") == "************1111");
    CHECK(run(pii(rule("ip", pii_strategy::mask)), "192.168.0.42") == "*.*.*.42");
    CHECK(run(pii(rule("mac_address", pii_strategy::mask)), "00-1A-2B-3C-4D-5E") == "**-**-**-**-**-5E");
    CHECK(run(pii(rule("url", pii_strategy::mask)), "https://x.io") == "[MASKED_URL]");
    // sha256("john@example.com") starts 855f96e9
    CHECK(run(pii(rule("email", pii_strategy::hash)), "john@example.com") == "<email_hash:855f96e9>");
}

TEST_CASE("pii: block throws with the count", "[middleware][pii]") {
    pii p(rule("email", pii_strategy::block));
    plain_state s;
    s.messages.push_back(human_message("write a@b.co and c@d.org"));
    runtime rt;
    try {
        p.before_model(s, rt);
        FAIL("no throw");
    } catch (const pii_detected& e) {
        CHECK(std::string(e.what()) == "PII detected: email found 2 occurrence(s)");
        CHECK(e.matches.size() == 2);
        CHECK(e.matches[0].value == "a@b.co");
    }
    CHECK(s.messages[0].text() == "write a@b.co and c@d.org"); // nothing lost
}

TEST_CASE("pii applies to the last input, the latest tool results and the output as configured",
          "[middleware][pii]") {
    auto r = rule("email");
    r.apply_to_tool_results = true;
    r.apply_to_output = true;
    pii p(r);
    plain_state s;
    runtime rt;
    s.messages.push_back(human_message("old x@y.com"));
    s.messages.push_back(ai_message("", {tool_call{"c0", "lookup", {}}}));
    s.messages.push_back(tool_message("c0", "lookup", "older u@v.com"));
    s.messages.push_back(human_message("mine is me@home.net"));
    s.messages.push_back(ai_message(
        "", {tool_call{"c1", "lookup", boost::json::parse(R"({"q":"me@home.net"})").as_object()}}));
    s.messages.push_back(tool_message("c1", "lookup", R"({"owner": "boss@corp.com", "list": ["a@b.co"]})"));
    p.before_model(s, rt);
    CHECK(s.messages[0].text() == "old x@y.com");   // not the last human message
    CHECK(s.messages[2].text() == "older u@v.com"); // before the last ai message
    CHECK(s.messages[3].text() == "mine is [REDACTED_EMAIL]");
    // inside JSON strings: still valid JSON
    auto v = boost::json::parse(s.messages[5].text());
    CHECK(v.at("owner") == "[REDACTED_EMAIL]");
    CHECK(v.at("list").at(0) == "[REDACTED_EMAIL]");
    // output: the answer's text and its tool calls' arguments
    s.messages.push_back(ai_message(
        "reply to boss@corp.com",
        {tool_call{"c2", "send", boost::json::parse(R"({"to":["boss@corp.com"],"n":1})").as_object()}}));
    p.after_model(s, rt);
    CHECK(s.messages.back().text() == "reply to [REDACTED_EMAIL]");
    CHECK(s.messages.back().tool_calls[0].args.at("to").at(0) == "[REDACTED_EMAIL]");
    CHECK(s.messages.back().tool_calls[0].args.at("n") == 1);
}

TEST_CASE("pii: the defaults touch only the input", "[middleware][pii]") {
    pii p(rule("email"));
    plain_state s;
    runtime rt;
    s.messages.push_back(human_message("a@b.co"));
    s.messages.push_back(ai_message("c@d.co"));
    s.messages.push_back(tool_message("x", "t", "e@f.co"));
    p.before_model(s, rt);
    p.after_model(s, rt);
    CHECK(s.messages[0].text() == "[REDACTED_EMAIL]");
    CHECK(s.messages[1].text() == "c@d.co");
    CHECK(s.messages[2].text() == "e@f.co");
}

TEST_CASE("pii: custom detectors, a regex or a function, and several rules", "[middleware][pii]") {
    auto employee = rule("employee_id");
    employee.pattern = "EMP-[0-9]{5}";
    auto secret = rule("secret", pii_strategy::mask);
    secret.detector = [](std::string_view text) {
        std::vector<pii_match> out;
        for (auto pos = text.find("s3cr3t"); pos != std::string_view::npos;
             pos = text.find("s3cr3t", pos + 1))
            out.push_back(pii_match{"", "s3cr3t", pos, pos + 6});
        return out;
    };
    pii p(pii_options{{employee, secret, rule("email")}});
    plain_state s;
    runtime rt;
    s.messages.push_back(human_message("EMP-12345 says s3cr3t to a@b.co"));
    p.before_model(s, rt);
    CHECK(s.messages[0].text() == "[REDACTED_EMPLOYEE_ID] says ****cr3t to [REDACTED_EMAIL]");
    CHECK(p.detect(1, "s3cr3t")[0].type == "secret");
}

TEST_CASE("pii options: JSON round trip and bad input", "[middleware][pii][options]") {
    auto o = boost::json::value_to<pii_options>(boost::json::parse(
        R"({"rules": [{"pii_type": "email", "strategy": "mask", "apply_to_output": true},
                      {"pii_type": "ticket", "detector": "T-[0-9]+"}]})"));
    REQUIRE(o.rules.size() == 2);
    CHECK(o.rules[0].strategy == pii_strategy::mask);
    CHECK(o.rules[1].pattern == "T-[0-9]+");
    CHECK(boost::json::value_to<pii_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(
        boost::json::value_to<pii_options>(boost::json::parse(R"({"rules": [{"pii_type": "ssn"}]})")),
        Catch::Contains("pii.rules[0]") && Catch::Contains("unknown type 'ssn'"));
    CHECK_THROWS_WITH(boost::json::value_to<pii_options>(
                          boost::json::parse(R"({"rules": [{"pii_type": "x", "detector": "(unclosed"}]})")),
                      Catch::Contains("pii.rules[0]") && Catch::Contains("not a valid regular expression"));
    CHECK_THROWS_WITH(boost::json::value_to<pii_options>(
                          boost::json::parse(R"({"rules": [{"pii_type": "email", "strategy": "shred"}]})")),
                      Catch::Contains("strategy") && Catch::Contains("shred"));
    CHECK_THROWS_WITH(
        boost::json::value_to<pii_options>(boost::json::parse(R"({"rules": [{"type": "email"}]})")),
        Catch::Contains("pii_type"));
}
