// dangling_tool_call, guardrail and tool_error_handling: the request repair,
// the policy gate and the error-to-message conversion, alone and in an agent.
#include "../agent/support.hpp"

#include <agentware/agent/async_loop.hpp>

#include <agentware/middleware/dangling_tool_call.hpp>
#include <agentware/middleware/guardrail.hpp>
#include <agentware/middleware/tool_error_handling.hpp>

#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <stdexcept>

using namespace agentware;

namespace {

message ai_with(std::vector<tool_call> calls, std::string id = {}) {
    message m = ai_message("", std::move(calls));
    m.id = std::move(id);
    return m;
}

message result(std::string call_id, std::string name, std::string text = "ok") {
    return tool_message(std::move(call_id), std::move(name), std::move(text));
}

message invalid_call_message(std::string id, std::string name, std::string raw, std::string error) {
    message m = ai_message("");
    m.invalid_tool_calls.push_back(
        invalid_tool_call{std::move(id), std::move(name), std::move(raw), std::move(error)});
    return m;
}

std::vector<message> patched(const std::vector<message>& in) {
    auto p = dangling_tool_call::patch(in);
    REQUIRE(p.has_value());
    return *p;
}

std::string shape(const std::vector<message>& ms) {
    std::string out;
    for (const auto& m : ms) {
        if (!out.empty()) out += ' ';
        switch (m.type) {
        case role::ai:
            out += "ai";
            break;
        case role::human:
            out += "human";
            break;
        case role::system:
            out += "system";
            break;
        case role::tool:
            out += "tool(" + m.tool_call_id + ")";
            break;
        case role::remove:
            out += "remove";
            break;
        }
    }
    return out;
}

} // namespace

// ---------------------------------------------------------------- dangling_tool_call

TEST_CASE("dangling_tool_call leaves a well-formed history alone, without copying it",
          "[middleware][dangling]") {
    std::vector<message> h{human_message("hi"), ai_with({test::call("a", "echo"), test::call("b", "echo")}),
                           result("b", "echo"), result("a", "echo"), ai_message("done")};
    CHECK_FALSE(dangling_tool_call::patch(h).has_value());
    CHECK_FALSE(dangling_tool_call::patch({}).has_value());
}

TEST_CASE("a call without a result gets the interrupted placeholder right after its ai message",
          "[middleware][dangling]") {
    std::vector<message> h{human_message("hi"), ai_with({test::call("a", "echo")}), human_message("go on")};
    auto p = patched(h);
    REQUIRE(shape(p) == "human ai tool(a) human");
    CHECK(p[2].text() == "[Tool call was interrupted and did not return a result.]");
    CHECK(p[2].is_error());
    CHECK(p[2].name == "echo");
}

TEST_CASE("a tool message that answers no call is dropped", "[middleware][dangling]") {
    std::vector<message> h{human_message("hi"), result("ghost", "echo"), ai_message("x")};
    CHECK(shape(patched(h)) == "human ai");
    // after an ai message that has no calls, too
    std::vector<message> h2{ai_message("x"), result("ghost", "echo")};
    CHECK(shape(patched(h2)) == "ai");
}

TEST_CASE("a result that is not next to its call is moved there", "[middleware][dangling]") {
    std::vector<message> h{ai_with({test::call("a", "echo")}), human_message("meanwhile"),
                           result("a", "echo", "late")};
    auto p = patched(h);
    REQUIRE(shape(p) == "ai tool(a) human");
    CHECK(p[1].text() == "late");
}

TEST_CASE("extra results for one call are not re-emitted", "[middleware][dangling]") {
    std::vector<message> h{ai_with({test::call("a", "echo")}), result("a", "echo", "first"),
                           result("a", "echo", "second")};
    auto p = patched(h);
    REQUIRE(shape(p) == "ai tool(a)");
    CHECK(p[1].text() == "first");
}

TEST_CASE("a reused call id: each ai message takes the oldest result for it", "[middleware][dangling]") {
    std::vector<message> h{ai_with({test::call("x", "echo")}), human_message("again"),
                           ai_with({test::call("x", "echo")}), result("x", "echo", "only")};
    auto p = patched(h);
    REQUIRE(shape(p) == "ai tool(x) human ai tool(x)");
    CHECK(p[1].text() == "only");
    CHECK(p[4].text() == "[Tool call was interrupted and did not return a result.]");
}

