// Tests of the message layer: content blocks, ids, add_messages, JSON, fmt.

#include <agentware/message.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <unordered_set>
#include <vector>

namespace json = boost::json;
using namespace agentware;

// Failed comparisons print the message in one line instead of "{?}".
namespace Catch {
template <>
struct StringMaker<agentware::message> {
    static std::string convert(const agentware::message& m) { return agentware::to_json_string(m); }
};
} // namespace Catch

namespace {

json::object obj(std::string_view text) { return json::parse(text).as_object(); }

message through_json(const message& m) {
    const std::string text = json::serialize(json::value_from(m));
    return json::value_to<message>(json::parse(text));
}

/// The what() of the message_format_error that parsing `text` throws.
std::string format_error_of(std::string_view text) {
    try {
        (void)json::value_to<message>(json::parse(text));
    } catch (const message_format_error& e) {
        return e.what();
    }
    return "(no message_format_error)";
}

std::vector<message> ids_only(std::initializer_list<const char*> ids) {
    std::vector<message> out;
    for (const char* id : ids) {
        message m = human_message(std::string("text of ") + id);
        m.id = id;
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<std::string> ids_of(const std::vector<message>& list) {
    std::vector<std::string> out;
    for (const message& m : list)
        out.push_back(m.id);
    return out;
}

std::vector<message> every_kind_of_message() {
    std::vector<message> all;
    all.push_back(system_message("You are terse."));
    all.push_back(human_message("What is 2+2?"));

    message named = human_message("hi");
    named.id = "msg-named";
    named.name = "alice";
    all.push_back(named);

    all.push_back(
        human_message({text_block("Describe these"), image_block("https://example.com/cat.png", "low"),
                       image_block_from_data("image/png", std::string("\x89PNG\r\n\x1a\n\0\xff", 10))}));
    all.push_back(ai_message("It is 4."));

    message thinking =
        ai_message("Let me look.",
                   {tool_call{"call_1", "search", obj(R"({"q":"x","n":3,"deep":{"a":[1,2.5,null,true]}})")},
                    tool_call{"call_2", "noop", {}}});
    thinking.id = "msg-think";
    thinking.set_reasoning("The user wants a search.");
    thinking.provider = provider_metadata("tool_calls", "gpt-4o-2024-08-06", token_usage{12, 7, 19});
    // Shapes the typed members do not hold stay JSON beside them.
    thinking.metadata = obj(R"({"usage_details":{"prompt_tokens":12,"completion_tokens":7},"refusal":""})");
    all.push_back(thinking);

    all.push_back(ai_message("", {tool_call{"call_3", "ls", obj(R"({"path":"/"})")}})); // tool-call-only

    message broken = ai_message("");
    broken.edit_invalid_tool_calls().push_back(
        invalid_tool_call{"call_4", "search", "{\"q\":", "arguments are not valid JSON: x"});
    all.push_back(broken);

    all.push_back(tool_message("call_1", "search", "3 results"));
    all.push_back(tool_message("call_2", "noop", "boom", tool_status::error));
    all.push_back(tool_message("call_3", "ls", "")); // empty result

    message empty_block = ai_message("");
    empty_block.content.push_back(text_block("")); // one empty block is not "no content"
    all.push_back(empty_block);

    message two_texts = human_message({text_block("a"), text_block("b")});
    all.push_back(two_texts);

    all.push_back(remove_message("msg-think"));
    all.push_back(remove_all_messages());
    return all;
}

} // namespace

// --- content ---------------------------------------------------------------------

TEST_CASE("base64 matches the RFC 4648 test vectors", "[message][content]") {
    const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                           {"f", "Zg=="},
                                                           {"fo", "Zm8="},
                                                           {"foo", "Zm9v"},
                                                           {"foob", "Zm9vYg=="},
                                                           {"fooba", "Zm9vYmE="},
                                                           {"foobar", "Zm9vYmFy"}};
    for (const auto& [plain, encoded] : vectors) {
        CHECK(detail::base64_encode(plain) == encoded);
        CHECK(detail::base64_decode(encoded) == std::optional<std::string>(plain));
    }
}

TEST_CASE("base64 decoding rejects what is not base64 and accepts missing padding", "[message][content]") {
    CHECK_FALSE(detail::base64_decode("Zm9v!").has_value());
    CHECK_FALSE(detail::base64_decode("Z").has_value());
    CHECK_FALSE(detail::base64_decode("Zg=").has_value()); // padding that does not complete a group
    CHECK_FALSE(detail::base64_decode("Zm 9v").has_value());
    CHECK(detail::base64_decode("Zm8") == std::optional<std::string>("fo"));
}

TEST_CASE("image blocks from data carry the bytes as a base64 data URL", "[message][content]") {
    std::string bytes;
    for (int i = 0; i < 256; ++i)
        bytes += static_cast<char>(i);
    const content_block block = image_block_from_data("image/png", bytes, "high");

    CHECK(block.is_image());
    CHECK(block.detail == "high");
    const std::string prefix = "data:image/png;base64,";
    REQUIRE(block.image_url.rfind(prefix, 0) == 0);
    CHECK(detail::base64_decode(std::string_view(block.image_url).substr(prefix.size())) ==
          std::optional<std::string>(bytes));
}

TEST_CASE("text and image factories fill the matching fields", "[message][content]") {
    CHECK(text_block("hi") == content_block{content_block::kind::text, "hi", "", ""});
    CHECK(image_block("https://x/y.png") ==
          content_block{content_block::kind::image, "", "https://x/y.png", ""});
}

// --- message ---------------------------------------------------------------------

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

// --- ids ---------------------------------------------------------------------------

TEST_CASE("message ids are msg- followed by 11 letters and digits, short enough not to allocate",
          "[message][id]") {
    const std::string id = make_message_id();
    REQUIRE(id.size() == 15);
    CHECK(id.rfind("msg-", 0) == 0);
    CHECK(std::all_of(id.begin() + 4, id.end(),
                      [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }));
    CHECK(id.capacity() == std::string().capacity()); // still in the inline buffer
    CHECK(make_message_id() != id);
}

TEST_CASE("ids spell their unique bits in base 62, most significant digit first", "[message][id]") {
    const auto naive = [](std::uint64_t bits) {
        std::string out(11, '0');
        for (std::size_t i = 11; i-- > 0;) {
            out[i] = agentware::detail::alnum_digits[bits % 62];
            bits /= 62;
        }
        return out;
    };
    constexpr std::uint64_t p5 = 62ULL * 62 * 62 * 62 * 62;
    for (std::uint64_t bits : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{61}, std::uint64_t{62},
                               p5 - 1, p5, p5 * p5 - 1, p5 * p5, std::uint64_t{1} << 32, ~std::uint64_t{0},
                               std::uint64_t{0x0123456789abcdefULL}, agentware::detail::mix64(42)}) {
        char out[11];
        agentware::detail::write_base62_11(out, bits);
        CHECK(std::string(out, 11) == naive(bits));
    }
    CHECK(naive(~std::uint64_t{0}) == "LygHa16AHYF"); // the largest value still fits 11 digits
}

