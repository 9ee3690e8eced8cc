// The host capabilities of the catalog: search_tools, text_tools, git_tools, shell_tools.
#include <agentware/middleware/git_tools.hpp>
#include <agentware/middleware/search_tools.hpp>
#include <agentware/middleware/shell_tools.hpp>
#include <agentware/middleware/text_tools.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_to.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace capabilities_test {

using namespace agentware;
namespace fs = std::filesystem;

struct capability_dir {
    fs::path root;
    capability_dir() {
        std::random_device rd;
        root = fs::temp_directory_path() / ("agentware-cap-" + std::to_string(rd()));
        fs::create_directories(root / "src" / "deep");
        write("src/main.cpp", "int main() {\n    return answer();\n}\n");
        write("src/deep/util.cpp", "int answer() { return 42; }\n");
        write("notes.txt", "one\ntwo\nthree\nfour\nfive\n");
        write("notes2.txt", "one\ntwo\nTHREE\nfour\nfive\n");
        fs::create_directories(root.parent_path() / (root.filename().string() + "-outside"));
        std::ofstream(root.parent_path() / (root.filename().string() + "-outside") / "secret.txt")
            << "secret answer\n";
    }
    ~capability_dir() {
        std::error_code ec;
        fs::remove_all(root, ec);
        fs::remove_all(root.parent_path() / (root.filename().string() + "-outside"), ec);
    }
    void write(const std::string& rel, const std::string& text) const { std::ofstream(root / rel) << text; }
    fs::path outside() const { return root.parent_path() / (root.filename().string() + "-outside"); }
};

inline tool_output run_tool(const std::vector<std::shared_ptr<tool_interface>>& tools, std::string_view name,
                            std::string_view args) {
    for (const auto& t : tools)
        if (t->schema().name == name) return t->call(boost::json::parse(args).as_object(), tool_runtime{});
    FAIL("no tool " << name);
    return {};
}

} // namespace capabilities_test

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

TEST_CASE("shell_tools: the guard refuses, the rest runs in the working directory",
          "[middleware][capabilities]") {
    capability_dir d;
    shell_tools_options o;
    o.root_dir = d.root.string();
    shell_tools sh(o);
    auto r = run_tool(sh.tools(), "shell", R"({"command": "cat notes.txt | head -1; exit 3"})");
    CHECK(r.text() == "one\n[exit code 3]");
    CHECK(r.metadata.at("exit_code") == 3);
    for (std::string bad :
         {"rm -rf /", "rm -fr ~", "sudo ls", "mkfs.ext4 /dev/sda1", "dd if=/dev/zero of=/dev/sda",
          ":(){ :|:& };:", "shutdown -h now", "git push --force origin main"}) {
        boost::json::object args{{"command", bad}};
        auto refused = sh.tools()[0]->call(args, tool_runtime{});
        CHECK(refused.status == tool_status::error);
        CHECK_THAT(refused.text(), Catch::StartsWith("Error: the shell guard refused this command ("));
    }
    CHECK(run_tool(sh.tools(), "shell", R"({"command": "rm -rf build"})").text() == "[exit code 0]");
    o.timeout = std::chrono::seconds(1);
    auto slow = run_tool(shell_tools(o).tools(), "shell", R"({"command": "sleep 5"})");
    CHECK(slow.status == tool_status::error);
    CHECK(slow.text() == "Error: the command timed out after 1 seconds");
    CHECK(run_tool(sh.tools(), "shell", R"({"command": "true", "timeout": 100000})").text() ==
          "Error: timeout must be between 1 and 300 seconds");
    o.max_output_chars = 200;
    auto big = run_tool(shell_tools(o).tools(), "shell", R"({"command": "seq 1 10000"})").text();
    CHECK(big.size() < 260);
    CHECK_THAT(big, Catch::Contains("middle truncated"));
}

TEST_CASE("capability options from JSON", "[middleware][capabilities][options]") {
    auto s = boost::json::value_to<shell_tools_options>(boost::json::parse(
        R"({"root_dir": "/tmp", "timeout": 5, "denylist": [{"pattern": "\\bcurl\\b", "reason": "no network"}]})"));
    CHECK(s.timeout == std::chrono::seconds(5));
    REQUIRE(s.denylist.size() == 1);
    CHECK(shell_guard(s.denylist).refuses("curl x") == "no network");
    CHECK_FALSE(shell_guard(s.denylist).refuses("ls"));
    auto error_of = [](std::string_view json) {
        try {
            (void)boost::json::value_to<shell_tools_options>(boost::json::parse(json));
        } catch (const json_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK_THAT(error_of(R"({"denylist": [{"pattern": "(", "reason": "x"}]})"),
               Catch::StartsWith("shell.denylist[0].pattern: not a regular expression"));
    CHECK_THAT(error_of(R"({"timout": 1})"), Catch::StartsWith("shell.timout: unknown key"));
    auto g = boost::json::value_to<git_tools_options>(boost::json::value_from(git_tools_options{}));
    CHECK(g == git_tools_options{});
    auto t = boost::json::value_to<text_tools_options>(boost::json::parse(R"({"default_lines": 3})"));
    CHECK(t.default_lines == 3);
    auto se = boost::json::value_to<search_tools_options>(boost::json::parse(R"({"max_results": 7})"));
    CHECK(se.max_results == 7);
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
