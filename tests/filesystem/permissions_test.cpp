// Filesystem permissions: the first matching rule decides; results are filtered.
#include <agentware/filesystem/permissions.hpp>

#include "../support/json_errors.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_to.hpp>

#include <string>
#include <string_view>
#include <vector>

using namespace agentware;

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

TEST_CASE("a filesystem permission rule's errors name the rule, the key and the item",
          "[json_reader][options]") {
    const auto error_of = test_support::read_error<filesystem_options>;
    CHECK(error_of(R"({"permissions": [{"operations": ["read"], "paths": ["/a"]},
                                         {"operations": ["read"], "paths": ["/b"], "mode": "maybe"}]})") ==
          "filesystem.permissions[1].mode: expected \"allow\" or \"deny\", got \"maybe\"");
    CHECK(error_of(R"({"permissions": [{"operations": ["read", "exec"], "paths": ["/a"]}]})") ==
          "filesystem.permissions[0].operations[1]: expected \"read\" or \"write\", got \"exec\"");
    CHECK(error_of(R"({"permissions": [{"operations": ["read"], "paths": ["/a", "rel/b"]}]})") ==
          "filesystem.permissions[0].paths[1]: \"rel/b\" must start with / and hold no .. or ~");
    CHECK(error_of(R"({"permissions": [{"operations": ["read"], "paths": ["/a"], "mode": "interrupt"}]})") ==
          "filesystem.permissions[0].mode: \"interrupt\" needs the human_in_the_loop middleware (expected "
          "\"allow\" or \"deny\")");
    CHECK(error_of(R"({"permissions": [{"operations": ["read"], "paths": ["/a"], "mod": "deny"}]})") ==
          "filesystem.permissions[0].mod: unknown key (known: operations, paths, mode)");
    CHECK(
        error_of(R"({"permissions": [{"operations": ["write"], "paths": ["/a"], "mode": "deny"}]})").empty());
}