TEST_CASE("message ids count up by one within a block and stay distinct across blocks", "[message][id]") {
    const auto value_of = [](std::string_view digits) { // the 64-bit value 11 base-62 digits spell
        std::uint64_t v = 0;
        for (char c : digits)
            v = v * 62 +
                static_cast<std::uint64_t>(std::string_view(agentware::detail::alnum_digits).find(c));
        return v;
    };
    constexpr std::uint64_t block_size = 100;
    agentware::detail::message_id_block small(block_size); // a new block every 100 ids
    std::unordered_set<std::string> seen;
    std::unordered_set<std::uint64_t> blocks;
    std::uint64_t previous = 0;
    for (std::uint64_t i = 0; i < 1000; ++i) {
        char out[15];
        small.next(out);
        const std::string id(out, sizeof out);
        REQUIRE(id.rfind("msg-", 0) == 0);
        REQUIRE(std::all_of(id.begin() + 4, id.end(),
                            [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }));
        const std::uint64_t value = value_of(std::string_view(id).substr(4));
        if (i % block_size == 0) {
            // A block starts at a multiple of 2^20, at a place no other block of the process has.
            CHECK(value % (std::uint64_t{1} << agentware::detail::message_id_block::count_bits) == 0);
            CHECK(blocks.insert(value).second);
        } else {
            CHECK(value == previous + 1); // digits carry as in addition
        }
        previous = value;
        seen.insert(id);
    }
    CHECK(seen.size() == 1000);
    CHECK(blocks.size() == 10);
}

TEST_CASE("tool call ids are call_ followed by 24 letters and digits", "[message][id]") {
    const std::string id = make_tool_call_id();
    REQUIRE(id.size() == 29);
    CHECK(id.rfind("call_", 0) == 0);
    CHECK(std::all_of(id.begin() + 5, id.end(),
                      [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }));
    CHECK(make_tool_call_id() != id);
}

