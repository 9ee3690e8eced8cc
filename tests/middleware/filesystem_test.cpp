// The filesystem middleware: every tool's texts on the state, hostile paths,
// execute, the eviction of large results, the options. (The backends, paths
// and permissions have their own tests in tests/filesystem/.)
#include <agentware/middleware/filesystem.hpp>

#include "../filesystem/support.hpp"

#include <agentware/filesystem/disk_backend.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace agentware;

namespace fs_test {

std::string numbered(std::size_t n) {
    std::string s;
    for (std::size_t i = 1; i <= n; ++i)
        s += "line " + std::to_string(i) + "\n";
    return s;
}

} // namespace fs_test

TEST_CASE("write_file, read_file and the state's files", "[middleware][filesystem]") {
    fs_test::bench b;
    CHECK(b.text("write_file", R"({"file_path": "notes/a.txt", "content": "alpha\nbeta\n"})") ==
          "Updated file /notes/a.txt");
    const auto& files = get<files_field>(b.state);
    REQUIRE(files.count("/notes/a.txt"));
    CHECK(files.at("/notes/a.txt")->content == "alpha\nbeta\n");
    CHECK(files.at("/notes/a.txt")->encoding == "utf-8");
    CHECK_FALSE(files.at("/notes/a.txt")->created_at.empty());
    CHECK(b.text("read_file", R"({"file_path": "/notes/a.txt"})") == "1  alpha\n2  beta");
    // Overwriting is allowed.
    CHECK(b.text("write_file", R"({"file_path": "/notes/a.txt", "content": "x"})") ==
          "Updated file /notes/a.txt");
    CHECK(b.text("read_file", R"({"file_path": "/notes/a.txt"})") == "1  x");
    auto missing = b.call("read_file", R"({"file_path": "/nope.txt"})");
    CHECK(missing.text() == "Error: File '/nope.txt' not found");
    CHECK(missing.status == tool_status::error);
}

TEST_CASE("read_file windows, notices and formats", "[middleware][filesystem]") {
    fs_test::bench b;
    b.put("/f.txt", fs_test::numbered(12));
    CHECK(b.text("read_file", R"({"file_path": "/f.txt", "offset": 8, "limit": 2})") ==
          " 9  line 9\n10  line 10\n\n[Read 2 lines (lines 9-10 of 12 total). 2 lines remaining from offset "
          "10.]");
    CHECK(b.text("read_file", R"({"file_path": "/f.txt", "offset": 10, "limit": 1})") ==
          "11  line 11\n\n[Read 1 line (lines 11-11 of 12 total). 1 line remaining from offset 11.]");
    CHECK(b.text("read_file", R"({"file_path": "/f.txt", "offset": 11})") == "12  line 12");
    CHECK(b.text("read_file", R"({"file_path": "/f.txt", "offset": 12})") ==
          "Error: Line offset 12 exceeds file length (12 lines)");
    CHECK(
        b.text("read_file", R"({"file_path": "/f.txt", "offset": -3, "limit": 1})") ==
        "1  line 1\n\n[Read 1 line (lines 1-1 of 12 total). 11 lines remaining from offset 1.]\n\n[Requested "
        "offset -3 is before the start of the file; read from line 1 instead.]");
    b.put("/empty.txt", " \n\t\n");
    CHECK(b.text("read_file", R"({"file_path": "/empty.txt"})") ==
          "System reminder: File exists but has empty contents");
    b.put("/crlf.txt", "a\r\nb\rc");
    CHECK(b.text("read_file", R"({"file_path": "/crlf.txt"})") == "1  a\n2  b\n3  c");

    filesystem_options cat;
    cat.read_file_format = line_number_format::cat;
    fs_test::bench old{filesystem(cat)};
    old.put("/f.txt", "x\ny\n");
    CHECK(old.text("read_file", R"({"file_path": "/f.txt"})") == "     1\tx\n     2\ty");
}

