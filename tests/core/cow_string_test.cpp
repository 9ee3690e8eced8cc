// core/cow_string.hpp: a string borrowed until it is changed, read like a std::string.
#include <agentware/core/cow_string.hpp>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <sstream>
#include <string>
#include <string_view>

using namespace agentware;

TEST_CASE("cow_string borrows a prompt until it is changed, and reads like a string", "[agent][requests]") {
    const std::string prompt(4096, 'p');
    cow_string s(prompt);
    CHECK(s.borrowed());
    CHECK(s.data() == prompt.data());
    CHECK(s == prompt);
    cow_string copy = s; // copying a request copies no text
    CHECK(copy.data() == prompt.data());
    s += " and more";
    CHECK_FALSE(s.borrowed());
    CHECK(s.size() == prompt.size() + 9);
    CHECK(std::string_view(s).ends_with("p and more"));
    CHECK(copy.data() == prompt.data());
    cow_string assigned;
    CHECK(assigned.empty());
    assigned = prompt; // assigning copies: the string assigned may go away
    CHECK_FALSE(assigned.borrowed());
    CHECK(assigned.data() != prompt.data());
    CHECK(assigned == prompt);
    assigned = "short";
    CHECK(assigned == "short");
    CHECK("short" == assigned);
    CHECK(assigned < "shorter");
    const std::string& as_string = assigned;
    CHECK(as_string.size() == 5);
    CHECK(fmt::format("[{}]", assigned) == "[short]"); // formats as its text
    std::ostringstream os;
    os << assigned;
    CHECK(os.str() == "short");
    CHECK(assigned == cow_string("short"));
    CHECK(assigned < cow_string("shorter"));
    assigned = {}; // clears, as it did when the prompt was a std::string
    CHECK(assigned.empty());
    assigned = "again";
    assigned.clear();
    CHECK(assigned.empty());
    cow_string from = std::string("moved");
    cow_string to = std::move(from);
    CHECK(to == "moved");
    CHECK(from.empty()); // NOLINT: a moved-from cow reads empty, never the value it handed over
    CHECK_FALSE(from.borrowed());
}