TEST_CASE("ids made on several threads at once are all distinct", "[message][id][concurrency]") {
    constexpr int threads = 4;
    constexpr int per_thread = 10000;
    std::vector<std::vector<std::string>> message_ids(threads), call_ids(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            for (int i = 0; i < per_thread; ++i) {
                message_ids[static_cast<std::size_t>(t)].push_back(make_message_id());
                call_ids[static_cast<std::size_t>(t)].push_back(make_tool_call_id());
            }
        });
    }
    for (auto& w : workers)
        w.join();

    std::unordered_set<std::string> messages_seen, calls_seen;
    for (const auto& batch : message_ids)
        messages_seen.insert(batch.begin(), batch.end());
    for (const auto& batch : call_ids)
        calls_seen.insert(batch.begin(), batch.end());
    CHECK(messages_seen.size() == threads * per_thread);
    CHECK(calls_seen.size() == threads * per_thread);
}

// --- add_messages --------------------------------------------------------------------

TEST_CASE("add_messages gives messages without id a fresh id and appends them", "[message][add_messages]") {
    std::vector<message> list = ids_only({"a"});
    add_messages(list, {human_message("one"), ai_message("two")});
    REQUIRE(list.size() == 3);
    CHECK(list[1].text() == "one");
    CHECK(list[2].text() == "two");
    CHECK(list[1].id.rfind("msg-", 0) == 0);
    CHECK(list[2].id.rfind("msg-", 0) == 0);
    CHECK(list[1].id != list[2].id);
}

TEST_CASE("add_messages replaces a message with the same id in place", "[message][add_messages]") {
    std::vector<message> list = ids_only({"a", "b", "c"});
    message edited = ai_message("edited");
    edited.id = "b";
    message fresh = human_message("new");
    fresh.id = "d";
    add_messages(list, {edited, fresh});
    CHECK(ids_of(list) == std::vector<std::string>{"a", "b", "c", "d"});
    CHECK(list[1] == edited);
    CHECK(list[3].text() == "new");
}

TEST_CASE("add_messages finds ids correctly once it switches to a hash index", "[message][add_messages]") {
    std::vector<message> list;
    for (int i = 0; i < 100; ++i) {
        message m = human_message("v1");
        m.id = "id" + std::to_string(i);
        list.push_back(m);
    }
    std::vector<message> update;
    for (int i = 0; i < 100; i += 2) { // 50 replacements, far beyond the linear-search budget
        message m = ai_message("v2");
        m.id = "id" + std::to_string(i);
        update.push_back(m);
    }
    message extra = human_message("extra");
    extra.id = "id100";
    update.push_back(extra);
    message extra_again = human_message("extra v2"); // hits the id appended within this update
    extra_again.id = "id100";
    update.push_back(extra_again);

    add_messages(list, update);
    REQUIRE(list.size() == 101);
    for (int i = 0; i < 100; ++i) {
        CHECK(list[static_cast<std::size_t>(i)].id == "id" + std::to_string(i));
        CHECK(list[static_cast<std::size_t>(i)].text() == (i % 2 == 0 ? "v2" : "v1"));
    }
    CHECK(list[100].text() == "extra v2");
}

TEST_CASE("add_messages deletes by id with remove markers", "[message][add_messages]") {
    std::vector<message> list = ids_only({"a", "b", "c"});
    add_messages(list, {remove_message("a"), remove_message("c")});
    CHECK(ids_of(list) == std::vector<std::string>{"b"});
}

TEST_CASE("add_messages can remove a message added earlier in the same update", "[message][add_messages]") {
    std::vector<message> list = ids_only({"a"});
    std::vector<message> update = ids_only({"b"});
    update.push_back(remove_message("b"));
    add_messages(list, update);
    CHECK(ids_of(list) == std::vector<std::string>{"a"});
}

TEST_CASE("add_messages keeps a message that is removed and then sent again", "[message][add_messages]") {
    std::vector<message> list = ids_only({"a", "b"});
    message again = ai_message("back");
    again.id = "a";
    add_messages(list, {remove_message("a"), again});
    CHECK(ids_of(list) == std::vector<std::string>{"a", "b"});
    CHECK(list[0].text() == "back");
}

TEST_CASE("add_messages rejects removing an unknown id and leaves the list unchanged",
          "[message][add_messages]") {
    std::vector<message> list = ids_only({"a", "b"});
    const std::vector<message> before = list;
    try {
        add_messages(list, {human_message("would be appended"), remove_message("a"), remove_message("nope")});
        FAIL("no exception");
    } catch (const std::invalid_argument& e) {
        CHECK_THAT(e.what(), Catch::Contains("\"nope\""));
    }
    CHECK(list == before);

    CHECK_THROWS_AS(add_messages(list, {remove_message("")}), std::invalid_argument);
    CHECK(list == before);
}

