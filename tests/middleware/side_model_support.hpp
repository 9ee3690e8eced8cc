#ifndef AGENTWARE_TESTS_MIDDLEWARE_SIDE_MODEL_SUPPORT_HPP
#define AGENTWARE_TESTS_MIDDLEWARE_SIDE_MODEL_SUPPORT_HPP

// Helpers for the tests of the middlewares that ask a side model about the
// tools (llm_tool_selector, tool_emulator): five tools that answer "real <name>".

#include "../agent/support.hpp"

#include <boost/json/object.hpp>

#include <string>

namespace side_model_test {

using namespace agentware;

inline auto named_tool(std::string name) {
    return make_tool(name, "The " + name + " tool.", R"({"type":"object"})",
                     [name](const boost::json::object&) { return "real " + name; });
}
inline tool_set five() {
    return tool_set(named_tool("search"), named_tool("weather"), named_tool("calendar"), named_tool("mail"),
                    named_tool("maps"));
}

} // namespace side_model_test

#endif // AGENTWARE_TESTS_MIDDLEWARE_SIDE_MODEL_SUPPORT_HPP
