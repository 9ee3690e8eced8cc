// git_tools: read-only git in the working directory, and a policy leaving out some of its tools.
#include <agentware/middleware/capabilities/git.hpp>

#include "../capability_support.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <vector>

using namespace capabilities_test;

TEST_CASE("git_tools: read-only git in the working directory", "[middleware][capabilities]") {
    if (detail::find_program("git").empty()) return;
    capability_dir d;
    const std::string q = "'" + d.root.string() + "'";
    REQUIRE(std::system(("git -C " + q + " init -q && git -C " + q +
                         " -c user.name=T -c user.email=t@x add -A && git -C " + q +
                         " -c user.name=T -c user.email=t@x commit -q -m 'first commit'")
                            .c_str()) == 0);
    d.write("notes.txt", "changed\n");
    git_tools_options o;
    o.root_dir = d.root.string();
    git_tools g(o);
    CHECK_THAT(run_tool(g.tools(), "git_status", "{}").text(), Catch::Contains(" M notes.txt"));
    CHECK_THAT(run_tool(g.tools(), "git_diff", R"({"path": "notes.txt"})").text(),
               Catch::Contains("+changed"));
    CHECK_THAT(run_tool(g.tools(), "git_log", "{}").text(), Catch::Contains("first commit"));
    CHECK_THAT(run_tool(g.tools(), "git_show", "{}").text(), Catch::Contains("src/main.cpp"));
    CHECK_THAT(run_tool(g.tools(), "git_blame", R"({"file_path": "src/main.cpp"})").text(),
               Catch::Contains("return answer();"));
    // No options smuggled in as a revision, no path outside.
    auto r = run_tool(g.tools(), "git_show", R"({"revision": "--output=/tmp/x"})");
    CHECK(r.status == tool_status::error);
    CHECK(r.text() == "Error: '--output=/tmp/x' is not a revision");
    CHECK(run_tool(g.tools(), "git_blame", R"({"file_path": "../../etc/passwd"})").status ==
          tool_status::error);
    CHECK(run_tool(g.tools(), "git_show", R"({"revision": "nosuchrev"})").status == tool_status::error);
}

TEST_CASE("a capability leaves out the tools a policy switches off", "[middleware][capabilities]") {
    capability_dir d;
    git_tools_options o;
    o.root_dir = d.root.string();
    git_tools g(o);
    g.drop_tools(std::set<std::string, std::less<>>{"git_blame", "git_show"});
    std::vector<std::string> names;
    for (const auto& t : g.tools())
        names.push_back(t->schema().name);
    CHECK(names == std::vector<std::string>{"git_status", "git_diff", "git_log"});
}
