// dangling_tool_call: the request repair, alone and in an agent.
#include "../agent/support.hpp"

#include <agentware/middleware/dangling_tool_call.hpp>

#include <catch2/catch.hpp>

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
    m.edit_invalid_tool_calls().push_back(
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
            out += "tool(" + std::string(m.tool_call_id()) + ")";
            break;
        case role::remove:
            out += "remove";
            break;
        }
    }
    return out;
}

} // namespace

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
    CHECK(p[2].tool_call_id() == "deerflow_synthetic_tool_call_1_call_0");
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
        CHECK(p[2].tool_call_id() == "deerflow_synthetic_tool_call_0_call_1");
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
        CHECK(p[0].invalid_tool_calls()[0].raw_args == "{}"); // what providers accept
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
        CHECK(p[0].invalid_tool_calls()[0].raw_args == R"({"q":1})");
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
