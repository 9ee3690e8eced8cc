// The composite backend: /memories/ routed to disk and the rest to the state;
// every hostile path refused through the tools.
#include <agentware/filesystem/composite_backend.hpp>

#include "support.hpp"

#include <agentware/filesystem/disk_backend.hpp>
#include <agentware/filesystem/state_backend.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

using namespace agentware;

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
