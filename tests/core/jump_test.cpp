#include "trace.hpp"

#include <catch2/catch.hpp>

using agentware::hook_result;
using agentware::jump_to;
using strings = std::vector<std::string>;

namespace {
struct logs_model {
    void before_model(test::state& s) { s.trace.push_back("first"); }
    void after_model(test::state& s) { s.trace.push_back("first.after"); }
};
struct jumps_when_asked {
    hook_result next;
    hook_result before_model(test::state& s, test::runtime&) {
        s.trace.push_back("jumper");
        return next;
    }
    jump_to after_model(test::state& s, test::runtime&) {
        s.trace.push_back("jumper.after");
        return jump_to::model;
    }
};
struct last {
    void before_model(test::state& s) { s.trace.push_back("last"); }
    void after_model(test::state& s) { s.trace.push_back("last.after"); }
};
} // namespace

TEST_CASE("a hook that returns an empty hook_result lets the chain go on", "[pipeline][jump]") {
    agentware::pipeline<logs_model, jumps_when_asked, last> p;
    test::state s;
    test::runtime rt;
    CHECK_FALSE(p.before_model(s, rt).has_value());
    CHECK(s.trace == strings{"first", "jumper", "last"});
}

TEST_CASE("the first jump stops the rest of the chain and is returned", "[pipeline][jump]") {
    agentware::pipeline<logs_model, jumps_when_asked, last> p;
    p.slot<jumps_when_asked>().next = jump_to::end;
    test::state s;
    test::runtime rt;
    auto r = p.before_model(s, rt);
    REQUIRE(r.has_value());
    CHECK(*r == jump_to::end);
    CHECK(s.trace == strings{"first", "jumper"});
}

TEST_CASE("a jump in a reverse chain stops the middlewares listed before it", "[pipeline][jump]") {
    agentware::pipeline<logs_model, jumps_when_asked, last> p;
    test::state s;
    test::runtime rt;
    auto r = p.after_model(s, rt);
    REQUIRE(r == hook_result{jump_to::model});
    CHECK(s.trace == strings{"last.after", "jumper.after"});
}

TEST_CASE("jump targets have readable names", "[pipeline][jump]") {
    CHECK(agentware::to_string(jump_to::end) == "end");
    CHECK(agentware::to_string(jump_to::model) == "model");
    CHECK(agentware::to_string(jump_to::tools) == "tools");
}
