// message/format.hpp: messages printed as one readable line.
#include <agentware/message/format.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <fmt/format.h>

using namespace agentware;
using message_test::obj;

TEST_CASE("messages print as one readable line", "[message][fmt]") {
    message ai = ai_message("Let me check", {tool_call{"call_1", "search", obj(R"({"q":"x"})")}});
    ai.id = "msg-1";
    CHECK(fmt::format("{}", ai) == R"(ai[msg-1]: "Let me check" -> search({"q":"x"}))");

    message only_calls = ai_message("", {tool_call{"c1", "ls", {}}});
    only_calls.edit_invalid_tool_calls().push_back(invalid_tool_call{"c2", "cat", "{oops", "bad"});
    CHECK(fmt::format("{}", only_calls) == R"(ai -> ls({}), cat(invalid: {oops))");

    message tool = tool_message("call_1", "search", "line 1\nline 2", tool_status::error);
    tool.id = "msg-2";
    CHECK(fmt::format("{}", tool) == R"(tool[msg-2] <- search#call_1 error: "line 1\nline 2")");

    const message picture = human_message({text_block("see"), image_block_from_data("image/png", "abc")});
    CHECK(fmt::format("{}", picture) == R"(human: "see" +1 image)");
    CHECK(fmt::format("{}", picture.content[1]) == "image(data image/png, 26 bytes)");

    CHECK(fmt::format("{}", remove_all_messages()) == "remove[all]");
    CHECK(fmt::format("{}", remove_message("msg-3")) == "remove[msg-3]");
    CHECK(fmt::format("{} {} {}", role::human, role::ai, tool_status::ok) == "human ai ok");
}

TEST_CASE("printed messages shorten long text on a character boundary and hide metadata", "[message][fmt]") {
    std::string long_text;
    for (int i = 0; i < 100; ++i)
        long_text += "\xc3\xa9"; // "é", two bytes each
    message m = ai_message(long_text);
    m.metadata["api_key_echo"] = "sk-should-not-print";
    m.set_reasoning("abc");
    const std::string line = fmt::format("{}", m);

    CHECK(line == "ai: \"" + long_text.substr(0, 80) + "\"... (reasoning: 3 bytes)");
    CHECK(line.find("sk-should") == std::string::npos);

    const message odd = ai_message("x" + long_text); // a cut at 80 bytes would split a character
    CHECK(fmt::format("{}", odd) == "ai: \"x" + long_text.substr(0, 78) + "\"...");
}
