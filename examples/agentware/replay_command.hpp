#ifndef AGENTWARE_EXAMPLES_AGENTWARE_REPLAY_COMMAND_HPP
#define AGENTWARE_EXAMPLES_AGENTWARE_REPLAY_COMMAND_HPP

// `agentware replay [--check] [--base-dir DIR] SCENARIO.json`: runs a scenario
// (docs/replay.md) and prints the output JSON. Exit 0: ran (and every
// expectation held with --check); 1: an expectation failed; 2: the scenario
// or the command line is wrong.

#include "deep_replay.hpp"
#include "replay_runner.hpp"

#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace agentware_cli {

constexpr std::string_view replay_usage = R"(usage: agentware replay [--check] [--base-dir DIR] SCENARIO.json

Runs a scenario through an agent with a scripted model and prints, as JSON,
each turn's messages, state, model requests and stop reason (docs/replay.md).

  --check          also check the scenario's "expect" blocks; exit 1 if one fails
  --base-dir DIR   keep the thread's directories under DIR (default: a temporary
                   directory, removed afterwards)
  -                read the scenario from standard input
)";

inline int replay_main(const std::vector<std::string>& args) {
    bool check = false;
    std::string base_dir, file;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "-h" || a == "--help") {
            std::fputs(replay_usage.data(), stdout);
            return 0;
        } else if (a == "--check") {
            check = true;
        } else if (a == "--base-dir") {
            if (i + 1 >= args.size()) {
                std::fprintf(stderr, "agentware replay: --base-dir needs a directory\n");
                return 2;
            }
            base_dir = args[++i];
        } else if (file.empty() && (a == "-" || a.empty() || a.front() != '-')) {
            file = a;
        } else {
            std::fprintf(stderr,
                         "agentware replay: unexpected argument \"%s\" (see agentware replay --help)\n",
                         a.c_str());
            return 2;
        }
    }
    if (file.empty()) {
        std::fprintf(stderr, "agentware replay: name a scenario file (see agentware replay --help)\n");
        return 2;
    }
    std::string text;
    if (file == "-") {
        text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
        std::ifstream in(file, std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "agentware replay: cannot read \"%s\"\n", file.c_str());
            return 2;
        }
        text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    try {
        auto sc = parse_scenario(text);
        // A scenario's relative paths (features.skills.path) are taken from its file's folder.
        const std::string scenario_dir =
            file == "-" ? std::string() : std::filesystem::path(file).parent_path().string();
        auto result = sc.agent == "deep" ? run_deep_scenario(sc, {base_dir, scenario_dir})
                                         : run_scenario(sc, {base_dir, scenario_dir});
        std::string out = boost::json::serialize(result.output);
        std::fwrite(out.data(), 1, out.size(), stdout);
        std::fputc('\n', stdout);
        if (check) {
            for (const auto& f : result.failed_expectations)
                std::fprintf(stderr, "agentware replay: %s: %s\n", file.c_str(), f.c_str());
            if (!result.failed_expectations.empty()) return 1;
            std::fprintf(stderr, "agentware replay: %s: %zu expectations hold\n", file.c_str(),
                         result.checked_expectations);
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "agentware replay: %s: %s\n", file.c_str(), e.what());
        return 2;
    }
}

} // namespace agentware_cli

#endif
