// The state backend: a directory listed without walking the other files.
#include <agentware/filesystem/state_backend.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace agentware;

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
