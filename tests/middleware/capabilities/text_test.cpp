// text_tools: head, tail and diff of the working directory's files.
#include <agentware/middleware/capabilities/text.hpp>

#include "../capability_support.hpp"

#include <catch2/catch.hpp>

using namespace capabilities_test;

TEST_CASE("text_tools: head, tail and diff", "[middleware][capabilities]") {
    capability_dir d;
    text_tools_options o;
    o.root_dir = d.root.string();
    text_tools t(o);
    CHECK(run_tool(t.tools(), "head", R"({"file_path": "notes.txt", "lines": 2})").text() == "one\ntwo");
    CHECK(run_tool(t.tools(), "tail", R"({"file_path": "notes.txt", "lines": 2})").text() == "four\nfive");
    CHECK(run_tool(t.tools(), "tail", R"({"file_path": "notes.txt"})").text() ==
          "one\ntwo\nthree\nfour\nfive");
    CHECK(run_tool(t.tools(), "head", R"({"file_path": "none.txt"})").text() ==
          "Error: File 'none.txt' not found");
    CHECK(run_tool(t.tools(), "head", R"({"file_path": "../x"})").status == tool_status::error);
    const std::string diff =
        run_tool(t.tools(), "diff", R"({"file_a": "notes.txt", "file_b": "notes2.txt"})").text();
    CHECK_THAT(diff, Catch::StartsWith("--- notes.txt\n+++ notes2.txt\n@@"));
    CHECK_THAT(diff, Catch::Contains("-three\n+THREE"));
    CHECK(run_tool(t.tools(), "diff", R"({"file_a": "notes.txt", "file_b": "notes.txt"})").text() ==
          "The files are identical.");
}
