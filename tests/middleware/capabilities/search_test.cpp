// search_tools: grep, glob and tree in the working directory, nothing outside it.
#include <agentware/middleware/capabilities/search.hpp>

#include "../capability_support.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

using namespace capabilities_test;

TEST_CASE("search_tools: grep, glob and tree in the working directory", "[middleware][capabilities]") {
    capability_dir d;
    search_tools_options o;
    o.root_dir = d.root.string();
    search_tools s(o);
    CHECK(run_tool(s.tools(), "grep", R"({"pattern": "answer"})").text() ==
          "src/deep/util.cpp:1: int answer() { return 42; }\nsrc/main.cpp:2:     return answer();");
    CHECK(run_tool(s.tools(), "grep", R"({"pattern": "answer", "glob": "main.*"})").text() ==
          "src/main.cpp:2:     return answer();");
    CHECK(run_tool(s.tools(), "grep", R"({"pattern": "nowhere"})").text() == "No matches found");
    CHECK(run_tool(s.tools(), "glob", R"({"pattern": "**/*.cpp"})").text() ==
          "src/deep/util.cpp\nsrc/main.cpp");
    CHECK(run_tool(s.tools(), "glob", R"({"pattern": "*.md"})").text() == "No files found");
    CHECK(run_tool(s.tools(), "tree", R"({"max_depth": 2})").text() ==
          "./\n  notes.txt\n  notes2.txt\n  src/\n    deep/\n    main.cpp");

    // Nothing outside the working directory: "..", absolute paths, symlinks.
    for (std::string bad :
         {R"({"pattern": "secret", "path": ".."})", R"({"pattern": "secret", "path": "/etc"})"}) {
        auto r = run_tool(s.tools(), "grep", bad);
        CHECK(r.status == tool_status::error);
        CHECK_THAT(r.text(), Catch::EndsWith("is outside the working directory"));
    }
    fs::create_directory_symlink(d.outside(), d.root / "link");
    CHECK(run_tool(s.tools(), "grep", R"({"pattern": "secret"})").text() == "No matches found");
    CHECK(run_tool(s.tools(), "grep", R"({"pattern": "secret", "path": "link"})").status ==
          tool_status::error);
    CHECK(run_tool(s.tools(), "grep", R"({"pattern": "x", "path": "a\u0000b"})").text() ==
          "Error: the path contains a NUL byte");
    CHECK(run_tool(s.tools(), "grep", R"({"pattern": 3})").text() ==
          "Error: argument 'pattern' must be a string");

    o.max_results = 1;
    CHECK_THAT(run_tool(search_tools(o).tools(), "glob", R"({"pattern": "**/*.cpp"})").text(),
               Catch::EndsWith("[results truncated at 1; narrow the search]"));
    o.root_dir = (d.root / "missing").string();
    CHECK_THROWS_WITH(search_tools(o), Catch::Contains("is not a directory"));
}
