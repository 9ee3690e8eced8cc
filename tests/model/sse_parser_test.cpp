// The server-sent-events parser: fields, comments, line endings, and any split of the input.

#include <agentware/model/sse_parser.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace agentware;

namespace {

struct seen {
    std::string type, data, id;
    friend bool operator==(const seen&, const seen&) = default;
};

std::vector<seen> parse_in_pieces(std::string_view text, std::vector<std::size_t> cuts) {
    sse_parser p;
    std::vector<seen> out;
    auto sink = [&](const sse_event& e) {
        out.push_back({std::string(e.type), std::string(e.data), std::string(e.id)});
    };
    std::size_t from = 0;
    for (std::size_t cut : cuts) {
        p.feed(text.substr(from, cut - from), sink);
        from = cut;
    }
    p.feed(text.substr(from), sink);
    return out;
}

std::vector<seen> parse(std::string_view text) { return parse_in_pieces(text, {}); }

} // namespace

namespace Catch {
template <>
struct StringMaker<seen> {
    static std::string convert(const seen& s) { return "{" + s.type + "|" + s.data + "|" + s.id + "}"; }
};
} // namespace Catch

TEST_CASE("sse: data lines become events at blank lines", "[sse]") {
    CHECK(parse("data: a\n\ndata: b\n\n") == std::vector<seen>{{"message", "a", ""}, {"message", "b", ""}});
    CHECK(parse("data: no blank line yet\n").empty());
}

TEST_CASE("sse: several data lines join with newlines, one leading space is stripped", "[sse]") {
    CHECK(parse("data: one\ndata:two\ndata:  three\n\n") ==
          std::vector<seen>{{"message", "one\ntwo\n three", ""}});
    CHECK(parse("data\n\n") == std::vector<seen>{{"message", "", ""}});
    CHECK(parse("data:\ndata:\n\n") == std::vector<seen>{{"message", "\n", ""}});
}

TEST_CASE("sse: comments, event types, ids and unknown fields", "[sse]") {
    const auto events =
        parse(": keep-alive\nevent: delta\nid: 7\nretry: 10\nfoo: bar\ndata: x\n\n: ping\n\ndata: y\n\n");
    CHECK(events == std::vector<seen>{{"delta", "x", "7"}, {"message", "y", "7"}});
    CHECK(parse("event: lonely\n\n").empty()); // no data: nothing dispatched
}

TEST_CASE("sse: where a stream stands, to resume it: the last id and retry", "[sse]") {
    sse_parser p;
    auto ignore = [](const sse_event&) {};
    CHECK(p.last_event_id().empty());
    CHECK_FALSE(p.retry());
    p.feed("id: e-1\nretry: 500\ndata: \n\n", ignore);
    CHECK(p.last_event_id() == "e-1");
    REQUIRE(p.retry());
    CHECK(p.retry()->count() == 500);
    p.feed("retry: soon\nretry: 12345678901\nid: e-2\ndata: x\n\n", ignore); // not delays: ignored
    CHECK(p.last_event_id() == "e-2");
    CHECK(p.retry()->count() == 500);
    p.reset();
    CHECK(p.last_event_id().empty());
    CHECK_FALSE(p.retry());
}

TEST_CASE("sse: CRLF, CR and LF line endings, and a BOM", "[sse]") {
    const std::vector<seen> want{{"message", "a", ""}, {"message", "b", ""}, {"message", "c", ""}};
    CHECK(parse("data: a\r\n\r\ndata: b\r\rdata: c\n\n") == want);
    CHECK(parse("\xEF\xBB\xBF"
                "data: a\n\ndata: b\n\ndata: c\n\n") == want);
}

TEST_CASE("sse: every split into two and three pieces gives the same events", "[sse]") {
    const std::string text = "\xEF\xBB\xBF: c\r\nevent: e\r\ndata: h\xC3\xA9llo\r\ndata: w\r\n\r\ndata: "
                             "{\"x\":1}\r\rdata: [DONE]\n\n";
    const auto whole = parse(text);
    REQUIRE(whole.size() == 3);
    CHECK(whole[0] == seen{"e", "h\xC3\xA9llo\nw", ""});
    for (std::size_t i = 0; i <= text.size(); ++i) {
        CHECK(parse_in_pieces(text, {i}) == whole);
        for (std::size_t j = i; j <= text.size(); j += 3)
            CHECK(parse_in_pieces(text, {i, j}) == whole);
    }
    std::vector<std::size_t> every_byte;
    for (std::size_t i = 1; i < text.size(); ++i)
        every_byte.push_back(i);
    CHECK(parse_in_pieces(text, every_byte) == whole);
}

TEST_CASE("sse: a stream cut mid-event leaves it pending, not dispatched", "[sse]") {
    sse_parser p;
    int n = 0;
    p.feed("data: a\n\ndata: b", [&](const sse_event&) { ++n; });
    CHECK(n == 1);
    CHECK(p.has_pending());
    p.feed("\n", [&](const sse_event&) { ++n; });
    CHECK(p.has_pending());
    p.feed("\n", [&](const sse_event&) { ++n; });
    CHECK(n == 2);
    CHECK_FALSE(p.has_pending());
}

TEST_CASE("sse: an endless line is an error, not unbounded memory", "[sse]") {
    sse_parser p(1024);
    const std::string chunk(512, 'x');
    auto ignore = [](const sse_event&) {};
    p.feed("data: ", ignore);
    p.feed(chunk, ignore);
    CHECK_THROWS_AS(p.feed(chunk, ignore), sse_error);
}