TEST_CASE("add_messages with remove_all replaces the list by the rest of the update",
          "[message][add_messages]") {
    std::vector<message> list = ids_only({"a", "b"});
    message keep = human_message("summary");
    keep.id = "s";
    add_messages(
        list, {human_message("dropped: before the marker"), remove_all_messages(), keep, ai_message("next")});
    REQUIRE(list.size() == 2);
    CHECK(list[0] == keep);
    CHECK(list[1].text() == "next");
    CHECK_FALSE(list[1].id.empty());

    add_messages(list, {remove_all_messages()});
    CHECK(list.empty());
}

TEST_CASE("add_messages after remove_all cannot remove messages of the old list", "[message][add_messages]") {
    std::vector<message> list = ids_only({"a"});
    CHECK_THROWS_AS(add_messages(list, {remove_all_messages(), remove_message("a")}), std::invalid_argument);
    CHECK(ids_of(list) == std::vector<std::string>{"a"});
}

// --- JSON: round trips ----------------------------------------------------------------

TEST_CASE("every kind of message survives a JSON round trip unchanged", "[message][json]") {
    for (const message& m : every_kind_of_message()) {
        INFO(to_json_string(m));
        CHECK(through_json(m) == m);
    }
}

TEST_CASE("a message list survives to_json_string and parse_messages", "[message][json]") {
    const std::vector<message> all = every_kind_of_message();
    CHECK(parse_messages(to_json_string(all)) == all);
    CHECK(parse_messages("[]").empty());

    // Deeper than Boost.JSON's default depth limit of 32.
    message deep = ai_message("deep");
    json::value nested = json::object{};
    for (int i = 0; i < 60; ++i)
        nested = json::object{{"k", nested}};
    deep.metadata["nested"] = nested;
    CHECK(parse_messages(to_json_string(std::vector<message>{deep})) == std::vector<message>{deep});
}

