// validate_path: traversal, home and drive paths refused with deepagents' texts; normalisation; limits.
#include <agentware/filesystem/paths.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace agentware;

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
