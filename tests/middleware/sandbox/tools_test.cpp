// The sandbox's tools: lazy acquisition, file tools, hostile paths, host bash
// (timeouts, output caps), malformed arguments, DeerFlow's texts, the settings.
#include <agentware/middleware/sandbox/tools.hpp>

#include "../deerflow_support.hpp"

#include <agentware/filesystem/detail/file_search.hpp>
#include <agentware/message/detail/output_limits.hpp>
#include <agentware/message/detail/text.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

using namespace agentware;
namespace fs = std::filesystem;
using dftest::sandbox_env;

TEST_CASE("the first sandbox tool call acquires the thread's sandbox, later calls reuse it",
          "[middleware][sandbox]") {
    sandbox_env env;
    auto first = env.call("write_file",
                          R"({"description":"d","path":"/mnt/user-data/workspace/a.txt","content":"x"})");
    CHECK(first.text() == "OK");
    REQUIRE(first.update.fields.contains("sandbox"));
    CHECK(env.state.get<sandbox_field>()->sandbox_id == "local:default:t1");
    auto second = env.call("read_file", R"({"description":"d","path":"/mnt/user-data/workspace/a.txt"})");
    CHECK(second.text() == "x");
    CHECK(second.update.empty());
}

TEST_CASE("write_file and read_file map virtual paths both ways", "[middleware][sandbox][files]") {
    sandbox_env env;
    CHECK(env.text("write_file", R"({"description":"d","path":"/mnt/user-data/outputs/sub/dir/r.py",)"
                                 R"("content":"open('/mnt/user-data/uploads/in.csv')\n"})") == "OK");
    const fs::path host = env.outputs() / "sub" / "dir" / "r.py";
    CHECK(dftest::read(host) == "open('" + (env.uploads() / "in.csv").string() + "')\n"); // host path on disk
    CHECK(env.text("read_file", R"({"description":"d","path":"/mnt/user-data/outputs/sub/dir/r.py"})") ==
          "open('/mnt/user-data/uploads/in.csv')\n"); // virtual again for the model
    CHECK(
        env.text(
            "write_file",
            R"({"description":"d","path":"/mnt/user-data/outputs/sub/dir/r.py","content":"#end\n","append":true})") ==
        "OK");
    CHECK(dftest::read(host).ends_with("')\n#end\n"));
}

TEST_CASE("read_file reads line ranges and reports every edge as the reference words it",
          "[middleware][sandbox][files]") {
    sandbox_env env;
    dftest::write(env.ws() / "f.txt", "one\ntwo\nthree\nfour");
    dftest::write(env.ws() / "empty.txt", "");
    dftest::write(env.ws() / "bin.dat", std::string("PK\x03\x04\0\0", 6));
    fs::create_directories(env.ws() / "dir");
    auto rf = [&](std::string extra) {
        return env.text("read_file",
                        R"({"description":"d","path":"/mnt/user-data/workspace/f.txt")" + extra + "}");
    };
    CHECK(rf("") == "one\ntwo\nthree\nfour");
    CHECK(rf(R"(,"start_line":2,"end_line":3)") == "two\nthree\n");
    CHECK(rf(R"(,"start_line":3)") == "three\nfour");
    CHECK(rf(R"(,"end_line":1)") == "one\n");
    CHECK(rf(R"(,"start_line":"2","end_line":"2")") == "two\n");
    CHECK(rf(R"(,"end_line":99)") == "one\ntwo\nthree\nfour");
    CHECK(rf(R"(,"start_line":0)") == "(start_line must be >= 1)");
    CHECK(rf(R"(,"end_line":0)") == "(end_line must be >= 1)");
    CHECK(rf(R"(,"start_line":3,"end_line":2)") == "(start_line > end_line — no lines in range)");
    CHECK(rf(R"(,"start_line":9)") == "(start_line exceeds file length)");
    CHECK(rf(R"(,"start_line":"two")") == "Error: argument 'start_line' must be an integer");
    CHECK(env.text("read_file", R"({"description":"d","path":"/mnt/user-data/workspace/empty.txt"})") ==
          "(empty)");
    CHECK(env.text("read_file", R"({"description":"d","path":"/mnt/user-data/workspace/none.txt"})") ==
          "Error: File not found: /mnt/user-data/workspace/none.txt");
    CHECK(env.text("read_file", R"({"description":"d","path":"/mnt/user-data/workspace/dir"})") ==
          "Error: Path is a directory, not a file: /mnt/user-data/workspace/dir");
    CHECK(env.text("read_file", R"({"description":"d","path":"/mnt/user-data/workspace/bin.dat"})") ==
          "Error: cannot read '/mnt/user-data/workspace/bin.dat' as text — it appears to be a binary file "
          "(e.g. "
          ".xlsx, .pdf, or an image). read_file only supports UTF-8 text. Use bash with a suitable library "
          "instead "
          "(pandas/openpyxl for spreadsheets), or view_image for images.");
    auto missing = env.call("read_file", R"({"description":"d"})");
    CHECK(missing.text() == "Error: the required argument 'path' is missing");
    CHECK(missing.status == tool_status::error);
    CHECK(env.text("read_file", R"({"description":"d","path":42})") ==
          "Error: argument 'path' must be a string");
}

TEST_CASE("read_file and ls truncate long output with the reference's markers",
          "[middleware][sandbox][truncation]") {
    sandbox_options o;
    o.read_file_output_max_chars = 200;
    o.ls_output_max_chars = 150;
    sandbox_env env(o);
    dftest::write(env.ws() / "long.txt", std::string(1000, 'z'));
    const std::string out =
        env.text("read_file", R"({"description":"d","path":"/mnt/user-data/workspace/long.txt"})");
    // DeerFlow reserves room for the marker's longest form ("first 1000 of 1000"), 104 characters.
    const std::string marker = "\n... [truncated: showing first 96 of 1000 chars. Use start_line/end_line to "
                               "read a specific range] ...";
    CHECK(out == std::string(96, 'z') + marker);
    CHECK(detail::utf8_chars(out) == 198);
    for (int i = 0; i < 20; ++i)
        dftest::write(env.ws() / ("file" + std::to_string(i) + ".txt"), "");
    const std::string ls = env.text("ls", R"({"description":"d","path":"/mnt/user-data/workspace"})");
    CHECK_THAT(ls, Catch::Contains("chars. Use a more specific path to see fewer results] ..."));
    CHECK(detail::utf8_chars(ls) <= 150);
}

TEST_CASE("write_file on a name the file system refuses gives the system's reason",
          "[middleware][sandbox][files]") {
    sandbox_env env;
    const std::string path = "/mnt/user-data/workspace/" + std::string(300, 'n') + ".txt";
    const std::string out =
        env.call("write_file", boost::json::object{{"description", "d"}, {"path", path}, {"content", "x"}})
            .text();
    // DeerFlow's open() raises OSError (errno 36); its generic handler words it.
    CHECK(out == "Error: Failed to write file '" + path + "': OSError: File name too long");
}

TEST_CASE("write_file refuses oversized single writes but not appends", "[middleware][sandbox][files]") {
    sandbox_env env;
    boost::json::object args{{"description", "d"},
                             {"path", "/mnt/user-data/workspace/big.md"},
                             {"content", std::string(80 * 1024 + 1, 'a')}};
    CHECK(env.call("write_file", args).text() == "Error: write_file content (81921 bytes) exceeds the "
                                                 "81920-byte single-call limit. Split the content into "
                                                 "smaller pieces: either (a) write the first section now, "
                                                 "then use `str_replace` for further edits, or (b) "
                                                 "call write_file again with append=True carrying the next "
                                                 "section. See SIZE POLICY in the tool docstring "
                                                 "or issue #3189 for the rationale.");
    CHECK_FALSE(fs::exists(env.ws() / "big.md"));
    args["append"] = true;
    CHECK(env.call("write_file", args).text() == "OK");
    fs::create_directories(env.ws() / "adir");
    CHECK(env.text("write_file",
                   R"({"description":"d","path":"/mnt/user-data/workspace/adir","content":"x"})") ==
          "Error: Path is a directory, not a file: /mnt/user-data/workspace/adir");
}

TEST_CASE("str_replace replaces the first or every occurrence", "[middleware][sandbox][files]") {
    sandbox_env env;
    dftest::write(env.ws() / "s.txt", "a-a-a");
    auto sr = [&](std::string extra) {
        return env.text("str_replace",
                        R"({"description":"d","path":"/mnt/user-data/workspace/s.txt")" + extra + "}");
    };
    CHECK(sr(R"(,"old_str":"a","new_str":"b")") == "OK");
    CHECK(dftest::read(env.ws() / "s.txt") == "b-a-a");
    CHECK(sr(R"(,"old_str":"a","new_str":"c","replace_all":true)") == "OK");
    CHECK(dftest::read(env.ws() / "s.txt") == "b-c-c");
    CHECK(sr(R"(,"old_str":"zzz","new_str":"c")") ==
          "Error: String to replace not found in file: /mnt/user-data/workspace/s.txt");
    CHECK(sr(R"(,"old_str":"","new_str":"c")") == "OK");
    CHECK(dftest::read(env.ws() / "s.txt") == "b-c-c");
    CHECK(sr(R"(,"old_str":"b","new_str":"c","replace_all":"yes")") ==
          "Error: argument 'replace_all' must be a boolean");
    CHECK(
        env.text(
            "str_replace",
            R"({"description":"d","path":"/mnt/user-data/workspace/no.txt","old_str":"a","new_str":"b"})") ==
        "Error: File not found: /mnt/user-data/workspace/no.txt");
}

TEST_CASE("ls lists two levels, sorted, directories marked, noise skipped", "[middleware][sandbox][search]") {
    sandbox_env env;
    dftest::write(env.ws() / "b.txt", "");
    dftest::write(env.ws() / "a" / "x.md", "");
    dftest::write(env.ws() / "a" / "deep" / "too_deep.txt", "");
    dftest::write(env.ws() / ".git" / "HEAD", "");
    dftest::write(env.ws() / "node_modules" / "m.js", "");
    dftest::write(env.ws() / "run.log", "");
    CHECK(env.text("ls", R"({"description":"d","path":"/mnt/user-data/workspace"})") ==
          "/mnt/user-data/workspace/a/\n/mnt/user-data/workspace/a/deep/\n/mnt/user-data/workspace/a/x.md\n"
          "/mnt/user-data/workspace/b.txt");
    CHECK(env.text("ls", R"({"description":"d","path":"/mnt/user-data/outputs"})") == "(empty)");
    CHECK(env.text("ls", R"({"description":"d","path":"/mnt/user-data/workspace/nope"})") ==
          "Error: Directory not found: /mnt/user-data/workspace/nope");
}

TEST_CASE("glob matches across directories and reports truncation", "[middleware][sandbox][search]") {
    sandbox_env env;
    dftest::write(env.ws() / "r.md", "");
    dftest::write(env.ws() / "d" / "s.md", "");
    dftest::write(env.ws() / "d" / "t.txt", "");
    CHECK(env.text("glob", R"({"description":"d","pattern":"**/*.md","path":"/mnt/user-data/workspace"})") ==
          "Found 2 paths under /mnt/user-data/workspace\n1. /mnt/user-data/workspace/d/s.md\n2. "
          "/mnt/user-data/workspace/r.md");
    CHECK(env.text("glob", R"({"description":"d","pattern":"*.md","path":"/mnt/user-data/workspace"})") ==
          "Found 1 paths under /mnt/user-data/workspace\n1. /mnt/user-data/workspace/r.md");
    CHECK(
        env.text(
            "glob",
            R"({"description":"d","pattern":"**/*","path":"/mnt/user-data/workspace","max_results":1})") ==
        "Found 1 paths under /mnt/user-data/workspace (showing first 1)\n1. /mnt/user-data/workspace/d/s.md\n"
        "Results truncated. Narrow the path or pattern to see fewer matches.");
    CHECK(env.text(
              "glob",
              R"({"description":"d","pattern":"*","path":"/mnt/user-data/workspace","include_dirs":true})") ==
          "Found 2 paths under /mnt/user-data/workspace\n1. /mnt/user-data/workspace/d\n2. "
          "/mnt/user-data/workspace/r.md");
    CHECK(env.text("glob", R"({"description":"d","pattern":"*.pdf","path":"/mnt/user-data/workspace"})") ==
          "No files matched under /mnt/user-data/workspace");
}

TEST_CASE("grep finds lines by regex or literal text, filtered and bounded",
          "[middleware][sandbox][search]") {
    sandbox_env env;
    dftest::write(env.ws() / "a.py", "Revenue = 1\nx = 2\n");
    dftest::write(env.ws() / "b.txt", "revenue up\n" + std::string(300, 'r') + "evenue\n");
    dftest::write(env.ws() / "c.bin", std::string("revenue\0", 8));
    CHECK(env.text(
              "grep",
              R"({"description":"d","pattern":"rev.nue","path":"/mnt/user-data/workspace","glob":"*.py"})") ==
          "Found 1 matches under /mnt/user-data/workspace\n/mnt/user-data/workspace/a.py:1: Revenue = 1");
    CHECK(
        env.text(
            "grep",
            R"({"description":"d","pattern":"Revenue","path":"/mnt/user-data/workspace","case_sensitive":true})") ==
        "Found 1 matches under /mnt/user-data/workspace\n/mnt/user-data/workspace/a.py:1: Revenue = 1");
    const std::string all =
        env.text("grep", R"({"description":"d","pattern":"revenue","path":"/mnt/user-data/workspace"})");
    CHECK_THAT(all, Catch::StartsWith("Found 3 matches under /mnt/user-data/workspace\n"));
    CHECK_THAT(all, Catch::Contains("/mnt/user-data/workspace/b.txt:2: " + std::string(200, 'r') +
                                    "...")); // line cut at 200
    CHECK_THAT(all, !Catch::Contains("c.bin"));
    CHECK(env.text("grep",
                   R"({"description":"d","pattern":"(","path":"/mnt/user-data/workspace","literal":true})") ==
          "No matches found under /mnt/user-data/workspace");
    CHECK_THAT(env.text("grep", R"({"description":"d","pattern":"(","path":"/mnt/user-data/workspace"})"),
               Catch::StartsWith("Error: Invalid regex pattern: "));
    CHECK(
        env.text(
            "grep",
            R"({"description":"d","pattern":"=","path":"/mnt/user-data/workspace/a.py","max_results":1})") ==
        "Found 1 matches under /mnt/user-data/workspace/a.py (showing first "
        "1)\n/mnt/user-data/workspace/a.py:1: "
        "Revenue = 1\nResults truncated. Narrow the path or add a glob filter.");
}

TEST_CASE("present_files records output files as artifacts and refuses the rest",
          "[middleware][sandbox][artifacts]") {
    sandbox_env env;
    dftest::write(env.outputs() / "r.md", "#");
    dftest::write(env.outputs() / "d" / "c.png", "x");
    dftest::write(env.ws() / "w.txt", "x");
    auto ok = env.call("present_files",
                       R"({"filepaths":["/mnt/user-data/outputs/r.md","/mnt/user-data/outputs/d/c.png"]})");
    CHECK(ok.text() == "Successfully presented files");
    CHECK(ok.status == tool_status::ok);
    CHECK(env.text("present_files",
                   boost::json::serialize(boost::json::object{
                       {"filepaths", boost::json::array{(env.outputs() / "r.md").string()}}})) ==
          "Successfully presented files"); // a host path inside outputs is normalised
    CHECK(env.state.get<artifacts_field>() ==
          std::vector<std::string>{"/mnt/user-data/outputs/r.md", "/mnt/user-data/outputs/d/c.png"});
    for (auto bad : {"/mnt/user-data/workspace/w.txt", "/mnt/user-data/outputs/../workspace/w.txt",
                     "/etc/passwd", "relative.md", "/mnt/user-data/outputs"})
        CHECK(env.text("present_files",
                       boost::json::serialize(boost::json::object{{"filepaths", boost::json::array{bad}}})) ==
              std::string("Error: Only files in /mnt/user-data/outputs can be presented: ") + bad);
    CHECK(env.state.get<artifacts_field>().size() == 2);
    env.state.get<thread_data_field>().reset();
    CHECK(env.text("present_files", R"({"filepaths":["/mnt/user-data/outputs/r.md"]})") ==
          "Error: Thread outputs path is not available in runtime state");
}

TEST_CASE("no path a model sends reads or writes outside the thread's directories",
          "[middleware][sandbox][paths][security]") {
    sandbox_env env;
    const fs::path secret = env.outside() / "secret.txt";
    dftest::write(secret, "TOP SECRET");
    dftest::write(env.ws() / "ok.txt", "fine");
    fs::create_symlink(secret, env.ws() / "link_to_secret");
    fs::create_symlink(env.outside(), env.ws() / "linkdir");
    fs::create_symlink(env.outside() / "created_by_attack.txt", env.ws() / "dangling");
    fs::create_directories(env.outputs());
    fs::create_symlink(env.ws() / "ok.txt", env.outputs() / "inside_link"); // stays inside: allowed

    // Every refusal is the tool's permission text with the path as sent
    // (DeerFlow's tools do not tell the model why).
    auto read = [&](const std::string& p) {
        return env.call("read_file", boost::json::object{{"description", "d"}, {"path", p}}).text();
    };
    auto write = [&](const std::string& p) {
        return env
            .call("write_file", boost::json::object{{"description", "d"}, {"path", p}, {"content", "pwned"}})
            .text();
    };
    auto read_denied = [](const std::string& p) { return "Error: Permission denied reading file: " + p; };
    auto write_denied = [](const std::string& p) { return "Error: Permission denied writing to file: " + p; };

    for (std::string p :
         {std::string("/mnt/user-data/workspace/../../../outside/secret.txt"),
          std::string("/mnt/user-data/workspace/.."),
          std::string("/mnt/user-data/workspace\\..\\..\\outside\\secret.txt"), secret.string(),
          std::string("/etc/passwd"), std::string("workspace/ok.txt"), std::string("/mnt/user-data"),
          std::string("/mnt/user-data/"), std::string("/mnt/user-data/other/x"),
          std::string("/mnt/user-datax/workspace/ok.txt"),
          std::string("/mnt/user-data/workspace/link_to_secret"),
          std::string("/mnt/user-data/workspace/linkdir/secret.txt"),
          std::string("/mnt/user-data/workspace/ok.txt\0/../../x", 40), std::string("/mnt/skills/public/x")})
        CHECK(read(p) == read_denied(p));
    CHECK(read("/mnt/user-data/outputs/inside_link") == "fine");
    CHECK_THAT(read("/mnt/user-data/workspace/" + std::string(300, 'n')), Catch::StartsWith("Error: "));
    std::string deep = "/mnt/user-data/workspace";
    for (int i = 0; i < 200; ++i)
        deep += "/" + std::string(40, 'd');
    CHECK_THAT(read(deep), Catch::StartsWith("Error: "));

    for (std::string p :
         {"/mnt/user-data/workspace/../../../outside/new.txt", "/mnt/user-data/workspace/link_to_secret",
          "/mnt/user-data/workspace/linkdir/secret.txt", "/mnt/user-data/workspace/linkdir/new.txt",
          "/mnt/user-data/workspace/dangling", "/mnt/skills/public/x", "/mnt/acp-workspace/x"})
        CHECK(write(p) == write_denied(p));
    CHECK_THAT(write("/mnt/user-data/workspace/" + std::string(300, 'n')), Catch::StartsWith("Error: "));
    CHECK(
        env.text(
            "str_replace",
            R"({"description":"d","path":"/mnt/user-data/workspace/link_to_secret","old_str":"TOP","new_str":"x"})") ==
        "Error: Permission denied accessing file: /mnt/user-data/workspace/link_to_secret");

    // Listing tools do not follow links out either.
    CHECK(env.text("ls", R"({"description":"d","path":"/mnt/user-data/workspace/linkdir"})") ==
          "Error: Permission denied: /mnt/user-data/workspace/linkdir");
    const std::string ls = env.text("ls", R"({"description":"d","path":"/mnt/user-data/workspace"})");
    CHECK_THAT(ls, !Catch::Contains("secret") && !Catch::Contains("linkdir") && !Catch::Contains("dangling"));
    CHECK(env.text("grep", R"({"description":"d","pattern":"SECRET","path":"/mnt/user-data/workspace"})") ==
          "No matches found under /mnt/user-data/workspace");
    CHECK(
        env.text("glob", R"({"description":"d","pattern":"**/secret*","path":"/mnt/user-data/workspace"})") ==
        "No files matched under /mnt/user-data/workspace");

    // Nothing outside changed.
    CHECK(dftest::read(secret) == "TOP SECRET");
    std::vector<std::string> outside_files;
    for (auto& e : fs::directory_iterator(env.outside()))
        outside_files.push_back(e.path().filename().string());
    CHECK(outside_files == std::vector<std::string>{"secret.txt"});
}

TEST_CASE("sandbox tools without thread data report it", "[middleware][sandbox][paths]") {
    sandbox_env env;
    env.state.get<thread_data_field>().reset();
    CHECK(env.text("ls", R"({"description":"d","path":"/mnt/user-data/workspace"})") ==
          "Error: Thread data not available for local sandbox");
}

// ---- bash ---------------------------------------------------------------------------

TEST_CASE("bash is refused unless host bash is allowed", "[middleware][sandbox][bash]") {
    sandbox_env env;
    CHECK(
        env.text("bash", R"({"description":"d","command":"echo hi"})") ==
        "Error: Host bash execution is disabled for LocalSandboxProvider because it is not a secure sandbox "
        "boundary. Switch to the isolated sandbox (sandbox.use: isolated) for isolated bash access, or set "
        "sandbox.allow_host_bash: true only in a fully trusted local environment.");
    std::vector<std::string> names;
    for (auto& t : sandbox().tools())
        names.push_back(t->schema().name);
    CHECK(names == std::vector<std::string>{"ls", "read_file", "write_file", "str_replace", "glob", "grep",
                                            "present_files"});
    sandbox_options o;
    o.allow_host_bash = true;
    CHECK(sandbox(o).tools().front()->schema().name == "bash");
}

namespace {
sandbox_options host_bash(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    sandbox_options o;
    o.allow_host_bash = true;
    o.bash_command_timeout = timeout;
    return o;
}
std::string bash(sandbox_env& env, std::string command) {
    return env.call("bash", boost::json::object{{"description", "d"}, {"command", command}}).text();
}
} // namespace

TEST_CASE("bash runs in the workspace, with virtual paths both ways", "[middleware][sandbox][bash]") {
    sandbox_env env(host_bash());
    CHECK(bash(env, "pwd") == "/mnt/user-data/workspace\n");
    CHECK(bash(env, "echo hi > /mnt/user-data/outputs/o.txt && cat /mnt/user-data/outputs/o.txt") == "hi\n");
    CHECK(dftest::read(env.outputs() / "o.txt") == "hi\n");
    CHECK(bash(env, "true") == "(no output)");
    CHECK(bash(env, "echo out; echo err >&2; exit 3") == "out\n\nStd Error:\nerr\n\nExit Code: 3");
    CHECK(bash(env, "echo err >&2") == "err\n");
    CHECK(bash(env, "ls /mnt/user-data/workspace/../..") == "Error: Access denied: path traversal detected");
    CHECK(bash(env, "cat /etc/passwd /tmp/x; ls /") ==
          "Error: Unsafe absolute paths in command: /, /etc/passwd, /tmp/x. Use paths under /mnt/user-data");
    CHECK(bash(env, "cat file:///etc/passwd") ==
          "Error: Unsafe file:// URL in command. Use paths under /mnt/user-data");
    CHECK(bash(env, "cd ~ && ls") ==
          "Error: Unsafe directory change in command: cd ~. Use paths under /mnt/user-data");
    CHECK(bash(env, "echo https://example.com/a/b | /usr/bin/tr a A") == "https://exAmple.com/A/b\n");
    CHECK(env.call("bash", R"({"description":"d"})").text() ==
          "Error: the required argument 'command' is missing");
}

TEST_CASE("bash output is capped per stream and middle-truncated",
          "[middleware][sandbox][bash][truncation]") {
    SECTION("middle truncation at the character limit") {
        sandbox_env env(host_bash());
        const std::string out =
            bash(env, "head -c 30000 /dev/zero | tr '\\0' a; echo; head -c 30000 /dev/zero | tr '\\0' b");
        CHECK(detail::utf8_chars(out) == 20000);
        // 60001 characters: 49 for the marker, 9975 head, 9976 tail, 40050 skipped.
        CHECK(out == std::string(9975, 'a') + "\n... [middle truncated: 40050 chars skipped] ...\n" +
                         std::string(9976, 'b'));
    }
    SECTION("capture cap") {
        auto o = host_bash();
        o.bash_capture_max_bytes = 1000;
        o.bash_output_max_chars = 0;
        sandbox_env env(o);
        CHECK(bash(env, "head -c 5000000 /dev/zero | tr '\\0' x") ==
              std::string(1000, 'x') +
                  "\n... [output truncated after 1000 of 5000000 bytes; remaining output discarded] ...");
    }
}

namespace {
// A process is gone when /proc has no entry or only a zombie awaiting its reaper.
bool process_alive(long pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return false;
    std::string all((std::istreambuf_iterator<char>(stat)), {});
    auto close = all.rfind(')');
    return close != std::string::npos && close + 2 < all.size() && all[close + 2] != 'Z';
}
} // namespace

TEST_CASE("a hanging command is killed with its whole process group",
          "[middleware][sandbox][bash][timeout]") {
    sandbox_env env(host_bash(std::chrono::seconds(1)));
    const auto start = std::chrono::steady_clock::now();
    const std::string out =
        bash(env, "echo $$ > /mnt/user-data/workspace/pids; sleep 60 & echo $! >> "
                  "/mnt/user-data/workspace/pids; (sleep 61; echo never) & echo started; sleep 62");
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    CHECK(out == "started\n\nCommand timed out after 1 second and was terminated. To run a long-lived "
                 "process such as a web "
                 "server, start it in the background and redirect its output, e.g. `your-command > "
                 "/mnt/user-data/workspace/server.log 2>&1 &`.");
    std::ifstream pids(env.ws() / "pids");
    std::vector<long> ids;
    for (long p; pids >> p;)
        ids.push_back(p);
    REQUIRE(ids.size() == 2);
    bool any_alive = true;
    for (int i = 0; i < 50 && any_alive; ++i) {
        any_alive = false;
        for (long p : ids)
            any_alive = any_alive || process_alive(p);
        if (any_alive) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK_FALSE(any_alive);
}

TEST_CASE("malformed tool arguments from the model become error messages", "[middleware][sandbox][errors]") {
    dftest::temp_dir base;
    scripted_model model(
        {test::calls({test::call("c1", "read_file", R"({"description":"d","path":7})"),
                      test::call("c2", "write_file", R"({"path":"/mnt/user-data/workspace/x"})")}),
         ai_message("ok")});
    auto a = make_agent(model, tool_set{}, thread_data({base.path.string(), true}), sandbox());
    auto r = a.invoke("x");
    REQUIRE(r.ok());
    const auto& ms = r.state.messages;
    CHECK(ms[2].is_error());
    CHECK_THAT(ms[2].text(), Catch::StartsWith("Error: invalid arguments for tool \"read_file\""));
    CHECK_THAT(ms[3].text(), Catch::StartsWith("Error: invalid arguments for tool \"write_file\""));
    CHECK_FALSE(fs::exists(base.path / "users" / "default" / "threads" / "default" / "user-data" /
                           "workspace" / "x"));
}

// ---- conformance with DeerFlow (issue 13) ------------------------------------------------

TEST_CASE("ls skips a symlink whose target leaves the listed directory, even inside the thread",
          "[middleware][sandbox][paths]") {
    sandbox_env env;
    dftest::write(env.ws() / "sub" / "here.txt", "x");
    dftest::write(env.ws() / "other.txt", "y");
    dftest::write(env.outputs() / "out.txt", "z");
    fs::create_symlink(env.ws() / "sub" / "here.txt", env.ws() / "sub" / "near");   // stays in sub
    fs::create_symlink(env.ws() / "other.txt", env.ws() / "sub" / "up");            // leaves sub
    fs::create_symlink(env.outputs() / "out.txt", env.ws() / "sub" / "to_outputs"); // leaves sub
    const std::string sub = env.text("ls", R"({"description":"d","path":"/mnt/user-data/workspace/sub"})");
    CHECK(sub == "/mnt/user-data/workspace/sub/here.txt\n/mnt/user-data/workspace/sub/near");
    // Listed from the workspace, `up` stays inside; `to_outputs` still leaves.
    const std::string ws = env.text("ls", R"({"description":"d","path":"/mnt/user-data/workspace"})");
    CHECK_THAT(ws, Catch::Contains("/mnt/user-data/workspace/sub/up") && !Catch::Contains("to_outputs"));
}

TEST_CASE("present_files accepts .. that stays in outputs and names a traversal as DeerFlow does",
          "[middleware][sandbox]") {
    sandbox_env env;
    dftest::write(env.outputs() / "x.md", "#");
    CHECK(env.text("present_files", R"({"filepaths":["/mnt/user-data/outputs/sub/../x.md"]})") ==
          "Successfully presented files");
    CHECK(env.state.get<artifacts_field>() == std::vector<std::string>{"/mnt/user-data/outputs/x.md"});
    CHECK(env.text("present_files", R"({"filepaths":["/mnt/user-data/../../etc/passwd"]})") ==
          "Error: Access denied: path traversal detected");
    CHECK(env.text("present_files", R"({"filepaths":["/mnt/user-data/workspace/../../x"]})") ==
          "Error: Access denied: path traversal detected");
}

TEST_CASE("read_file truncation reserves the marker's longest form, as DeerFlow",
          "[middleware][sandbox][truncation]") {
    for (std::size_t cap : {std::size_t(10), std::size_t(50), std::size_t(104)}) {
        sandbox_options o;
        o.read_file_output_max_chars = cap;
        sandbox_env env(o);
        dftest::write(env.ws() / "long.txt", std::string(1000, 'z'));
        // Nothing fits beside a 104-character marker: the first `cap` characters alone.
        CHECK(env.text("read_file", R"({"description":"d","path":"/mnt/user-data/workspace/long.txt"})") ==
              std::string(cap, 'z'));
    }
    sandbox_options o;
    o.read_file_output_max_chars = 105;
    sandbox_env env(o);
    dftest::write(env.ws() / "long.txt", std::string(1000, 'z'));
    CHECK(env.text("read_file", R"({"description":"d","path":"/mnt/user-data/workspace/long.txt"})") ==
          "z\n... [truncated: showing first 1 of 1000 chars. Use start_line/end_line to read a specific "
          "range] ...");
    CHECK(detail::head_truncate("abcdef", 3, "h") == "abc");
    CHECK(detail::middle_truncate(std::string(100, 'a'), 20) == std::string(20, 'a'));
}

TEST_CASE("write_file and str_replace refuse content whose virtual path climbs out",
          "[middleware][sandbox][files][security]") {
    sandbox_env env;
    CHECK(env.text("write_file", R"({"description":"d","path":"/mnt/user-data/workspace/a.txt",)"
                                 R"("content":"see /mnt/user-data/workspace/../../../etc/passwd"})") ==
          "Error: Permission denied writing to file: /mnt/user-data/workspace/a.txt");
    CHECK_FALSE(fs::exists(env.ws() / "a.txt"));
    // A ".." that stays under the directory it names is fine, and mapped.
    CHECK(env.text("write_file", R"({"description":"d","path":"/mnt/user-data/workspace/b.txt",)"
                                 R"("content":"see /mnt/user-data/workspace/x/../y.txt"})") == "OK");
    dftest::write(env.ws() / "c.txt", "old");
    CHECK(env.text("str_replace", R"({"description":"d","path":"/mnt/user-data/workspace/c.txt",)"
                                  R"("old_str":"old","new_str":"/mnt/user-data/uploads/../../x"})") ==
          "Error: Permission denied accessing file: /mnt/user-data/workspace/c.txt");
    CHECK(dftest::read(env.ws() / "c.txt") == "old");
}

TEST_CASE("str_replace writes virtual paths as host paths and reads them back virtual",
          "[middleware][sandbox][files]") {
    sandbox_env env;
    dftest::write(env.ws() / "s.py", "path = 'PLACEHOLDER'\n"); // not written by the agent
    CHECK(env.text("str_replace",
                   R"({"description":"d","path":"/mnt/user-data/workspace/s.py",)"
                   R"("old_str":"PLACEHOLDER","new_str":"/mnt/user-data/outputs/r.csv"})") == "OK");
    CHECK(dftest::read(env.ws() / "s.py") == "path = '" + (env.outputs() / "r.csv").string() + "'\n");
    CHECK(env.text("read_file", R"({"description":"d","path":"/mnt/user-data/workspace/s.py"})") ==
          "path = '/mnt/user-data/outputs/r.csv'\n");
}

TEST_CASE("grep: no catastrophic backtracking, long lines skipped, a time budget per call",
          "[middleware][sandbox][search]") {
    SECTION("(A+)+B over a line of A's answers at once") {
        sandbox_env env;
        dftest::write(env.ws() / "a.txt", std::string(40, 'A') + "\n");
        CHECK(
            env.text("grep", R"({"description":"d","pattern":"(A+)+B","path":"/mnt/user-data/workspace"})") ==
            "No matches found under /mnt/user-data/workspace");
        CHECK(
            env.text("grep", R"({"description":"d","pattern":"(A+)+$","path":"/mnt/user-data/workspace"})") ==
            "Found 1 matches under /mnt/user-data/workspace\n/mnt/user-data/workspace/a.txt:1: " +
                std::string(40, 'A'));
    }
    SECTION("lines over 2,000 characters are not searched") {
        sandbox_env env;
        dftest::write(env.ws() / "m.js", std::string(1999, 'x') + "\n" + std::string(2000, 'x') + "\nx\n");
        const std::string out =
            env.text("grep", R"({"description":"d","pattern":"x","path":"/mnt/user-data/workspace"})");
        CHECK_THAT(out, Catch::StartsWith("Found 2 matches under /mnt/user-data/workspace\n"));
        CHECK_THAT(out, Catch::Contains("m.js:1: ") && Catch::Contains("m.js:3: x") &&
                            !Catch::Contains("m.js:2: "));
    }
    SECTION("a search that runs out of time stops with an error") {
        sandbox_options o;
        o.search_timeout = std::chrono::milliseconds(1);
        sandbox_env env(o);
        std::string lines;
        for (int i = 0; i < 400; ++i)
            lines += std::string(1998, 'a') + "\n";
        dftest::write(env.ws() / "slow.txt", lines);
        CHECK(env.text("grep",
                       R"({"description":"d","pattern":"(a|aa)*b","path":"/mnt/user-data/workspace"})") ==
              "Error: grep stopped after 1 ms, its time limit, with 0 matches found so far. Narrow the path, "
              "add a glob filter or simplify the pattern.");
    }
    SECTION("back-references are refused by name") {
        sandbox_env env;
        dftest::write(env.ws() / "a.txt", "aa\n");
        CHECK_THAT(
            env.text("grep", R"({"description":"d","pattern":"(a)\\1","path":"/mnt/user-data/workspace"})"),
            Catch::StartsWith("Error: Invalid regex pattern: "));
    }
}

TEST_CASE("glob patterns with many ** match without a combinatorial search",
          "[middleware][sandbox][search]") {
    CHECK(
        detail::glob_match("**/**/**/**/**/**/**/**/*.txt", "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u.txt"));
    CHECK_FALSE(
        detail::glob_match("**/**/**/**/**/**/**/**/*.md", "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u.txt"));
    CHECK(detail::glob_match("src/**/*.py", "src/top.py"));
    CHECK_FALSE(detail::glob_match("src/**/*.py", "lib/top.py"));
    CHECK(detail::glob_match("**", ""));
}

TEST_CASE("sandbox settings name an unknown provider or key", "[middleware][sandbox][options]") {
    auto error_of = [](std::string_view json) {
        try {
            (void)boost::json::value_to<sandbox_options>(boost::json::parse(json));
        } catch (const json_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(error_of(R"({"use":"docker"})") ==
          "sandbox.use: unknown sandbox provider \"docker\" (known: local, isolated, "
          "deerflow.sandbox.local:LocalSandboxProvider)");
    CHECK(error_of(R"({"use":"isolated"})") == "no error");
    CHECK(error_of(R"({"use":7})") == "sandbox.use: expected a string, got 7");
    CHECK(error_of(R"({"isolation":true})") != "no error");
    const auto o = boost::json::value_to<sandbox_options>(
        boost::json::parse(R"({"use":"deerflow.sandbox.local:LocalSandboxProvider","search_timeout":2.5})"));
    CHECK(o.search_timeout == std::chrono::milliseconds(2500));
    CHECK(boost::json::value_to<sandbox_options>(boost::json::value_from(o)) == o);
    sandbox_options bad;
    bad.use = "docker";
    CHECK_THROWS_AS(sandbox(bad), std::invalid_argument);
}