TEST_CASE("read_file splits long lines into numbered chunks and caps its size", "[middleware][filesystem]") {
    fs_test::bench b;
    b.put("/long.txt", "short\n" + std::string(12000, 'a') + "\nend\n");
    const std::string out = b.text("read_file", R"({"file_path": "/long.txt"})");
    CHECK(out == "  1  short\n  2  " + std::string(5000, 'a') + "\n2.1  " + std::string(5000, 'a') +
                     "\n2.2  " + std::string(2000, 'a') + "\n  3  end");
    // `limit` counts source lines: one line, however many chunks.
    CHECK(b.text("read_file", R"({"file_path": "/long.txt", "offset": 1, "limit": 1})") ==
          "  2  " + std::string(5000, 'a') + "\n2.1  " + std::string(5000, 'a') + "\n2.2  " +
              std::string(2000, 'a') +
              "\n\n[Read 1 line (lines 2-2 of 3 total). 1 line remaining from offset 2.]");
    // Exactly 5,000 characters stay one row; the marker width is the widest marker.
    b.put("/edge.txt", std::string(5000, 'e') + "\n" + std::string(5001, 'f') + "\n");
    CHECK(b.text("read_file", R"({"file_path": "/edge.txt"})") ==
          "  1  " + std::string(5000, 'e') + "\n  2  " + std::string(5000, 'f') + "\n2.1  f");

    // Lengths are code points, as Python counts them: 3,000 two-byte
    // characters are one row, 6,000 are 5,000 then 1,000.
    auto repeat = [](std::string_view s, std::size_t n) {
        std::string r;
        for (std::size_t i = 0; i < n; ++i)
            r += s;
        return r;
    };
    b.put("/utf8.txt", repeat("\u00e9", 3000) + "\n" + repeat("\u00e9", 6000) + "\n");
    CHECK(b.text("read_file", R"({"file_path": "/utf8.txt"})") == "  1  " + repeat("\u00e9", 3000) +
                                                                      "\n  2  " + repeat("\u00e9", 5000) +
                                                                      "\n2.1  " + repeat("\u00e9", 1000));
    // The eviction preview clips its lines at 1,000 code points, whole.
    CHECK(detail::fs_preview(repeat("\u20ac", 1500)) == "1  " + repeat("\u20ac", 1000));
}

