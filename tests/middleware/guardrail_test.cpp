// guardrail: the policy gate on tool calls, alone and in an agent.
#include "../agent/support.hpp"

#include <agentware/middleware/guardrail.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>

using namespace agentware;

namespace {

struct counting_tool_state {
    std::atomic<int> runs{0};
};

auto counted_tool(std::shared_ptr<counting_tool_state> s, std::string name = "bash") {
    return make_tool(std::move(name), "Runs.", R"({"type":"object"})", [s](const boost::json::object&) {
        ++s->runs;
        return std::string("ran");
    });
}

struct throwing_provider {
    guardrail_decision evaluate(const guardrail_request&) { throw std::runtime_error("policy service down"); }
};

struct recording_provider {
    std::shared_ptr<std::vector<guardrail_request>> seen = std::make_shared<std::vector<guardrail_request>>();
    guardrail_decision decision = guardrail_decision::allowed();
    guardrail_decision evaluate(const guardrail_request& r) {
        seen->push_back(r);
        return decision;
    }
};

tool_response run_one(auto& mw, tool_call call, const runtime& rt, bool* ran = nullptr) {
    tool_request<basic_state<type_list<>>> req{std::move(call), nullptr, nullptr, &rt};
    return mw.wrap_tool_call(req, [&](auto& r) {
        if (ran) *ran = true;
        return tool_response{tool_message(r.call->id, r.call->name, "ran"), {}, false};
    });
}

} // namespace

TEST_CASE("guardrail with an allowlist blocks other tools with DeerFlow's text", "[middleware][guardrail]") {
    auto s = std::make_shared<counting_tool_state>();
    scripted_model model({test::calls({test::call("c1", "bash", R"({"command":"ls"})")}), ai_message("ok")});
    auto a = make_agent(model, tool_set(counted_tool(s)),
                        guardrail(allowlist_provider{std::vector<std::string>{"read_file"}, {}}));
    auto r = a.invoke("go");
    REQUIRE(r.ok());
    CHECK(s->runs == 0);
    const message& denied = r.state.messages.at(2);
    CHECK(denied.is_error());
    CHECK(denied.name == "bash");
    CHECK(denied.text() ==
          "Guardrail denied: tool 'bash' was blocked (oap.tool_not_allowed). Reason: tool 'bash' not "
          "in allowlist. Choose an alternative approach.");
}

TEST_CASE("guardrail's built-in provider: denylist, empty allowlist, no lists", "[middleware][guardrail]") {
    runtime rt{"t", "r", {}, 0};
    bool ran = false;
    guardrail deny(allowlist_provider{std::nullopt, {"bash"}});
    CHECK(run_one(deny, test::call("c", "bash"), rt, &ran).msg.text() ==
          "Guardrail denied: tool 'bash' was blocked (oap.tool_not_allowed). Reason: tool 'bash' is denied. "
          "Choose an "
          "alternative approach.");
    CHECK_FALSE(ran);
    CHECK(run_one(deny, test::call("c", "ls"), rt, &ran).msg.text() == "ran");
    CHECK(ran);

    guardrail nothing(allowlist_provider{std::vector<std::string>{}, {}});
    ran = false;
    CHECK(run_one(nothing, test::call("c", "ls"), rt, &ran).msg.is_error());
    CHECK_FALSE(ran);

    guardrail<> open;
    CHECK(open.provider.evaluate(guardrail_request{}).allow);
    CHECK(open.provider.evaluate(guardrail_request{}).reasons.at(0).code == "oap.allowed");
}

TEST_CASE("guardrail fails closed when the provider throws, or open when configured",
          "[middleware][guardrail]") {
    runtime rt{"t", "r", {}, 0};
    bool ran = false;
    guardrail closed{throwing_provider{}};
    auto r = run_one(closed, test::call("c", "bash"), rt, &ran);
    CHECK_FALSE(ran);
    CHECK(r.msg.text() ==
          "Guardrail denied: tool 'bash' was blocked (oap.evaluator_error). Reason: guardrail provider "
          "error (fail-closed). Choose an alternative approach.");
    guardrail opened{throwing_provider{}, guardrail_options{false, {}}};
    CHECK(run_one(opened, test::call("c", "bash"), rt, &ran).msg.text() == "ran");
    CHECK(ran);
}

TEST_CASE("a denial without reasons uses the default code and message, a missing id is named",
          "[middleware][guardrail]") {
    runtime rt{"t", "r", {}, 0};
    recording_provider p;
    p.decision = guardrail_decision{false, {}, {}, {}};
    guardrail g{p};
    auto r = run_one(g, test::call("", "bash"), rt);
    CHECK(r.msg.tool_call_id() == "missing_id");
    CHECK(r.msg.text() ==
          "Guardrail denied: tool 'bash' was blocked (oap.denied). Reason: blocked by guardrail "
          "policy. Choose an alternative approach.");
}

TEST_CASE("guardrail asks the provider with the call and the run's identity", "[middleware][guardrail]") {
    runtime rt{"thread-1", "run-1", {}, 0};
    rt.context =
        boost::json::parse(R"({"user_id":"u1","user_role":"admin","is_subagent":1,"is_internal":"yes",
        "oauth_provider":"gh","oauth_id":"42","channel_user_id":"ch","authz_attributes":{"team":"a"}})")
            .as_object();
    recording_provider p;
    guardrail g{p, guardrail_options{true, "agent-7"}};
    run_one(g, test::call("c9", "web_search", R"({"query":"x"})"), rt);
    REQUIRE(p.seen->size() == 1);
    const guardrail_request& q = p.seen->front();
    CHECK(q.tool_name == "web_search");
    CHECK(q.tool_input.at("query") == "x");
    CHECK(q.agent_id == "agent-7");
    CHECK(q.thread_id == "thread-1");
    CHECK(q.run_id == "run-1");
    CHECK(q.tool_call_id == "c9");
    CHECK(q.user_id == "u1");
    CHECK(q.user_role == "admin");
    CHECK(q.oauth_provider == "gh");
    CHECK(q.oauth_id == "42");
    CHECK(q.channel_user_id == "ch");
    CHECK(q.is_subagent);
    CHECK_FALSE(q.is_internal); // only a literal true counts
    CHECK(q.authz_attributes.at("team") == "a");
    CHECK(q.timestamp.size() == 20);
    CHECK(q.timestamp.back() == 'Z');

    rt.context["authz_attributes"] = "not a mapping"; // a malformed identity is a provider failure: denied
    auto r = run_one(g, test::call("c9", "web_search"), rt);
    CHECK(r.msg.text().find("(oap.evaluator_error)") != std::string::npos);
}

TEST_CASE("guardrail judges unknown tools by name too", "[middleware][guardrail][agent]") {
    scripted_model model({test::calls({test::call("c1", "nope")}), ai_message("ok")});
    auto a = make_agent(model, tool_set{}, guardrail(allowlist_provider{std::nullopt, {"nope"}}));
    auto r = a.invoke("go");
    REQUIRE(r.ok());
    CHECK(r.state.messages.at(2).text().rfind("Guardrail denied: tool 'nope'", 0) == 0);
}

TEST_CASE("guardrail decisions round-trip through JSON", "[middleware][guardrail][json]") {
    guardrail_decision d{false, {{"oap.x", "because"}}, "p1", boost::json::object{{"k", 1}}};
    auto back = boost::json::value_to<guardrail_decision>(boost::json::value_from(d));
    CHECK_FALSE(back.allow);
    CHECK(back.reasons == d.reasons);
    CHECK(back.policy_id == "p1");
    CHECK(back.metadata == d.metadata);
}
