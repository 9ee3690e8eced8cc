#ifndef AGENTWARE_TESTS_FILESYSTEM_SUPPORT_HPP
#define AGENTWARE_TESTS_FILESYSTEM_SUPPORT_HPP

// Helpers for the filesystem tests: the filesystem middleware's tools called
// on a state with the `files` field, and a temporary root with a secret outside it.

#include "../agent/support.hpp"

#include <agentware/middleware/filesystem.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include <unistd.h>

namespace fs_test {

using namespace agentware;

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

} // namespace fs_test

#endif // AGENTWARE_TESTS_FILESYSTEM_SUPPORT_HPP