TEST_CASE("read_file over its size cap: cut after whole source lines, as deepagents cuts it",
          "[middleware][filesystem]") {
    // The answer stays within 4 x tool_token_limit_before_evict (80,000)
    // characters: the rows of the source lines that fit whole, keeping the
    // window's marker width, then the size notice, then the remaining-lines
    // notice recomputed for what is shown.
    auto size_notice = [](std::string_view path) {
        return "\n\n[Output was truncated due to size limits. The file content is very large. Consider "
               "reformatting the file to make it easier to navigate. For example, if this is JSON, use "
               "execute(command='jq . " +
               std::string(path) +
               "') to pretty-print it with line breaks. For other formats, you can use appropriate "
               "formatting "
               "tools to split long lines.]";
    };
    fs_test::bench b;
    // 100 lines of 1,000 characters: 79 fit.
    std::string big;
    for (int i = 0; i < 100; ++i)
        big += std::string(1000, 'b') + "\n";
    b.put("/big.txt", big);
    std::string expected;
    for (int i = 1; i <= 79; ++i)
        expected += detail::format("{}{:>3}  {}", i == 1 ? "" : "\n", i, std::string(1000, 'b'));
    expected += size_notice("/big.txt") +
                "\n\n[Read 79 lines (lines 1-79 of 100 total). 21 lines remaining from offset 79.]";
    const std::string capped = b.text("read_file", R"({"file_path": "/big.txt"})");
    CHECK(capped == expected);
    CHECK(capped.size() <= 80000);

    // 20 lines of 12,000 characters, three rows each: 6 lines fit, marked at
    // the width of the window's widest marker ("20.2").
    std::string wide;
    for (int i = 0; i < 20; ++i)
        wide += std::string(12000, 'w') + "\n";
    b.put("/wide.txt", wide);
    expected.clear();
    for (int i = 1; i <= 6; ++i)
        expected += detail::format("{}{:>4}  {}\n{:>4}  {}\n{:>4}  {}", i == 1 ? "" : "\n", i,
                                   std::string(5000, 'w'), std::to_string(i) + ".1", std::string(5000, 'w'),
                                   std::to_string(i) + ".2", std::string(2000, 'w'));
    expected += size_notice("/wide.txt") +
                "\n\n[Read 6 lines (lines 1-6 of 20 total). 14 lines remaining from offset 6.]";
    CHECK(b.text("read_file", R"({"file_path": "/wide.txt"})") == expected);

    // Characters are code points: 100 lines of 1,000 two-byte characters cut
    // where 100 lines of 1,000 bytes do.
    std::string accents;
    for (int i = 0; i < 100; ++i) {
        for (int k = 0; k < 1000; ++k)
            accents += "\u00e9";
        accents += '\n';
    }
    b.put("/accents.txt", accents);
    CHECK(
        b.text("read_file", R"({"file_path": "/accents.txt"})")
            .ends_with(size_notice("/accents.txt") +
                       "\n\n[Read 79 lines (lines 1-79 of 100 total). 21 lines remaining from offset 79.]"));

    // The cut starts at 80,000 characters (rows and notice), not after.
    const std::string rows_79 = [] {
        std::string r;
        for (int i = 1; i <= 79; ++i)
            r += detail::format("{:>2}  {}\n", i, std::string(1000, 'b'));
        return r;
    }();
    std::string lines_79;
    for (int i = 0; i < 79; ++i)
        lines_79 += std::string(1000, 'b') + "\n";
    b.put("/under.txt", lines_79 + std::string(600, 'c') + "\n"); // 79,999 characters numbered
    const std::string under = b.text("read_file", R"({"file_path": "/under.txt"})");
    CHECK(under == rows_79 + "80  " + std::string(600, 'c'));
    CHECK(under.size() == 79999);
    b.put("/at.txt", lines_79 + std::string(601, 'c') + "\n"); // 80,000
    CHECK(b.text("read_file", R"({"file_path": "/at.txt"})") ==
          rows_79.substr(0, rows_79.size() - 1) + size_notice("/at.txt") +
              "\n\n[Read 79 lines (lines 1-79 of 80 total). 1 line remaining from offset 79.]");

    // Not one source line fits: the rows cut at the budget, and no
    // remaining-lines notice (its offset would skip the unseen part).
    b.put("/one.txt", std::string(100000, 'x') + "\nshort\n");
    const std::string one = b.text("read_file", R"({"file_path": "/one.txt"})");
    const std::string tail = size_notice("/one.txt");
    CHECK(one.size() == 80000);
    CHECK(one.starts_with("   1  " + std::string(5000, 'x') + "\n 1.1  x"));
    CHECK(one.ends_with("x" + tail));
}

TEST_CASE("edit_file: unique match, replace_all and the errors", "[middleware][filesystem]") {
    fs_test::bench b;
    b.put("/e.txt", "one two two three");
    CHECK(b.text("edit_file", R"({"file_path": "/e.txt", "old_string": "one", "new_string": "1"})") ==
          "Successfully replaced 1 instance(s) of the string in '/e.txt'");
    CHECK(get<files_field>(b.state).at("/e.txt")->content == "1 two two three");
    CHECK(b.text("edit_file", R"({"file_path": "/e.txt", "old_string": "two", "new_string": "2"})") ==
          "Error: String 'two' appears 2 times in file. Use replace_all=True to replace all instances, or "
          "provide "
          "a more specific string with surrounding context.");
    CHECK(b.text("edit_file",
                 R"({"file_path": "/e.txt", "old_string": "two", "new_string": "2", "replace_all": true})") ==
          "Successfully replaced 2 instance(s) of the string in '/e.txt'");
    CHECK(get<files_field>(b.state).at("/e.txt")->content == "1 2 2 three");
    CHECK(b.text("edit_file", R"({"file_path": "/e.txt", "old_string": "zzz", "new_string": "y"})") ==
          "Error: String not found in file: 'zzz'");
    CHECK(b.text("edit_file", R"({"file_path": "/e.txt", "old_string": "three\n", "new_string": "3\n"})") ==
          "Error: old_string ends with a newline, but the file does not end with a newline. Retry with the "
          "trailing newline removed from old_string (and from new_string if it also ends with a newline).");
    CHECK(b.text("edit_file", R"({"file_path": "/x.txt", "old_string": "a", "new_string": "b"})") ==
          "Error: File '/x.txt' not found");
}

