#ifndef AGENTWARE_TESTS_MIDDLEWARE_HUMAN_IN_THE_LOOP_SUPPORT_HPP
#define AGENTWARE_TESTS_MIDDLEWARE_HUMAN_IN_THE_LOOP_SUPPORT_HPP

// Helpers for the human_in_the_loop, tool_approval and ask_user tests: file
// tools that count their runs, the tool message answering a call, resume values.

#include "../agent/support.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace hitl_test {

using namespace agentware;

struct counter {
    std::mutex m;
    std::map<std::string, int> runs;
    std::map<std::string, std::string> args;
    void count(std::string_view id, const boost::json::object& a) {
        std::lock_guard lock(m);
        ++runs[std::string(id)];
        args[std::string(id)] = boost::json::serialize(a);
    }
    int of(const std::string& id) {
        std::lock_guard lock(m);
        return runs[id];
    }
};

inline auto file_tool(std::string name, std::shared_ptr<counter> c) {
    return make_tool(std::move(name), "A file tool.", boost::json::object{},
                     [c](const boost::json::object& args, const tool_runtime& rt) {
                         c->count(rt.tool_call_id, args);
                         return std::string("ok");
                     });
}

inline tool_set files(std::shared_ptr<counter> c) {
    return tool_set(file_tool("write_file", c), file_tool("read_file", c), file_tool("delete", c));
}

inline const message* answer_to(const std::vector<message>& ms, std::string_view id) {
    for (const auto& m : ms)
        if (m.is_tool() && m.tool_call_id() == id) return &m;
    return nullptr;
}

inline boost::json::value decisions(std::string_view json) {
    return boost::json::parse(std::string(R"({"decisions":)") + std::string(json) + "}");
}

} // namespace hitl_test

#endif // AGENTWARE_TESTS_MIDDLEWARE_HUMAN_IN_THE_LOOP_SUPPORT_HPP