TEST_CASE("content blocks, tool calls, roles and statuses convert on their own", "[message][json]") {
    const content_block image = image_block("https://x/y.png", "auto");
    CHECK(json::value_from(image) ==
          json::parse(R"({"type":"image_url","image_url":{"url":"https://x/y.png","detail":"auto"}})"));
    CHECK(json::value_to<content_block>(json::value_from(image)) == image);

    const tool_call call{"call_9", "search", obj(R"({"q":"x"})")};
    CHECK(
        json::value_from(call) ==
        json::parse(
            R"({"id":"call_9","type":"function","function":{"name":"search","arguments":"{\"q\":\"x\"}"}})"));
    CHECK(json::value_to<tool_call>(json::value_from(call)) == call);

    const invalid_tool_call bad{"call_8", "search", "{oops", "arguments are not valid JSON: syntax error"};
    CHECK(json::value_to<invalid_tool_call>(json::value_from(bad)) == bad);

    CHECK(json::value_from(role::human) == "user");
    CHECK(json::value_from(role::ai) == "assistant");
    CHECK(json::value_to<role>(json::value("tool")) == role::tool);
    CHECK(json::value_to<tool_status>(json::value("success")) == tool_status::ok);
    CHECK(json::value_from(tool_status::error) == "error");
}

TEST_CASE("a tool message's call id and an ai message's reasoning and invalid calls are out of line",
          "[message][extras]") {
    message none = human_message("hi");
    CHECK(none.tool_call_id().empty());
    CHECK(none.reasoning().empty());
    CHECK(none.invalid_tool_calls().empty());

    message tool = tool_message("call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", "sunny");
    CHECK(tool.tool_call_id() == "call_DdmO9pD3xa9XTPNJ32zg2hcA");
    CHECK(tool.reasoning().empty());

    message ai = ai_message("answer");
    ai.set_reasoning("first thought");
    ai.edit_invalid_tool_calls().push_back({"c1", "search", "{oops", "bad JSON"});
    ai.set_reasoning(ai.reasoning().substr(6)); // a view of itself is read before it is replaced
    CHECK(ai.reasoning() == "thought");
    REQUIRE(ai.invalid_tool_calls().size() == 1); // setting a string keeps the calls
    CHECK(ai.invalid_tool_calls()[0].raw_args == "{oops");

    message copy = ai; // the copy is its own
    copy.edit_invalid_tool_calls().clear();
    copy.set_tool_call_id("x");
    CHECK(copy != ai);
    CHECK(ai.invalid_tool_calls().size() == 1);
    CHECK(ai.tool_call_id().empty());
    copy.set_tool_call_id("");
    copy.edit_invalid_tool_calls().push_back(ai.invalid_tool_calls()[0]);
    CHECK(copy == ai);

    message moved = std::move(copy);
    CHECK(moved == ai);
    copy = moved; // assignable again after a move
    CHECK(copy == ai);

    ai.set_reasoning("");
    ai.edit_invalid_tool_calls().clear();
    CHECK(ai == ai_message("answer")); // emptied extras compare equal to none
}

TEST_CASE("provider metadata is typed, one pointer when absent, and a value", "[message][provider]") {
    STATIC_REQUIRE(sizeof(provider_metadata) == sizeof(void*));
    STATIC_REQUIRE(sizeof(message) <= 160); // 240 with every role's members inline
    STATIC_REQUIRE(std::is_nothrow_move_constructible_v<provider_metadata>);

    provider_metadata none;
    CHECK(none.empty());
    CHECK(none.finish_reason().empty());
    CHECK(none.model().empty());
    CHECK(none.usage() == token_usage{});
    CHECK(provider_metadata("", "", {}).empty()); // nothing reported holds nothing

    provider_metadata p("tool_calls", "gpt-4o-2024-08-06", token_usage{82, 17, 99});
    CHECK(p.finish_reason() == "tool_calls");
    CHECK(p.model() == "gpt-4o-2024-08-06");
    CHECK(p.usage() == token_usage{82, 17, 99});

    provider_metadata copy = p;
    CHECK(copy == p);
    copy.set_finish_reason("stop"); // the copy is its own
    CHECK(copy.finish_reason() == "stop");
    CHECK(copy.model() == "gpt-4o-2024-08-06");
    CHECK(p.finish_reason() == "tool_calls");
    CHECK(copy != p);

    copy.set_model(copy.finish_reason()); // a view of itself is read before it is replaced
    CHECK(copy.model() == "stop");
    copy.set_usage({});
    copy = p;
    CHECK(copy == p);

    provider_metadata moved = std::move(copy);
    CHECK(moved == p);
    CHECK(copy.empty()); // NOLINT: a moved-from value reads empty
    moved.clear();
    CHECK(moved.empty());
    CHECK(moved == none);
}

TEST_CASE(
    "a state saved with metadata as one JSON object loads into the typed members and saves the same keys",
    "[message][json][provider]") {
    const json::value saved = json::parse(R"({"role":"assistant","id":"chatcmpl-1","content":"Done.",
        "metadata":{"finish_reason":"stop","model":"gpt-4o","refusal":"",
                    "usage":{"input_tokens":120,"output_tokens":8,"total_tokens":128},
                    "run_id":"run-7","tool_meta":{"status":"success"}}})");
    const message m = json::value_to<message>(saved);
    CHECK(m.provider == provider_metadata("stop", "gpt-4o", token_usage{120, 8, 128}));
    CHECK(m.metadata == obj(R"({"refusal":"","run_id":"run-7","tool_meta":{"status":"success"}})"));
    CHECK(json::value_from(m) == saved);
    CHECK(through_json(m) == m);
}

TEST_CASE("metadata the typed members cannot hold exactly stays JSON, unchanged",
          "[message][json][provider]") {
    for (const char* metadata :
         {R"({"finish_reason":7,"model":["a"]})",                    // not strings
          R"({"finish_reason":"","model":""})",                      // empty strings
          R"({"usage":{"prompt_tokens":12,"completion_tokens":7}})", // another provider's shape
          R"({"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3,"x":0}})", // more keys
          R"({"usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}})",       // zero: unset
          R"({"usage":{"input_tokens":-1,"output_tokens":2,"total_tokens":1}})",      // negative
          R"({"usage":{"input_tokens":1.5,"output_tokens":2,"total_tokens":3}})"}) {  // not an integer
        INFO(metadata);
        const json::value saved{{"role", "assistant"}, {"content", "x"}, {"metadata", json::parse(metadata)}};
        const message m = json::value_to<message>(saved);
        CHECK(m.provider.empty());
        CHECK(json::value(m.metadata) == json::parse(metadata));
        CHECK(json::value_from(m) == saved);
    }
    // A key of both is written once, from the typed member.
    message both = ai_message("x");
    both.provider.set_finish_reason("stop");
    both.metadata["finish_reason"] = "length";
    both.metadata["seed"] = 4;
    CHECK(json::value_from(both).at("metadata") == json::parse(R"({"finish_reason":"stop","seed":4})"));
}

