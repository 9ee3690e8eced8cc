// shell_tools: the guard, the working directory, timeouts and output caps; the
// JSON form of the options of every host capability (shell's denylist foremost).
#include <agentware/middleware/capabilities/shell.hpp>

#include "../capability_support.hpp"

#include <agentware/middleware/capabilities/git.hpp>
#include <agentware/middleware/capabilities/search.hpp>
#include <agentware/middleware/capabilities/text.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <chrono>
#include <string>
#include <string_view>

using namespace capabilities_test;

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