TEST_CASE("blank call ids get synthetic ids and an unambiguous blank result is attributed",
          "[middleware][dangling]") {
    std::vector<message> h{human_message("hi"), ai_with({test::call("", "echo")}),
                           result("", "echo", "answer")};
    auto p = patched(h);
    REQUIRE(p.size() == 3);
    CHECK(p[1].tool_calls[0].id == "deerflow_synthetic_tool_call_1_call_0");
    CHECK(p[2].tool_call_id == "deerflow_synthetic_tool_call_1_call_0");
    CHECK(p[2].text() == "answer");
    CHECK(h[1].tool_calls[0].id.empty()); // the input is untouched
}

TEST_CASE("blank results are attributed by position only when the counts match", "[middleware][dangling]") {
    SECTION("two blank calls, two blank results: positional") {
        std::vector<message> h{ai_with({test::call("", "echo"), test::call("", "echo")}),
                               result("", "echo", "r1"), result("", "echo", "r2")};
        auto p = patched(h);
        REQUIRE(shape(p) ==
                "ai tool(deerflow_synthetic_tool_call_0_call_0) tool(deerflow_synthetic_tool_call_0_call_1)");
        CHECK(p[1].text() == "r1");
        CHECK(p[2].text() == "r2");
    }
    SECTION("two blank calls, one blank result: ambiguous, so dropped, and both calls get placeholders") {
        std::vector<message> h{ai_with({test::call("", "echo"), test::call("", "echo")}),
                               result("", "echo", "r1")};
        auto p = patched(h);
        REQUIRE(p.size() == 3);
        CHECK(p[1].text() == "[Tool call was interrupted and did not return a result.]");
        CHECK(p[2].text() == "[Tool call was interrupted and did not return a result.]");
    }
    SECTION("a result whose name contradicts is not attributed") {
        std::vector<message> h{ai_with({test::call("", "echo"), test::call("", "other")}),
                               result("", "other", "r")};
        auto p = patched(h);
        REQUIRE(p.size() == 3);
        CHECK(p[1].text() == "[Tool call was interrupted and did not return a result.]");
        CHECK(p[2].text() == "r");
        CHECK(p[2].tool_call_id == "deerflow_synthetic_tool_call_0_call_1");
    }
    SECTION("results never answer an earlier turn") {
        std::vector<message> h{ai_with({test::call("", "echo")}), ai_message("next"),
                               result("", "echo", "r")};
        auto p = patched(h);
        REQUIRE(shape(p) == "ai tool(deerflow_synthetic_tool_call_0_call_0) ai");
        CHECK(p[1].text() == "[Tool call was interrupted and did not return a result.]");
    }
}

TEST_CASE("a call with a blank name is renamed and answered with the invalid-name text",
          "[middleware][dangling]") {
    std::vector<message> h{ai_with({test::call("a", "  ")})};
    auto p = patched(h);
    REQUIRE(p.size() == 2);
    CHECK(p[0].tool_calls[0].name == "unknown_tool");
    CHECK(p[1].name == "unknown_tool");
    CHECK(p[1].text() ==
          "[Tool call could not be executed because its name was missing or empty. Use one of the "
          "available tool names when retrying.]");
    // a result that also had no name takes the normalized one
    std::vector<message> h2{ai_with({test::call("a", "")}), result("a", "", "r")};
    auto p2 = patched(h2);
    CHECK(p2[1].name == "unknown_tool");
    CHECK(p2[1].text() == "r");
}

