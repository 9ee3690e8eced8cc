// A config.yaml section read through the installed package's component yaml.
#include <agentware/config/yaml.hpp>
#include <agentware/src.hpp> // Boost.JSON's implementation, in one file of the program

#include <cstdio>
#include <string_view>

int main() {
    auto config = agentware::read_deerflow_config(
        agentware::yaml_to_json("title:\n  max_words: 6\nlog_level: info\n"), [](std::string_view) {});
    const bool ok =
        config.sections.at("title").as_object().at("max_words").as_int64() == 6 && config.ignored.size() == 1;
    std::printf("agentware test_package (yaml): %s\n", ok ? "ok" : "wrong");
    return ok ? 0 : 1;
}