TEST_CASE("ls, glob and grep over the state", "[middleware][filesystem]") {
    fs_test::bench b;
    b.put("/a.txt", "hello world\nbye\n");
    b.put("/src/main.cpp", "int main() { hello(); }\n");
    b.put("/src/lib/util.cpp", "void hello() {}\nvoid hello2() {}\n");
    b.put("/src/.hidden.cpp", "hello\n");
    b.put("/srcx.txt", "x\n");
    CHECK(b.text("ls", R"({"path": "/"})") == "['/a.txt', '/src/', '/srcx.txt']");
    CHECK(b.text("ls", R"({"path": "/src"})") == "['/src/.hidden.cpp', '/src/lib/', '/src/main.cpp']");
    CHECK(b.text("ls", R"({"path": "/nothing"})") == "No files found");

    CHECK(b.text("glob", R"({"pattern": "*.cpp"})") == "['/src/lib/util.cpp', '/src/main.cpp']");
    CHECK(b.text("glob", R"({"pattern": "src/*.cpp"})") == "['/src/main.cpp']");
    CHECK(b.text("glob", R"({"pattern": "**/*.{txt,cpp}", "path": "/src"})") ==
          "['/src/lib/util.cpp', '/src/main.cpp']");
    CHECK(b.text("glob", R"({"pattern": ".*.cpp"})") == "['/src/.hidden.cpp']");
    CHECK(b.text("glob", R"({"pattern": "*.md"})") == "No files found");

    CHECK(b.text("grep", R"({"pattern": "hello"})") ==
          "/a.txt\n/src/.hidden.cpp\n/src/lib/util.cpp\n/src/main.cpp");
    CHECK(b.text("grep", R"({"pattern": "hello", "path": "/src/lib", "output_mode": "count"})") ==
          "/src/lib/util.cpp: 2");
    CHECK(b.text("grep", R"({"pattern": "hello(", "output_mode": "content", "glob": "*.cpp"})") ==
          "/src/lib/util.cpp:\n  1: void hello() {}\n/src/main.cpp:\n  1: int main() { hello(); }");
    CHECK(b.text("grep", R"({"pattern": "bye", "path": "/a.txt", "output_mode": "content"})") ==
          "/a.txt:\n  2: bye");
    CHECK(b.text("grep", R"({"pattern": "nowhere"})") == "No matches found");

    filesystem_options one;
    one.grep_max_count = 1;
    fs_test::bench few{filesystem(one)};
    few.put("/a.txt", "x\nx\n");
    CHECK(
        few.text("grep", R"({"pattern": "x", "output_mode": "count"})") ==
        "/a.txt: 1\n\nNote: the search stopped early (it hit its time limit or the maximum match count). The "
        "matches above are valid but incomplete. Narrow the search (a more specific pattern or a narrower "
        "path), or raise max_count, to see the rest.");
}

TEST_CASE("read_file with limit 0 (or less) reads nothing, after the file's own checks",
          "[middleware][filesystem]") {
    // deepagents reads first: a missing file is an error and an empty one
    // says so; only a file with contents gets the limit reminder, naming the
    // limit asked for, whatever the offset.
    fs_test::bench b;
    b.put("/f.txt", fs_test::numbered(3));
    const std::string reminder_0 =
        "System reminder: no lines were read because `limit` was 0. The file was not "
        "inspected and may have contents; retry with `limit` >= 1 to read it.";
    const auto zero = b.call("read_file", R"({"file_path": "/f.txt", "limit": 0})");
    CHECK(zero.text() == reminder_0);
    CHECK(zero.status != tool_status::error);
    CHECK(
        b.text("read_file", R"({"file_path": "/f.txt", "limit": -2})") ==
        "System reminder: no lines were read because `limit` was -2. The file was not inspected and may have "
        "contents; retry with `limit` >= 1 to read it.");
    CHECK(b.text("read_file", R"({"file_path": "/f.txt", "offset": 50, "limit": 0})") == reminder_0);
    CHECK(b.text("read_file", R"({"file_path": "/f.txt", "offset": -1, "limit": 0})") == reminder_0);
    auto missing = b.call("read_file", R"({"file_path": "/nope.txt", "limit": 0})");
    CHECK(missing.text() == "Error: File '/nope.txt' not found");
    CHECK(missing.status == tool_status::error);
    b.put("/blank.txt", "\n \n");
    CHECK(b.text("read_file", R"({"file_path": "/blank.txt", "limit": 0})") ==
          "System reminder: File exists but has empty contents");
    b.put("/empty.txt", "");
    CHECK(b.text("read_file", R"({"file_path": "/empty.txt", "limit": 0})") ==
          "System reminder: File exists but has empty contents");
}

TEST_CASE("edit_file with an empty old_string, as deepagents counts it", "[middleware][filesystem]") {
    // Python's str.count("") is the number of code points plus one.
    fs_test::bench b;
    b.put("/empty.txt", "");
    CHECK(b.text("edit_file", R"({"file_path": "/empty.txt", "old_string": "", "new_string": "first\n"})") ==
          "Successfully replaced 1 instance(s) of the string in '/empty.txt'");
    CHECK(get<files_field>(b.state).at("/empty.txt")->content == "first\n");

    b.put("/full.txt", "h\u00e9llo"); // 5 code points, 6 bytes
    const auto ambiguous =
        b.call("edit_file", R"({"file_path": "/full.txt", "old_string": "", "new_string": "x"})");
    CHECK(ambiguous.text() == "Error: String '' appears 6 times in file. Use replace_all=True to replace all "
                              "instances, or provide a more specific string with surrounding context.");
    CHECK(ambiguous.status == tool_status::error);
    CHECK(get<files_field>(b.state).at("/full.txt")->content == "h\u00e9llo");
    CHECK(b.text("edit_file",
                 R"({"file_path": "/full.txt", "old_string": "", "new_string": "-", "replace_all": true})") ==
          "Successfully replaced 6 instance(s) of the string in '/full.txt'");
    CHECK(get<files_field>(b.state).at("/full.txt")->content == "-h-\u00e9-l-l-o-");
}

TEST_CASE("edit_file's trailing-newline hint only when the file ends with the rest",
          "[middleware][filesystem]") {
    fs_test::bench b;
    b.put("/mid.txt", "one three two");
    CHECK(b.text("edit_file", R"({"file_path": "/mid.txt", "old_string": "three\n", "new_string": "3\n"})") ==
          "Error: String not found in file: 'three\n'");
    b.put("/ambiguous.txt", "ab ab");
    CHECK(
        b.text("edit_file", R"({"file_path": "/ambiguous.txt", "old_string": "ab\n", "new_string": "x"})") ==
        "Error: old_string ends with a newline, but the file does not end with a newline. With the trailing "
        "newline removed, old_string would appear 2 times in the file. Retry with the trailing newline "
        "removed and add surrounding context so the match is unique.");
}

TEST_CASE("grep's no-match text, and its hint for a pattern written as a regex", "[middleware][filesystem]") {
    fs_test::bench b;
    b.put("/a.txt", "alpha|beta\nx.y\n");
    const std::string hint =
        "No matches found\n\nNote: grep matches literal text, not regex, so characters like `|`, `.*`, and "
        "`\\.` are searched verbatim. Search for the literal text you need instead; for `|` alternation, run "
        "a separate search per alternative.";
    CHECK(b.text("grep", R"({"pattern": "foo|bar"})") == hint);
    CHECK(b.text("grep", R"({"pattern": "al.*ta"})") == hint);
    CHECK(b.text("grep", R"({"pattern": "al.+ta"})") == hint);
    CHECK(b.text("grep", R"({"pattern": "\\d+"})") == hint);
    CHECK(b.text("grep", R"({"pattern": "x\\.y"})") == hint);
    // Bare `.`, `(`, `[`, `?`, `^`, `$` are common in literal searches: no hint.
    CHECK(b.text("grep", R"({"pattern": "f(x)[0]?^$"})") == "No matches found");
    CHECK(b.text("grep", R"({"pattern": "\\q"})") == "No matches found");
    // A regex-looking pattern that is found literally gets no hint.
    CHECK(b.text("grep", R"({"pattern": "a|b"})") == "/a.txt");
}

TEST_CASE("delete and mkdir on the state", "[middleware][filesystem]") {
    fs_test::bench b;
    b.put("/d/a.txt", "a");
    b.put("/d/e/b.txt", "b");
    b.put("/keep.txt", "k");
    CHECK(b.text("delete", R"({"file_path": "/d"})") == "Deleted /d");
    CHECK(get<files_field>(b.state).size() == 1);
    CHECK(b.text("delete", R"({"file_path": "/keep.txt"})") == "Deleted /keep.txt");
    CHECK(get<files_field>(b.state).empty());
    CHECK(b.text("delete", R"({"file_path": "/keep.txt"})") == "Error: File '/keep.txt' not found");
    CHECK(b.text("mkdir", R"({"path": "/new"})") == "Created directory /new");
}

TEST_CASE("hostile paths are refused by every tool on the state", "[middleware][filesystem]") {
    fs_test::bench b;
    b.put("/a.txt", "a");
    for (std::string_view tool : {"read_file", "delete"}) {
        auto out = b.call(tool, R"({"file_path": "/x/../../etc/passwd"})");
        CHECK(out.status == tool_status::error);
        CHECK(out.text() == "Error: Path traversal not allowed: /x/../../etc/passwd");
    }
    CHECK(b.text("ls", R"({"path": "~"})") == "Error: Path traversal not allowed: ~");
    CHECK(b.text("write_file", R"({"file_path": "D:/x", "content": ""})")
              .starts_with("Error: Windows absolute paths are not supported: D:/x."));
    CHECK(b.text("read_file", R"({"file_path": "/a\u0000.txt"})") == "Error: Path contains a NUL byte");
    CHECK(b.text("write_file", "{\"file_path\": \"/" + std::string(256, 'n') + "\", \"content\": \"\"}") ==
          "Error: A path component is longer than 255 characters");
    CHECK(get<files_field>(b.state).size() == 1);
}

TEST_CASE("execute: only with a sandbox backend, and within the maximum timeout",
          "[middleware][filesystem]") {
    fs_test::temp_root t;
    fs_test::bench b{filesystem(local_shell_backend(disk_backend_options{t.root().string(), true, 10}))};
    auto out = b.call("execute", R"({"command": "echo hi; pwd"})");
    CHECK(out.text() == "hi\n" + std::filesystem::canonical(t.root()).string() +
                            "\n\n[Command succeeded with exit code 0]");
    CHECK(out.metadata.at("exit_code").as_int64() == 0);
    CHECK(b.text("execute", R"({"command": "exit 3"})") == "\n[Command failed with exit code 3]");
    CHECK(b.text("execute", R"({"command": "true", "timeout": 3601})") ==
          "Error: timeout 3601s exceeds maximum allowed (3600s).");

    fs_test::bench state_only;
    CHECK(state_only.text("execute", R"({"command": "true"})") ==
          "Error: Execution not available. This backend cannot run commands.");
}

TEST_CASE("execute is offered only when the run's backend can execute", "[middleware][filesystem]") {
    fs_test::temp_root t;
    scripted_model model({ai_message("a"), ai_message("b")});
    auto a = make_agent(model, tool_set{}, filesystem{});
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "hi").ok());
    auto names = model.requests().at(0).tool_names;
    CHECK(std::find(names.begin(), names.end(), "read_file") != names.end());
    CHECK(std::find(names.begin(), names.end(), "execute") == names.end());
    CHECK(model.requests().at(0).system_prompt.find("## Filesystem tools") != std::string::npos);

    auto shell =
        make_agent(model, tool_set{},
                   filesystem(local_shell_backend(disk_backend_options{t.root().string(), true, 10})));
    decltype(shell)::state_type s2;
    REQUIRE(shell.run(s2, "hi").ok());
    names = model.requests().at(1).tool_names;
    CHECK(std::find(names.begin(), names.end(), "execute") != names.end());
}

