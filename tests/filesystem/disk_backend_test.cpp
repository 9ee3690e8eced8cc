// The disk backend: inside its root (symlinks included), its tools, NUL bytes and
// over-long names refused.
#include <agentware/filesystem/disk_backend.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

using namespace agentware;

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

TEST_CASE("the disk backend: an empty old_string fills an empty file, and is ambiguous in a full one",
          "[middleware][filesystem]") {
    fs_test::temp_root t;
    std::ofstream(t.root() / "empty.txt").flush();
    std::ofstream(t.root() / "full.txt") << "ab";
    disk_backend disk(t.root().string());
    const auto filled = disk.edit("/empty.txt", "", "new\n", false);
    CHECK(filled.error.empty());
    CHECK(filled.occurrences == 1);
    std::ifstream in(t.root() / "empty.txt");
    CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == "new\n");
    const auto refused = disk.edit("/full.txt", "", "x", false);
    CHECK(refused.error ==
          "String '' appears 3 times in file. Use replace_all=True to replace all instances, or "
          "provide a more specific string with surrounding context.");
    std::ifstream kept(t.root() / "full.txt");
    CHECK(std::string(std::istreambuf_iterator<char>(kept), {}) == "ab");
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
