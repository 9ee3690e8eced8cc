// tool_output (tool/tool.hpp): what a tool call produced.
#include <agentware/tool/tool.hpp>

#include <catch2/catch.hpp>

#include <string>

using namespace agentware;

TEST_CASE("a tool's output is made from its text, and an error output says so", "[tool][tool_output]") {
    const tool_output from_literal = "42";
    REQUIRE(from_literal.content.size() == 1);
    CHECK(from_literal.content[0].is_text());
    CHECK(from_literal.text() == "42");
    CHECK(from_literal.status == tool_status::ok);
    CHECK_FALSE(from_literal.end_run);

    const std::string kept = "kept";
    const tool_output from_string = kept;
    CHECK(from_string.text() == "kept");
    CHECK(kept == "kept");

    const tool_output error = tool_output::error("Error: the file does not exist");
    CHECK(error.status == tool_status::error);
    CHECK(error.text() == "Error: the file does not exist");

    tool_output several;
    several.content.emplace_back().text = "a";
    several.content.emplace_back().text = "b";
    CHECK(several.text() == "ab"); // the text blocks, joined
    CHECK(tool_output{}.text().empty());
}
