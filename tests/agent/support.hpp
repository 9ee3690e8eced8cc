#ifndef AGENTWARE_TESTS_AGENT_SUPPORT_HPP
#define AGENTWARE_TESTS_AGENT_SUPPORT_HPP

#include <agentware.hpp>

#include <boost/json/parse.hpp>

#include <string>
#include <vector>

namespace test {

inline agentware::tool_call call(std::string id, std::string name, std::string args_json = "{}") {
    return agentware::tool_call{std::move(id), std::move(name), boost::json::parse(args_json).as_object()};
}

inline agentware::message calls(std::vector<agentware::tool_call> cs, std::string text = {}) {
    return agentware::ai_message(std::move(text), std::move(cs));
}

// Answers with its "text" argument.
inline auto echo_tool() {
    return agentware::make_tool("echo", "Repeats the text.",
                                R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})",
                                [](const boost::json::object& args) {
                                    return std::string(args.at("text").as_string());
                                });
}

inline std::vector<std::string> roles(const std::vector<agentware::message>& ms) {
    std::vector<std::string> out;
    for (const auto& m : ms) out.push_back(fmt::format("{}", m.type));
    return out;
}

} // namespace test

#endif
