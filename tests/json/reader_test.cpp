// json_reader: null as the default, paths naming indexes, json_error's path
// within a parent, unknown keys.
#include <agentware/json/reader.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

using namespace agentware;
namespace json = boost::json;

TEST_CASE("json_reader: null is the default, paths name indexes, json_error moves inside a parent",
          "[options][json_reader]") {
    const json::value jv = json::parse(R"({"n": null, "list": [1, 2, "3"], "limit": 300000})");
    json_reader r(jv, "root");
    int n = 5;
    r.read("n", n);
    CHECK(n == 5);
    CHECK_FALSE(r.optional<int>("absent"));
    try {
        (void)r.required<std::vector<int>>("list");
        FAIL("no error");
    } catch (const json_error& e) {
        CHECK(e.path() == "root.list[2]");
        CHECK(e.problem() == R"(expected an integer, got "3")");
        CHECK(std::string(e.within("config").what()) ==
              R"(config.root.list[2]: expected an integer, got "3")");
    }
    CHECK_THROWS_WITH(r.required<std::uint16_t>("limit"),
                      "root.limit: expected an integer of at most 65535, got 300000");
    CHECK_NOTHROW(r.reject_unknown_keys()); // every key was named, even when read twice or absent

    json_reader partial(jv, "root");
    (void)partial.optional<int>("n");
    (void)partial.optional<int>("n");
    (void)partial.optional<int>("absent");
    CHECK_THROWS_WITH(partial.reject_unknown_keys(), "root.list: unknown key (known: n, absent)");
}

namespace {
enum class reader_test_tone { plain, formal, curt };
} // namespace

TEST_CASE("json_reader::choice reads one of the names, any other is an error that lists them",
          "[json_reader][options]") {
    const auto read_tone = [](std::string_view text) {
        const boost::json::value jv = boost::json::parse(text);
        json_reader r(jv, "greeter");
        reader_test_tone t = reader_test_tone::plain;
        r.choice("tone", t,
                 {{"plain", reader_test_tone::plain},
                  {"formal", reader_test_tone::formal},
                  {"curt", reader_test_tone::curt}})
            .reject_unknown_keys();
        return t;
    };
    CHECK(read_tone(R"({"tone": "formal"})") == reader_test_tone::formal);
    CHECK(read_tone(R"({})") == reader_test_tone::plain);             // absent: the default stays
    CHECK(read_tone(R"({"tone": null})") == reader_test_tone::plain); // null counts as absent
    CHECK_THROWS_WITH(read_tone(R"({"tone": "loud"})"),
                      "greeter.tone: expected \"plain\", \"formal\" or \"curt\", got \"loud\"");
    CHECK_THROWS_WITH(read_tone(R"({"tone": 3})"), "greeter.tone: expected a string, got 3");
    CHECK_THROWS_AS(read_tone(R"({"tone": "loud"})"), json_error);

    CHECK(agentware::json_choose("k", "b", {agentware::json_choice_of<int>{"a", 1}, {"b", 2}}) == 2);
    CHECK_THROWS_WITH(agentware::json_choose("k", "c", {agentware::json_choice_of<int>{"a", 1}, {"b", 2}}),
                      "k: expected \"a\" or \"b\", got \"c\"");
    CHECK_NOTHROW(agentware::json_check_choice("k", "only", {"only"}));
    CHECK_THROWS_WITH(agentware::json_check_choice("k", "other", {"only"}),
                      "k: expected \"only\", got \"other\"");
}