TEST_CASE("token_usage and provider_metadata convert on their own", "[message][json][provider]") {
    const token_usage usage{5, 6, 11};
    CHECK(json::value_from(usage) ==
          json::parse(R"({"input_tokens":5,"output_tokens":6,"total_tokens":11})"));
    CHECK(json::value_to<token_usage>(json::value_from(usage)) == usage);
    CHECK(json::value_to<token_usage>(json::parse(R"({"output_tokens":2})")) == token_usage{0, 2, 0});

    const provider_metadata p("end_turn", "claude-sonnet-4-20250514", usage);
    CHECK(json::value_from(p) ==
          json::parse(R"({"finish_reason":"end_turn","model":"claude-sonnet-4-20250514",
        "usage":{"input_tokens":5,"output_tokens":6,"total_tokens":11}})"));
    CHECK(json::value_to<provider_metadata>(json::value_from(p)) == p);
    CHECK(json::value_from(provider_metadata()) == json::object());

    std::string error;
    try {
        (void)json::value_to<token_usage>(json::parse(R"({"input_tokens":"many"})"));
    } catch (const message_format_error& e) {
        error = e.what();
    }
    CHECK(error == R"(token_usage: field "input_tokens" must be a non-negative integer (got "many"))");
}

// --- JSON: exact forms ------------------------------------------------------------------

TEST_CASE("a tool-call-only assistant message has the exact OpenAI wire form", "[message][json][wire]") {
    message m = ai_message("", {tool_call{"call_1", "search", obj(R"({"q":"x"})")}});
    m.id = "msg-1";
    m.set_reasoning("thinking");
    m.provider.set_finish_reason("tool_calls");
    m.edit_invalid_tool_calls().push_back(invalid_tool_call{"call_2", "ls", "{", "bad"});

    CHECK(to_openai_wire(m) == json::parse(R"({
        "role": "assistant",
        "content": null,
        "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": "search", "arguments": "{\"q\":\"x\"}"}},
                       {"id": "call_2", "type": "function",
                        "function": {"name": "ls", "arguments": "{"}}]
    })"));
    CHECK(to_openai_wire(m, wire_options{true}).as_object().at("reasoning_content") == "thinking");
}

TEST_CASE("a tool message has the exact wire form and keeps more in the state form",
          "[message][json][wire]") {
    message m = tool_message("call_1", "search", "no results", tool_status::error);
    m.id = "msg-7";
    CHECK(to_openai_wire(m) ==
          json::parse(R"({"role":"tool","content":"no results","tool_call_id":"call_1"})"));
    CHECK(json::value_from(m) == json::parse(R"({
        "role": "tool", "id": "msg-7", "name": "search", "content": "no results",
        "tool_call_id": "call_1", "status": "error"
    })"));
}

TEST_CASE("user content with an image is an array of parts on the wire", "[message][json][wire]") {
    message m = human_message({text_block("What is this?"), image_block("https://x/cat.png", "low")});
    m.name = "alice";
    CHECK(to_openai_wire(m) == json::parse(R"({
        "role": "user", "name": "alice",
        "content": [{"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": "https://x/cat.png", "detail": "low"}}]
    })"));
    CHECK(to_openai_wire(system_message("Be brief")) ==
          json::parse(R"({"role":"system","content":"Be brief"})"));
    CHECK(to_openai_wire(ai_message("")) == json::parse(R"({"role":"assistant","content":""})"));
}

TEST_CASE("a conversation becomes the messages array of a request", "[message][json][wire]") {
    const std::vector<message> conversation{system_message("s"), human_message("h")};
    CHECK(to_openai_wire(conversation) ==
          json::parse(R"([{"role":"system","content":"s"},{"role":"user","content":"h"}])"));
}

TEST_CASE("a remove marker cannot be sent to a model", "[message][json][wire]") {
    CHECK_THROWS_AS(to_openai_wire(remove_message("msg-1")), std::invalid_argument);
    CHECK(json::value_from(remove_message("msg-1")) == json::parse(R"({"role":"remove","id":"msg-1"})"));
}

// --- JSON: provider quirks --------------------------------------------------------------

