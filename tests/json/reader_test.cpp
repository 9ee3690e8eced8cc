// json_reader: null as the default, paths naming indexes, json_error's path
// within a parent, unknown keys.
#include <agentware/json/reader.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <cstdint>
#include <string>
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