TEST_CASE("calls with malformed arguments get the invalid-arguments texts", "[middleware][dangling]") {
    SECTION("another tool, with the parser's error") {
        auto p = patched({invalid_call_message("a", "search", "{\"q\": ", "unexpected end of input")});
        REQUIRE(p.size() == 2);
        CHECK(
            p[1].text() ==
            "[Tool call could not be executed because its arguments were invalid: unexpected end of input]");
        CHECK(p[0].invalid_tool_calls[0].raw_args == "{}"); // what providers accept
    }
    SECTION("without an error text") {
        auto p = patched({invalid_call_message("a", "search", "[1]", "")});
        CHECK(p[1].text() == "[Tool call could not be executed because its arguments were invalid.]");
    }
    SECTION("write_file, with the large-payload advice") {
        auto p = patched({invalid_call_message("a", "write_file", "{\"content\": \"\"x", "Extra data")});
        CHECK(p[1].text() == "[write_file failed before execution: the tool-call arguments were not valid "
                             "JSON, so no file was "
                             "written. This often happens when the model tries to write a very large "
                             "Markdown file in a single tool "
                             "call, especially when `content` contains unescaped quotes, inline JSON, "
                             "backslashes, or code fences. Do "
                             "not retry the same large `write_file` payload for this artifact; provide the "
                             "report/content directly as "
                             "normal assistant text in your next response. If a file write is still needed "
                             "later, split the file "
                             "into smaller sections instead of one large payload. Parser error: Extra data]");
        auto q = patched({invalid_call_message("a", "write_file", "nope", "")});
        CHECK(std::string_view(q[1].text()).ends_with("instead of one large payload.]"));
    }
    SECTION("a huge parser error is cut to 500 characters") {
        auto p = patched({invalid_call_message("a", "search", "x", std::string(5000, 'e'))});
        const std::string prefix = "[Tool call could not be executed because its arguments were invalid: ";
        CHECK(p[1].text() == prefix + std::string(497, 'e') + "...]");
    }
    SECTION("arguments that are a JSON object are kept") {
        auto p = patched({invalid_call_message("a", "search", R"({"q":1})", "schema")});
        CHECK(p[0].invalid_tool_calls[0].raw_args == R"({"q":1})");
    }
}

TEST_CASE("an agent's request is repaired, its stored history is not", "[middleware][dangling][agent]") {
    scripted_model model({ai_message("fine")});
    auto a = make_agent(model, tool_set(test::echo_tool()), dangling_tool_call{});
    std::vector<message> input{human_message("hi"), ai_with({test::call("lost", "echo", R"({"text":"x"})")}),
                               human_message("and now?")};
    auto r = a.invoke(input);
    REQUIRE(r.ok());
    auto req = model.requests().at(0).messages;
    REQUIRE(shape(req) == "human ai tool(lost) human");
    CHECK(req[2].text() == "[Tool call was interrupted and did not return a result.]");
    CHECK(shape(r.state.messages) == "human ai human ai");
}

// ---------------------------------------------------------------- guardrail

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

TEST_CASE("a denial without reasons uses the default code and message; a missing id is named",
          "[middleware][guardrail]") {
    runtime rt{"t", "r", {}, 0};
    recording_provider p;
    p.decision = guardrail_decision{false, {}, {}, {}};
    guardrail g{p};
    auto r = run_one(g, test::call("", "bash"), rt);
    CHECK(r.msg.tool_call_id == "missing_id");
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

// ---------------------------------------------------------------- tool_error_handling

namespace {

struct plain_thrown {};

auto thrower(std::string name, std::function<void()> f) {
    return make_tool(std::move(name), "Fails.", R"({"type":"object"})", [f](const boost::json::object&) {
        f();
        return std::string("unreachable");
    });
}

} // namespace

TEST_CASE("a tool that throws becomes an error tool message and the run goes on",
          "[middleware][tool_errors][agent]") {
    scripted_model model({test::calls({test::call("c1", "explode")}), ai_message("recovered")});
    auto a = make_agent(model, tool_set(thrower("explode", [] { throw std::runtime_error("  boom  "); })),
                        tool_error_handling{});
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::finished);
    CHECK(r.answer() == "recovered");
    const message& m = r.state.messages.at(2);
    CHECK(m.is_error());
    CHECK(m.tool_call_id == "c1");
    CHECK(m.name == "explode");
    CHECK(m.text() ==
          "Error: Tool 'explode' failed with std::runtime_error: boom. Continue with available context, "
          "or choose an alternative tool.");
    CHECK(m.metadata.at("tool_meta").at("source") == "exception");
    CHECK(m.metadata.at("tool_meta").at("status") == "error");
}

