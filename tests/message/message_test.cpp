// message/message.hpp: the message type, its factories, comparison, moves and copies.
#include <agentware/message/message.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <type_traits>

using namespace agentware;
using message_test::obj;

TEST_CASE("message factories set role, content and tool fields", "[message]") {
    const message ai = ai_message("Let me check", {tool_call{"call_1", "search", obj(R"({"q":"x"})")}});
    CHECK(ai.is_ai());
    CHECK(ai.has_tool_calls());
    CHECK(ai.text() == "Let me check");
    CHECK(ai.id.empty());

    const message tool = tool_message("call_1", "search", "found", tool_status::error);
    CHECK(tool.is_tool());
    CHECK(tool.is_error());
    CHECK(tool.tool_call_id() == "call_1");
    CHECK(tool.name == "search");
    CHECK(tool.text() == "found");

    CHECK(system_message("s").is_system());
    CHECK(human_message("").content.empty()); // "" means no content, not an empty block
    CHECK(remove_message("msg-1").is_remove());
    CHECK_FALSE(remove_message("msg-1").is_remove_all());
    CHECK(remove_all_messages().is_remove_all());
    CHECK(remove_all_messages().id == remove_all_id);
}

TEST_CASE("text() concatenates text blocks and skips images", "[message]") {
    const message m = human_message({text_block("one "), image_block("https://x/y.png"), text_block("two")});
    CHECK(m.text() == "one two");
    CHECK(m.has_images());
    CHECK_FALSE(human_message("x").has_images());
}

TEST_CASE("messages compare by value and move without throwing", "[message]") {
    STATIC_REQUIRE(std::is_nothrow_move_constructible_v<message>);
    message a = ai_message("x", {tool_call{"c", "f", obj(R"({"k":1})")}});
    message b = a;
    CHECK(a == b);
    b.tool_calls[0].args["k"] = 2;
    CHECK_FALSE(a == b);
    b = a;
    b.metadata["usage"] = 1;
    CHECK(a != b);
    b = a;
    b.provider.set_model("gpt-4o");
    CHECK(a != b);
}

TEST_CASE("a message moved under a new id keeps every other member and takes that id", "[message][id]") {
    message original = ai_message("some text", {tool_call{"c1", "f", obj(R"({"k":1})")}});
    original.name = "assistant";
    original.set_reasoning("because");
    original.edit_invalid_tool_calls().push_back({"c2", "g", "{bad", "not JSON"});
    original.provider = provider_metadata("tool_calls", "gpt-4o", token_usage{3, 4, 7});
    original.metadata["refusal"] = "no";
    message expected = original;

    agentware::detail::message_id_chars id{};
    agentware::detail::next_message_id(id.chars);
    const message moved(std::move(original), id);
    CHECK(moved.id == std::string(id.chars, sizeof id.chars));
    expected.id = moved.id;
    CHECK(moved == expected); // nothing else lost or changed

    // The plain move keeps the id it has.
    message named = human_message("hi");
    named.id = "msg-kept";
    const message plain(std::move(named));
    CHECK(plain.id == "msg-kept");
}

TEST_CASE("copy_without_content copies every member but the content", "[message]") {
    message original = ai_message("some text", {tool_call{"c1", "f", obj(R"({"k":1})")}});
    original.id = "msg-1";
    original.name = "assistant";
    original.status = tool_status::error;
    original.set_reasoning("because");
    original.edit_invalid_tool_calls().push_back({"c2", "g", "{bad", "not JSON"});
    original.provider = provider_metadata("tool_calls", "gpt-4o", token_usage{3, 4, 7});
    original.metadata["refusal"] = "no";

    const message copy = original.copy_without_content();
    CHECK(copy.content.empty());
    message expected = original;
    expected.content.clear();
    CHECK(copy == expected);
    CHECK(original.content.size() == 1); // the source keeps its content

    message tool = tool_message("call-9", "bash", "out");
    CHECK(tool.copy_without_content().tool_call_id() == "call-9");
}
