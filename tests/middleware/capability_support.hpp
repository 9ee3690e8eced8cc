#ifndef AGENTWARE_TESTS_MIDDLEWARE_CAPABILITY_SUPPORT_HPP
#define AGENTWARE_TESTS_MIDDLEWARE_CAPABILITY_SUPPORT_HPP

// Helpers for the host capabilities' tests (search_tools, text_tools, git_tools,
// shell_tools): a working directory with a few files and a secret outside it,
// and a call of one of a capability's tools by name.

#include <agentware/tool/tool.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace capabilities_test {

using namespace agentware;
namespace fs = std::filesystem;

struct capability_dir {
    fs::path root;
    capability_dir() {
        std::random_device rd;
        root = fs::temp_directory_path() / ("agentware-cap-" + std::to_string(rd()));
        fs::create_directories(root / "src" / "deep");
        write("src/main.cpp", "int main() {\n    return answer();\n}\n");
        write("src/deep/util.cpp", "int answer() { return 42; }\n");
        write("notes.txt", "one\ntwo\nthree\nfour\nfive\n");
        write("notes2.txt", "one\ntwo\nTHREE\nfour\nfive\n");
        fs::create_directories(root.parent_path() / (root.filename().string() + "-outside"));
        std::ofstream(root.parent_path() / (root.filename().string() + "-outside") / "secret.txt")
            << "secret answer\n";
    }
    ~capability_dir() {
        std::error_code ec;
        fs::remove_all(root, ec);
        fs::remove_all(root.parent_path() / (root.filename().string() + "-outside"), ec);
    }
    void write(const std::string& rel, const std::string& text) const { std::ofstream(root / rel) << text; }
    fs::path outside() const { return root.parent_path() / (root.filename().string() + "-outside"); }
};

inline tool_output run_tool(const std::vector<std::shared_ptr<tool_interface>>& tools, std::string_view name,
                            std::string_view args) {
    for (const auto& t : tools)
        if (t->schema().name == name) return t->call(boost::json::parse(args).as_object(), tool_runtime{});
    FAIL("no tool " << name);
    return {};
}

} // namespace capabilities_test

#endif // AGENTWARE_TESTS_MIDDLEWARE_CAPABILITY_SUPPORT_HPP
