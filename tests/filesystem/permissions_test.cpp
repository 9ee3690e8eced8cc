// Filesystem permissions: the first matching rule decides; results are filtered.
#include <agentware/filesystem/permissions.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_to.hpp>
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
