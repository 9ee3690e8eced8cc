// filesystem: path validation, the backends (state, disk, composite, shell),
// every tool's texts, permissions and the eviction of large results.
#include "../agent/support.hpp"

#include <agentware/filesystem/composite_backend.hpp>
#include <agentware/filesystem/disk_backend.hpp>
#include <agentware/middleware/filesystem.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace agentware;

namespace fs_test {

using files_state = basic_state<type_list<files_field>>;

// Calls a filesystem tool on a state and folds its update in.
struct bench {
    filesystem fs;
    files_state state;

    explicit bench(filesystem f = filesystem{}) : fs(std::move(f)) {}

    tool_output call(std::string_view name, std::string_view args_json) {
        tool_runtime rt;
        rt.tool_call_id = "call-1";
        rt.bind_state(state);
        for (const auto& t : fs.tools())
            if (t->schema().name == name) {
                tool_output out = t->call(boost::json::parse(args_json).as_object(), rt);
                state.apply(out.update);
                return out;
            }
        FAIL("no tool " << name);
        return {};
    }
    std::string text(std::string_view name, std::string_view args_json) {
        return call(name, args_json).text();
    }
    void put(std::string path, std::string content) {
        file_data f;
        f.content = std::move(content);
        get<files_field>(state)[std::move(path)] = f;
    }
};

struct temp_root {
    std::filesystem::path dir;
    temp_root() {
        dir = std::filesystem::temp_directory_path() /
              ("agentware-fs-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir / "root");
        std::filesystem::create_directories(dir / "outside");
        std::ofstream(dir / "outside" / "secret.txt") << "top secret\n";
    }
    ~temp_root() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
    std::filesystem::path root() const { return dir / "root"; }
    static int& counter() {
        static int n = 0;
        return n;
    }
};

std::string numbered(std::size_t n) {
    std::string s;
    for (std::size_t i = 1; i <= n; ++i)
        s += "line " + std::to_string(i) + "\n";
    return s;
}

} // namespace fs_test

TEST_CASE("validate_path refuses traversal, home and drive paths with deepagents' texts",
          "[middleware][filesystem]") {
    CHECK(validate_path("/a/../b").error == "Path traversal not allowed: /a/../b");
    CHECK(validate_path("..").error == "Path traversal not allowed: ..");
    CHECK(validate_path("a\\..\\b").error == "Path traversal not allowed: a\\..\\b");
    CHECK(validate_path("~/x").error == "Path traversal not allowed: ~/x");
    CHECK(validate_path("C:\\Users\\x").error ==
          "Windows absolute paths are not supported: C:\\Users\\x. Please use virtual paths starting with / "
          "(e.g., /workspace/file.txt)");
    CHECK(validate_path("/w/x", {"/workspace/"}).error ==
          "Path must start with one of ['/workspace/']: /w/x");
    CHECK(validate_path("/workspace/x", {"/workspace/"}).path == "/workspace/x");
    CHECK(validate_path("a//b/./c/").path == "/a/b/c");
    CHECK(validate_path("").path == "/");
    CHECK(validate_path("dir\\file.txt").path == "/dir/file.txt");
    CHECK(validate_path("a..b/c").path == "/a..b/c"); // ".." only as a whole component
    CHECK_FALSE(validate_path(std::string("/a\0b", 4)));
    CHECK_FALSE(validate_path("/" + std::string(300, 'x')));
    CHECK_FALSE(validate_path(std::string(5000, 'a')));
}

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
    CHECK(b.text("read_file", R"({"file_path": "/f.txt", "limit": 0})") ==
          "System reminder: no lines were read because `limit` was 0. The file was not inspected.");
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