TEST_CASE("a huge exception text is cut to 497 characters and an ellipsis", "[middleware][tool_errors]") {
    tool_error_handling h;
    std::string huge(1 << 20, 'x');
    auto r = h.failure(test::call("c", "t"), std::make_exception_ptr(std::runtime_error(huge)));
    CHECK(r.msg.text() == "Error: Tool 't' failed with std::runtime_error: " + std::string(497, 'x') +
                              ".... Continue with available context, or choose an alternative tool.");
    // code points, not bytes: a cut never splits a character
    std::string wide;
    for (int i = 0; i < 600; ++i)
        wide += "é";
    auto w = h.failure(test::call("c", "t"), std::make_exception_ptr(std::runtime_error(wide)));
    std::string cut;
    for (int i = 0; i < 497; ++i)
        cut += "é";
    CHECK(w.msg.text().find(cut + "...") != std::string::npos);
}

TEST_CASE("exception details: empty text, non-standard exceptions, missing name and id",
          "[middleware][tool_errors]") {
    tool_error_handling h;
    CHECK(h.failure(test::call("c", "t"), std::make_exception_ptr(std::logic_error(""))).msg.text() ==
          "Error: Tool 't' failed with std::logic_error: std::logic_error. Continue with available context, "
          "or choose "
          "an alternative tool.");
    CHECK(h.failure(test::call("c", "t"), std::make_exception_ptr(42)).msg.text() ==
          "Error: Tool 't' failed with int: int. Continue with available context, or choose an alternative "
          "tool.");
    CHECK(h.failure(test::call("c", "t"), std::make_exception_ptr(plain_thrown{}))
              .msg.text()
              .find("failed with (anonymous namespace)::plain_thrown") != std::string::npos);
    auto m = h.failure(test::call("", ""), std::make_exception_ptr(std::runtime_error("x"))).msg;
    CHECK(m.name == "unknown_tool");
    CHECK(m.tool_call_id == "missing_tool_call_id");
    CHECK(m.text() ==
          "Error: Tool 'unknown_tool' failed with std::runtime_error: x. Continue with available context, "
          "or choose an alternative tool.");
}

TEST_CASE("a failed task call reads like a failed subagent", "[middleware][tool_errors]") {
    tool_error_handling h;
    auto m =
        h.failure(test::call("t1", "task"), std::make_exception_ptr(std::runtime_error("network down"))).msg;
    CHECK(m.text() ==
          "Task failed. Error: std::runtime_error: network down. Continue with available context, or "
          "choose an alternative tool.");
    CHECK(m.metadata.at("subagent_status") == "failed");
    CHECK(m.metadata.at("subagent_error") == "std::runtime_error: network down");
    CHECK(m.metadata.at("tool_meta").at("error_type") == "unknown"); // "network down" matches no row
    auto q = h.failure(test::call("t1", "task"), std::make_exception_ptr(std::runtime_error("why?"))).msg;
    CHECK(q.text() ==
          "Task failed. Error: std::runtime_error: why? Continue with available context, or choose an "
          "alternative tool.");
}

TEST_CASE("errors are classified by DeerFlow's keyword table", "[middleware][tool_errors]") {
    auto type = [](std::string_view t) { return classify_tool_error(t).error_type; };
    CHECK(type("HTTP 401 returned") == "auth");
    CHECK(type("Invalid API key") == "auth");
    CHECK(type("Rate limit exceeded") == "rate_limited");
    CHECK(type("request timed out") == "transient");
    CHECK(type("Connection reset") == "transient");
    CHECK(type("tool is not configured") == "config");
    CHECK(type("Permission denied: /etc") == "permission");
    CHECK(type("No results found for query") == "no_results");
    CHECK(type("No such file: a.txt") == "not_found");
    CHECK(type("server said 404") == "not_found");
    CHECK(type("internal error") == "internal");
    CHECK(type("status 500") == "internal");
    CHECK(type("id 14010 and 5000") == "unknown"); // numeric codes must stand alone
    CHECK(type("something odd") == "unknown");
    auto auth = classify_tool_error("403 forbidden");
    CHECK(auth.error_type == "auth"); // first matching row wins
    CHECK_FALSE(auth.recoverable_by_model);
    CHECK(auth.recommended_next_action == "stop");
    auto nf = classify_tool_error("does not exist");
    CHECK(nf.recoverable_by_model);
    CHECK(nf.recommended_next_action == "rewrite_query");
}

