// skill_context: the field's merge rule (the last 8 skills, re-reads moved to the end, descriptions
// normalised).
#include <agentware/skills/context.hpp>

#include <catch2/catch.hpp>

#include <string>

using namespace agentware;

TEST_CASE("skill_context keeps the last 8 skills, a re-read moved to the end, descriptions normalised",
          "[skills]") {
    skill_context_field::value_type ctx;
    for (int i = 0; i < 10; ++i)
        skill_context_field::merge(ctx, {skill_entry{"s" + std::to_string(i), "/p/" + std::to_string(i),
                                                     "  many\n\n spaces\t here ", "t"}});
    REQUIRE(ctx.size() == 8);
    CHECK(ctx.front().name == "s2");
    CHECK(ctx.back().description == "many spaces here");
    skill_context_field::merge(ctx, {skill_entry{"s3", "/p/3", std::string(600, 'x'), "t2"}});
    REQUIRE(ctx.size() == 8);
    CHECK(ctx.back().path == "/p/3");
    CHECK(ctx.back().description.size() == 500);
    CHECK(ctx[0].name == "s2");
    CHECK(ctx[1].name == "s4");
}