    // 100 lines of 1000 characters: over the 80,000-character cap.
    std::string big;
    for (int i = 0; i < 100; ++i)
        big += std::string(1000, 'b') + "\n";
    b.put("/big.txt", big);
    const std::string capped = b.text("read_file", R"({"file_path": "/big.txt"})");
    CHECK(capped.find("\n\n[Read 79 lines (lines 1-79 of 100 total). 21 lines remaining from offset 79.]") !=
          std::string::npos);
    CHECK(capped.ends_with(
        "\n\n[Output was truncated due to size limits. The file content is very large. Consider reformatting "
        "the "
        "file to make it easier to navigate. For example, if this is JSON, use execute(command='jq . "
        "/big.txt') "
        "to pretty-print it with line breaks. For other formats, you can use appropriate formatting tools to "
        "split long lines.]"));
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
    CHECK(few.text("grep", R"({"pattern": "x", "output_mode": "count"})") ==
          "/a.txt: 1\n\nNote: the search stopped early (it hit its time limit or the maximum match count).");
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

TEST_CASE("permissions: the first matching rule decides, results are filtered", "[middleware][filesystem]") {
    filesystem_options o;
    o.permissions = boost::json::value_to<std::vector<fs_permission>>(boost::json::parse(
        R"([{"operations": ["write"], "paths": ["/memories/**"], "mode": "deny"},
            {"operations": ["read", "write"], "paths": ["/secrets/**"], "mode": "deny"}])"));
    fs_test::bench b{filesystem(o)};
    b.put("/secrets/key", "k");
    b.put("/memories/m.md", "m");
    b.put("/open.txt", "k");
    CHECK(b.text("write_file", R"({"file_path": "/memories/x.md", "content": "x"})") ==
          "Error: permission denied for write on /memories/x.md");
    CHECK(b.text("read_file", R"({"file_path": "/memories/m.md"})") == "1  m");
    CHECK(b.text("read_file", R"({"file_path": "/secrets/key"})") ==
          "Error: permission denied for read on /secrets/key");
    CHECK(b.text("ls", R"({"path": "/"})") == "['/memories/', '/open.txt']"); // /secrets/ is not readable
    CHECK(b.text("grep", R"({"pattern": "k"})") == "/open.txt");
    CHECK_THROWS(boost::json::value_to<fs_permission>(
        boost::json::parse(R"({"operations": ["read"], "paths": ["/a"], "mode": "interrupt"})")));
}

TEST_CASE("the state backend lists a directory without walking the other files", "[middleware][filesystem]") {
    file_map files;
    for (int d = 0; d < 100; ++d)
        for (int f = 0; f < 100; ++f)
            files["/d" + std::to_string(d) + "/f" + std::to_string(f)] = file_data{"x", "utf-8", {}, {}};
    files["/top.txt"] = file_data{"t", "utf-8", {}, {}};
    state_backend sb(&files);
    auto root = sb.ls("/");
    CHECK(root.entries.size() == 101); // 100 directories and one file, each found by one lookup
    CHECK(sb.ls("/d7").entries.size() == 100);
    CHECK(sb.read("/d99/f99").content == "x");
}

TEST_CASE("the disk backend stays inside its root, symlinks included", "[middleware][filesystem]") {
    fs_test::temp_root t;
    std::filesystem::create_symlink(t.dir / "outside", t.root() / "out_dir");
    std::filesystem::create_symlink(t.dir / "outside" / "secret.txt", t.root() / "out_file");
    std::filesystem::create_directories(t.root() / "in");
    std::ofstream(t.root() / "in" / "ok.txt") << "fine\nsecret? no\n";
    std::filesystem::create_symlink(t.root() / "in" / "ok.txt", t.root() / "in_link");

    fs_test::bench b{filesystem(disk_backend(t.root().string()))};
    CHECK(b.text("read_file", R"({"file_path": "/in/ok.txt"})") == "1  fine\n2  secret? no");
    CHECK(b.text("read_file", R"({"file_path": "/in_link"})") == "1  fine\n2  secret? no");
    CHECK(b.text("read_file", R"({"file_path": "/out_file"})") ==
          "Error: Path '/out_file' leads outside the root directory");
    CHECK(b.text("read_file", R"({"file_path": "/out_dir/secret.txt"})") ==
          "Error: Path '/out_dir/secret.txt' leads outside the root directory");
    CHECK(b.text("write_file", R"({"file_path": "/out_dir/new.txt", "content": "x"})") ==
          "Error: Path '/out_dir/new.txt' leads outside the root directory");
    CHECK_FALSE(std::filesystem::exists(t.dir / "outside" / "new.txt"));
    CHECK(b.text("write_file", R"({"file_path": "/out_file", "content": "x"})") ==
          "Error: Path '/out_file' leads outside the root directory");
    CHECK(b.text("edit_file", R"({"file_path": "/out_file", "old_string": "top", "new_string": "x"})") ==
          "Error: Path '/out_file' leads outside the root directory");
    CHECK(b.text("delete", R"({"file_path": "/out_dir/secret.txt"})") ==
          "Error: Path '/out_dir/secret.txt' leads outside the root directory");
    CHECK(std::filesystem::exists(t.dir / "outside" / "secret.txt"));
    CHECK(b.text("read_file", R"({"file_path": "/../outside/secret.txt"})") ==
          "Error: Path traversal not allowed: /../outside/secret.txt");
    // Searches neither follow nor list links that lead out.
    CHECK(b.text("grep", R"({"pattern": "secret"})") == "/in/ok.txt");
    CHECK(b.text("glob", R"({"pattern": "*"})") == "['/in/ok.txt']");
    CHECK(b.text("ls", R"({"path": "/"})") == "['/in/', '/in_link']");
    CHECK(b.text("delete", R"({"file_path": "/"})") == "Error: Cannot delete the root directory");
    CHECK(b.text("write_file", "{\"file_path\": \"/" + std::string(255, 'n') + "\", \"content\": \"\"}") ==
          "Updated file /" + std::string(255, 'n'));
}

TEST_CASE("the disk backend's tools: write, edit, ls, glob, grep, delete, mkdir",
          "[middleware][filesystem]") {
    fs_test::temp_root t;
    fs_test::bench b{filesystem(disk_backend(t.root().string()))};
    CHECK(b.text("write_file", R"({"file_path": "/a/b/c.txt", "content": "one\ntwo\n"})") ==
          "Updated file /a/b/c.txt");
    CHECK(std::filesystem::exists(t.root() / "a" / "b" / "c.txt"));
    CHECK(get<files_field>(b.state).empty()); // nothing in the state
    CHECK(b.text("edit_file", R"({"file_path": "/a/b/c.txt", "old_string": "two", "new_string": "2"})") ==
          "Successfully replaced 1 instance(s) of the string in '/a/b/c.txt'");
    CHECK(b.text("read_file", R"({"file_path": "/a/b/c.txt"})") == "1  one\n2  2");
    CHECK(b.text("read_file", R"({"file_path": "/a/none.txt"})") == "Error: File '/a/none.txt' not found");
    CHECK(b.text("mkdir", R"({"path": "/m/n"})") == "Created directory /m/n");
    CHECK(b.text("ls", R"({"path": "/"})") == "['/a/', '/m/']");
    CHECK(b.text("glob", R"({"pattern": "**/*.txt"})") == "['/a/b/c.txt']");
    CHECK(b.text("grep", R"({"pattern": "one", "output_mode": "content"})") == "/a/b/c.txt:\n  1: one");
    CHECK(b.text("delete", R"({"file_path": "/a"})") == "Deleted /a");
    CHECK_FALSE(std::filesystem::exists(t.root() / "a"));
}

TEST_CASE("the composite backend routes /memories/ to disk and the rest to the state",
          "[middleware][filesystem]") {
    fs_test::temp_root t;
    disk_backend disk(t.root().string());
    fs_test::bench b{filesystem(
        [disk](const tool_runtime& rt) {
            return any_backend(composite_backend(state_backend(rt), {{"/memories/", disk}}));
        },
        filesystem_options{})};
    CHECK(b.text("write_file", R"({"file_path": "/memories/prefs.md", "content": "tea"})") ==
          "Updated file /memories/prefs.md");
    CHECK(std::filesystem::exists(t.root() / "prefs.md"));
    CHECK(b.text("write_file", R"({"file_path": "/scratch.txt", "content": "tea too"})") ==
          "Updated file /scratch.txt");
    CHECK(get<files_field>(b.state).count("/scratch.txt") == 1);
    CHECK(get<files_field>(b.state).count("/memories/prefs.md") == 0);
    CHECK(b.text("ls", R"({"path": "/"})") == "['/scratch.txt', '/memories/']");
    CHECK(b.text("ls", R"({"path": "/memories"})") == "['/memories/prefs.md']");
    CHECK(b.text("read_file", R"({"file_path": "/memories/none.md"})") ==
          "Error: File '/memories/none.md' not found");
    CHECK(b.text("grep", R"({"pattern": "tea"})") == "/memories/prefs.md\n/scratch.txt");
    CHECK(b.text("glob", R"({"pattern": "*.md"})") == "['/memories/prefs.md']");
}

TEST_CASE("the disk backend refuses NUL bytes and over-long names, through the tools and directly",
          "[middleware][filesystem]") {
    fs_test::temp_root t;
    fs_test::bench b{filesystem(disk_backend(t.root().string()))};
    // A NUL byte would cut the host path short ("/a" instead of "/a\0.txt").
    std::ofstream(t.root() / "a") << "not this one\n";
    for (std::string_view tool : {"read_file", "delete"})
        CHECK(b.text(tool, R"({"file_path": "/a\u0000.txt"})") == "Error: Path contains a NUL byte");
    CHECK(b.text("write_file", R"({"file_path": "/a\u0000", "content": "x"})") ==
          "Error: Path contains a NUL byte");
    CHECK(b.text("edit_file", R"({"file_path": "/a\u0000", "old_string": "not", "new_string": "x"})") ==
          "Error: Path contains a NUL byte");
    CHECK(b.text("ls", R"({"path": "/\u0000"})") == "Error: Path contains a NUL byte");
    CHECK(b.text("glob", R"({"pattern": "*", "path": "/\u0000"})") == "Error: Path contains a NUL byte");
    CHECK(b.text("grep", R"({"pattern": "not", "path": "/a\u0000"})") == "Error: Path contains a NUL byte");
    CHECK(b.text("mkdir", R"({"path": "/d\u0000"})") == "Error: Path contains a NUL byte");
    disk_backend direct(t.root().string());
    CHECK(direct.read(std::string_view("/a\0.txt", 7)).error == "Path contains a NUL byte");
    CHECK(direct.write(std::string_view("/a\0", 3), "x").error == "Path contains a NUL byte");
    CHECK(direct.remove(std::string_view("/a\0", 3)).error == "Path contains a NUL byte");
    CHECK(direct.read("/a").content == "not this one\n");

    // One name over 255 characters, and a path over 4096, are refused before the disk is touched.
    const std::string long_name(256, 'n');
    CHECK(b.text("write_file", "{\"file_path\": \"/" + long_name + "\", \"content\": \"x\"}") ==
          "Error: A path component is longer than 255 characters");
    CHECK(b.text("mkdir", "{\"path\": \"/d/" + long_name + "\"}") ==
          "Error: A path component is longer than 255 characters");
    std::string deep;
    for (int i = 0; i < 17; ++i)
        deep += "/" + std::string(255, static_cast<char>('a' + i));
    CHECK(b.text("write_file", "{\"file_path\": \"" + deep + "\", \"content\": \"x\"}") ==
          "Error: Path is longer than 4096 characters");
    // Within the virtual limit but past the host's once the root is prefixed: an
    // error, and no half-made directories left behind.
    std::string host_long;
    for (int i = 0; i < 16; ++i)
        host_long += "/" + std::string(255, static_cast<char>('a' + i));
    REQUIRE(host_long.size() == max_virtual_path_length);
    const std::string written =
        b.text("write_file", "{\"file_path\": \"" + host_long + "\", \"content\": \"x\"}");
    CHECK(written == "Error: Could not resolve '" + host_long + "': File name too long");
    CHECK(b.text("read_file", "{\"file_path\": \"" + host_long + "\"}").starts_with("Error: "));
    CHECK(b.text("ls", R"({"path": "/"})") == "['/a']");
    CHECK(get<files_field>(b.state).empty());
}

TEST_CASE("the composite backend refuses every hostile path through the tools", "[middleware][filesystem]") {
    fs_test::temp_root t;
    std::filesystem::create_symlink(t.dir / "outside", t.root() / "out_dir");
    std::filesystem::create_symlink(t.dir / "outside" / "secret.txt", t.root() / "out_file");
    disk_backend disk(t.root().string());
    fs_test::bench b{filesystem(
        [disk](const tool_runtime& rt) {
            return any_backend(composite_backend(state_backend(rt), {{"/memories/", disk}}));
        },
        filesystem_options{})};
    b.put("/a.txt", "a");
    const std::vector<std::pair<std::string, std::string>> hostile = {
        {R"(/memories/../../outside/secret.txt)",
         "Error: Path traversal not allowed: /memories/../../outside/secret.txt"},
        {R"(/memories/x/../../a.txt)", "Error: Path traversal not allowed: /memories/x/../../a.txt"},
        {R"(..\\outside\\secret.txt)", "Error: Path traversal not allowed: ..\\outside\\secret.txt"},
        {R"(~/memories/x)", "Error: Path traversal not allowed: ~/memories/x"},
        {R"(C:\\memories\\x)", "Error: Windows absolute paths are not supported: C:\\memories\\x. Please use "
                               "virtual paths starting with / (e.g., /workspace/file.txt)"},
        {R"(/memories/x\u0000.md)", "Error: Path contains a NUL byte"},
        {R"(/a.txt\u0000)", "Error: Path contains a NUL byte"},
        {"/memories/" + std::string(256, 'n'), "Error: A path component is longer than 255 characters"},
        {"/" + std::string(256, 'n'), "Error: A path component is longer than 255 characters"},
    };
    for (const auto& [path, error] : hostile) {
        INFO(path);
        CHECK(b.text("read_file", "{\"file_path\": \"" + path + "\"}") == error);
        CHECK(b.text("write_file", "{\"file_path\": \"" + path + "\", \"content\": \"x\"}") == error);
        CHECK(b.text("edit_file", "{\"file_path\": \"" + path +
                                      "\", \"old_string\": \"a\", \"new_string\": "
                                      "\"b\"}") == error);
        CHECK(b.text("delete", "{\"file_path\": \"" + path + "\"}") == error);
        CHECK(b.text("ls", "{\"path\": \"" + path + "\"}") == error);
        CHECK(b.text("glob", "{\"pattern\": \"*\", \"path\": \"" + path + "\"}") == error);
        CHECK(b.text("grep", "{\"pattern\": \"a\", \"path\": \"" + path + "\"}") == error);
        CHECK(b.text("mkdir", "{\"path\": \"" + path + "\"}") == error);
    }
    // Symlinks out of the routed disk root, named with the route's prefix.
    CHECK(b.text("read_file", R"({"file_path": "/memories/out_file"})") ==
          "Error: Path '/memories/out_file' leads outside the root directory");
    CHECK(b.text("write_file", R"({"file_path": "/memories/out_dir/new.txt", "content": "x"})") ==
          "Error: Path '/memories/out_dir/new.txt' leads outside the root directory");
    CHECK(b.text("delete", R"({"file_path": "/memories/out_dir/secret.txt"})") ==
          "Error: Path '/memories/out_dir/secret.txt' leads outside the root directory");
    CHECK(b.text("delete", R"({"file_path": "/memories"})") == "Error: Cannot delete the root directory");
    CHECK(b.text("grep", R"({"pattern": "secret"})") == "No matches found");
    CHECK(b.text("glob", R"({"pattern": "**"})") == "['/a.txt']");
    CHECK(b.text("ls", R"({"path": "/memories"})") == "No files found");
    // Patterns are matched inside the tree, never resolved: ".." in them finds nothing.
    CHECK(b.text("glob", R"({"pattern": "../outside/*"})") == "No files found");
    CHECK(b.text("grep", R"({"pattern": "secret", "glob": "../**"})") == "No matches found");
    // Nothing was written anywhere.
    CHECK(get<files_field>(b.state).size() == 1);
    CHECK(get<files_field>(b.state).count("/a.txt") == 1);
    CHECK(get<files_field>(b.state).at("/a.txt")->content == "a");
    CHECK_FALSE(std::filesystem::exists(t.dir / "outside" / "new.txt"));
    CHECK(std::filesystem::exists(t.dir / "outside" / "secret.txt"));
    std::size_t on_disk = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(t.root()))
        ++on_disk;
    CHECK(on_disk == 2); // the two links
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
    CHECK(state.messages[0].text().starts_with(
        "Message content too large and was saved to the filesystem at: " + path));
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