TEST_CASE("assistant replies with null or missing content parse as tool-call-only",
          "[message][json][quirks]") {
    const message a = json::value_to<message>(json::parse(R"({"role":"assistant","content":null,
        "tool_calls":[{"id":"call_1","type":"function","function":{"name":"ls","arguments":"{\"path\":\"/\"}"}}]})"));
    CHECK(a.content.empty());
    REQUIRE(a.tool_calls.size() == 1);
    CHECK(a.tool_calls[0] == tool_call{"call_1", "ls", obj(R"({"path":"/"})")});

    const message b = json::value_to<message>(json::parse(R"({"role":"assistant",
        "tool_calls":[{"id":"call_1","type":"function","function":{"name":"ls","arguments":"{}"}}]})"));
    CHECK(b.content.empty());
    CHECK(b.tool_calls.size() == 1);
}

TEST_CASE("empty or blank arguments mean no arguments", "[message][json][quirks]") {
    for (const char* args : {R"("")", R"("  \n")", R"("null")", "null"}) {
        INFO(args);
        const message m = json::value_to<message>(json::parse(std::string(R"({"role":"assistant","content":"",
            "tool_calls":[{"id":"c","type":"function","function":{"name":"now","arguments":)") +
                                                              args + "}}]}"));
        REQUIRE(m.tool_calls.size() == 1);
        CHECK(m.tool_calls[0].args.empty());
        CHECK(m.invalid_tool_calls().empty());
    }
}

TEST_CASE("unparsable arguments become an invalid tool call, never an exception", "[message][json][quirks]") {
    const message m = json::value_to<message>(json::parse(R"({"role":"assistant","content":"",
        "tool_calls":[
          {"id":"c1","type":"function","function":{"name":"search","arguments":"{\"q\": \"unterminated"}},
          {"id":"c2","type":"function","function":{"name":"search","arguments":"[1,2]"}},
          {"id":"c3","type":"function","function":{"name":"search","arguments":"{\"q\":\"ok\"}"}}]})"));
    REQUIRE(m.tool_calls.size() == 1);
    CHECK(m.tool_calls[0].id == "c3");
    REQUIRE(m.invalid_tool_calls().size() == 2);
    CHECK(m.invalid_tool_calls()[0].id == "c1");
    CHECK(m.invalid_tool_calls()[0].name == "search");
    CHECK(m.invalid_tool_calls()[0].raw_args == "{\"q\": \"unterminated");
    CHECK_THAT(m.invalid_tool_calls()[0].error, Catch::StartsWith("arguments are not valid JSON: "));
    CHECK(m.invalid_tool_calls()[1].raw_args == "[1,2]");
    CHECK(m.invalid_tool_calls()[1].error == "arguments must be a JSON object (got array)");

    // On the wire the garbled calls go back as the model wrote them, so the
    // error tool messages that answer them stay paired with a call.
    const json::object wire = to_openai_wire(m).as_object();
    CHECK_FALSE(wire.contains("invalid_tool_calls"));
    const json::array& calls = wire.at("tool_calls").as_array();
    REQUIRE(calls.size() == 3);
    CHECK(calls[0].at("id") == "c3");
    CHECK(calls[1].at("id") == "c1");
    CHECK(calls[1].at("function").at("arguments") == "{\"q\": \"unterminated");
    CHECK(calls[2].at("function").at("arguments") == "[1,2]");
}

TEST_CASE("other provider variations are read as intended", "[message][json][quirks]") {
    const message m =
        json::value_to<message>(json::parse(R"({"role":"assistant","content":[{"type":"text","text":"a"},"b"],
        "reasoning":"why","refusal":"I can't",
        "tool_calls":[{"function":{"name":"f","arguments":{"x":1}}},
                      {"id":"c2","function":{"name":"g","arguments":"\"{\\\"y\\\":2}\""}}]})"));
    CHECK(m.text() == "ab");
    CHECK(m.reasoning() == "why");
    CHECK(m.metadata.at("refusal") == "I can't");
    REQUIRE(m.tool_calls.size() == 2);
    CHECK(m.tool_calls[0].id.empty()); // kept as the model sent it: dangling_tool_call labels it in requests
    CHECK(m.tool_calls[0].args == obj(R"({"x":1})"));
    CHECK(m.tool_calls[1].args == obj(R"({"y":2})")); // doubly encoded arguments

    CHECK(json::value_to<message>(json::parse(R"({"role":"developer","content":"rules"})")).is_system());
    const message image = json::value_to<message>(
        json::parse(R"({"role":"user","content":[{"type":"image_url","image_url":"https://x/y.png"}]})"));
    CHECK(image.content == std::vector<content_block>{image_block("https://x/y.png")});
    CHECK(json::value_to<message>(json::parse(R"({"role":"user","content":"hi","some_new_field":[1]})"))
              .text() == "hi");
}

TEST_CASE("blank tool call ids and tool messages without tool_call_id are read as they are",
          "[message][json]") {
    const auto ai = json::value_to<message>(json::parse(
        R"({"role":"assistant","tool_calls":[{"id":"","function":{"name":"f","arguments":"{}"}},
                                             {"function":{"name":"g","arguments":"not json"}}]})"));
    REQUIRE(ai.tool_calls.size() == 1);
    CHECK(ai.tool_calls[0].id.empty());
    REQUIRE(ai.invalid_tool_calls().size() == 1);
    CHECK(ai.invalid_tool_calls()[0].id.empty());
    // Reading twice gives the same message: nothing is made up.
    CHECK(json::serialize(json::value_from(ai)) ==
          json::serialize(json::value_from(json::value_to<message>(json::value_from(ai)))));
    const auto orphan = json::value_to<message>(json::parse(R"({"role":"tool","content":"x"})"));
    CHECK(orphan.is_tool());
    CHECK(orphan.tool_call_id().empty());
    CHECK(orphan.text() == "x");
}

// --- JSON: malformed input ----------------------------------------------------------------

TEST_CASE("malformed messages throw message_format_error naming the field", "[message][json][errors]") {
    CHECK(format_error_of(R"({"role":"robot","content":"hi"})") ==
          R"(message: field "role" must be one of system, user, assistant, tool (got "robot"))");
    CHECK(format_error_of(R"({"content":"hi"})") == R"(message: field "role" is missing)");
    CHECK(format_error_of(R"({"role":7})") ==
          R"(message: field "role" must be one of system, user, assistant, tool (got number))");
    CHECK(format_error_of(R"([1])") == "message: must be a JSON object (got array)");
    CHECK(format_error_of(R"({"role":"user","content":42})") ==
          R"(message: field "content" must be a string, an array or null (got number))");
    CHECK(
        format_error_of(R"({"role":"user","content":[{"type":"text","text":"a"},{"type":"input_audio"}]})") ==
        R"(message: field "content[1].type" must be "text" or "image_url" (got "input_audio"))");
    CHECK(format_error_of(R"({"role":"assistant","tool_calls":{}})") ==
          R"(message: field "tool_calls" must be an array (got object))");
    CHECK(format_error_of(R"({"role":"assistant","tool_calls":[{"id":"c","function":{"name":3}}]})") ==
          R"(message: field "tool_calls[0].function.name" must be a string (got number))");
    CHECK(format_error_of(R"({"role":"assistant","tool_calls":[{"id":"c","type":"custom","custom":{}}]})") ==
          R"(message: field "tool_calls[0].type" must be "function" (got "custom"))");
    CHECK(format_error_of(R"({"role":"user","id":1})") ==
          R"(message: field "id" must be a string (got number))");
    CHECK(format_error_of(R"({"role":"tool","tool_call_id":"c","status":"meh"})") ==
          R"(message: field "status" must be "ok" or "error" (got "meh"))");
    CHECK(format_error_of(R"({"role":"user","metadata":[]})") ==
          R"(message: field "metadata" must be an object (got array))");
}

TEST_CASE("parse_messages reports invalid JSON and bad elements without crashing",
          "[message][json][errors]") {
    CHECK_THROWS_MATCHES(parse_messages(R"([{"role":"user",)"), message_format_error,
                         Catch::Matchers::Predicate<std::exception>([](const std::exception& e) {
                             return std::string(e.what()).rfind("messages: not valid JSON: ", 0) == 0;
                         }));
    CHECK_THROWS_WITH(parse_messages(""), Catch::StartsWith("messages: not valid JSON: "));
    CHECK_THROWS_WITH(parse_messages("[1,]"), "messages: not valid JSON: syntax error at offset 3");
    CHECK_THROWS_WITH(parse_messages("[] x"),
                      Catch::StartsWith("messages: not valid JSON: ") && Catch::EndsWith(" at offset 3"));
    CHECK_THROWS_WITH(parse_messages(R"({"role":"user"})"), "messages: must be a JSON array (got object)");
    CHECK_THROWS_WITH(
        parse_messages(R"([{"role":"user","content":"a"},{"role":"bot"}])"),
        R"(messages[1]: field "role" must be one of system, user, assistant, tool (got "bot"))");
}

TEST_CASE("a lone tool call with unusable arguments cannot become a tool_call", "[message][json][errors]") {
    CHECK_THROWS_WITH(
        json::value_to<tool_call>(json::parse(R"({"id":"c","function":{"name":"f","arguments":"[1]"}})")),
        R"(tool_call: field "function.arguments" arguments must be a JSON object (got array))");
}

// --- fmt ---------------------------------------------------------------------------------

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