TEST_CASE("tool results over the limit are evicted to /large_tool_results/",
          "[middleware][filesystem][concurrency]") {
    const std::size_t limit = 4 * 20000;
    std::string exact(limit, 'e');
    std::string over;
    for (int i = 1; i <= 20; ++i)
        over += "row " + std::to_string(i) + " " + std::string(5000, 'o') + "\n";
    REQUIRE(over.size() > limit);
    auto big = make_tool("big", "Large output.",
                         R"({"type":"object","properties":{"n":{"type":"string"}},"required":["n"]})",
                         [exact, over](const boost::json::object& args) {
                             return args.at("n").as_string() == "exact" ? exact : over;
                         });
    scripted_model model(
        {test::calls(
             {test::call("c.1/x", "big", R"({"n":"exact"})"), test::call("c2", "big", R"({"n":"over"})")}),
         test::calls({test::call("c3", "read_file", R"({"file_path":"/large_tool_results/c2"})")}),
         ai_message("done")});
    tool_set tools;
    tools.add(big);
    auto a = make_agent(model, std::move(tools), filesystem{});
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "go").ok());
    const auto& files = get<files_field>(state);
    // Exactly at the limit: kept as it is.
    CHECK(state.messages[2].text() == exact);
    CHECK(files.count("/large_tool_results/c_1_x") == 0);
    // Over it: saved, and replaced by the notice with head and tail.
    REQUIRE(files.count("/large_tool_results/c2") == 1);
    CHECK(files.at("/large_tool_results/c2")->content == over);
    const std::string shown = state.messages[3].text();
    CHECK(shown == filesystem::eviction_message("c2", "/large_tool_results/c2", over));
    CHECK(shown.starts_with(
        "Tool result too large, the result of this tool call c2 was saved in the filesystem "
        "at this path: /large_tool_results/c2\n\nYou can read the result"));
    CHECK(shown.find("\n... [10 lines truncated] ...\n16  row 16 ") != std::string::npos);
    CHECK(shown.find("\n\n1  row 1 " + std::string(994, 'o') + "\n2  row 2") != std::string::npos);
    CHECK(shown.ends_with("\n20  row 20 " + std::string(993, 'o') + "\n")); // deepagents' closing newline
    // read_file results are never evicted (they are capped instead).
    CHECK(state.messages[5].text().find("[Output was truncated due to size limits.") != std::string::npos);
}