TEST_CASE("tool results are classified in DeerFlow's order", "[middleware][tool_errors]") {
    auto meta = [](message m) { return classify_tool_result(m); };
    auto err = tool_message("c", "t", R"({"error":"rate limited"})", tool_status::error);
    CHECK(meta(err).error_type == "rate_limited");
    CHECK(meta(err).source == "tool_return");
    CHECK(meta(tool_message("c", "t", R"({"error":"none"})", tool_status::error)).error_type == "unknown");
    CHECK(meta(tool_message("c", "t", "disk not found", tool_status::error)).error_type == "not_found");
    CHECK(meta(tool_message("c", "t", "Error: permission denied")).error_type == "permission");
    CHECK(meta(tool_message("c", "t", "Error: permission denied")).status == "error");
    CHECK(meta(tool_message("c", "t", R"({"error":"timeout"})")).error_type == "transient");
    CHECK(meta(tool_message("c", "t", R"({"error":false,"data":1})")).status == "success");
    auto page = meta(tool_message("c", "web_fetch", "\n\n404 Not Found\n<html>"));
    CHECK(page.status == "error");
    CHECK(page.error_type == "not_found");
    CHECK(page.source == "content_analysis");
    CHECK(meta(tool_message("c", "web_fetch", "Bad Gateway")).status == "error");
    CHECK(meta(tool_message("c", "other", "404 Not Found")).status == "success");
    auto partial = meta(tool_message("c", "t", "Output truncated at 100 lines"));
    CHECK(partial.status == "partial_success");
    CHECK(partial.recommended_next_action == "rewrite_query");
    auto ok = meta(tool_message("c", "t", "all good"));
    CHECK(ok.status == "success");
    CHECK(ok.recommended_next_action == "continue");
}

TEST_CASE("successful results are stamped; state-changing and already stamped ones are not",
          "[middleware][tool_errors]") {
    tool_error_handling h;
    auto r = h.stamp(tool_response{tool_message("c", "t", "fine"), {}, false});
    CHECK(r.msg.metadata.at("tool_meta").at("status") == "success");
    auto ended = h.stamp(tool_response{tool_message("c", "t", "fine"), {}, true});
    CHECK_FALSE(ended.msg.metadata.contains("tool_meta"));
    tool_response pre{tool_message("c", "t", "Error: x"), {}, false};
    pre.msg.metadata["tool_meta"] = "mine";
    CHECK(h.stamp(pre).msg.metadata.at("tool_meta") == "mine");
}

TEST_CASE("tool_error_handling works in the coroutine loop too", "[middleware][tool_errors][async]") {
    scripted_model model(
        {test::calls({test::call("c1", "explode"), test::call("c2", "echo", R"({"text":"hi"})")}),
         ai_message("recovered")});
    auto a = make_agent(
        model, tool_set(thrower("explode", [] { throw std::out_of_range("index 9"); }), test::echo_tool()),
        dangling_tool_call{}, guardrail(allowlist_provider{std::nullopt, {"nothing"}}),
        tool_error_handling{});
    boost::asio::io_context io;
    std::optional<invoke_result<decltype(a)::state_type>> out;
    boost::asio::co_spawn(io, a.async_invoke("go"), [&](std::exception_ptr e, auto r) {
        REQUIRE_FALSE(e);
        out = std::move(r);
    });
    io.run();
    REQUIRE(out);
    REQUIRE(out->reason == stop_reason::finished);
    CHECK(out->state.messages.at(2).text() ==
          "Error: Tool 'explode' failed with std::out_of_range: index 9. Continue "
          "with available context, or choose an alternative tool.");
    CHECK(out->state.messages.at(3).text() == "hi");
    CHECK(out->state.messages.at(3).metadata.at("tool_meta").at("status") == "success");
}