TEST_CASE("oversized human messages are saved to /conversation_history/", "[middleware][filesystem]") {
    filesystem_options o;
    o.human_message_token_limit_before_evict = 10; // 40 characters
    scripted_model model({ai_message("ok")});
    auto a = make_agent(model, tool_set{}, filesystem(o));
    decltype(a)::state_type state;
    const std::string long_text = "a long message that is over forty characters for sure";
    REQUIRE(a.run(state, long_text).ok());
    const auto& files = get<files_field>(state);
    REQUIRE(files.size() == 1);
    const auto& [path, data] = *files.begin();
    CHECK(path.starts_with("/conversation_history/"));
    CHECK(path.ends_with(".md"));
    CHECK(data->content == long_text);
    CHECK(state.messages[0].text() ==
          "Message content too large and was saved to the filesystem at: " + path +
              "\n\nYou can read the full content using the read_file tool with pagination (offset and "
              "limit parameters).\n\nHere is a preview showing the head and tail of the content:\n\n1  " +
              long_text + "\n");
    CHECK(model.requests().at(0).messages.at(0).text() == state.messages[0].text());
}

TEST_CASE("filesystem options read and write deepagents' keys", "[middleware][filesystem]") {
    auto o = boost::json::value_to<filesystem_options>(boost::json::parse(
        R"({"tool_token_limit_before_evict": null, "grep_max_count": 5, "read_file_format": "cat",
            "allowed_prefixes": ["/workspace/"], "tools": ["read_file", "ls"],
            "permissions": [{"operations": ["read"], "paths": ["/x/**"], "mode": "deny"}]})"));
    CHECK_FALSE(o.tool_token_limit_before_evict);
    CHECK(o.grep_max_count == 5);
    CHECK(o.read_file_format == line_number_format::cat);
    CHECK(o.permissions.size() == 1);
    CHECK(boost::json::value_to<filesystem_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(boost::json::value_to<filesystem_options>(boost::json::parse(R"({"grep_max": 1})")),
                      Catch::Contains("filesystem.grep_max"));
    CHECK_THROWS_WITH(boost::json::value_to<filesystem_options>(boost::json::parse(R"({"tools": ["ls"]})")),
                      Catch::Contains("read_file"));
    filesystem only(o);
    CHECK(only.tools().size() == 2);
}
