#ifndef AGENTWARE_TESTS_AGENT_SUPPORT_HPP
#define AGENTWARE_TESTS_AGENT_SUPPORT_HPP

// The agent without the HTTP clients and middlewares: these tests compile faster.
#include <agentware/agent/agent.hpp>
#include <agentware/agent/file_checkpointer.hpp>
#include <agentware/agent/memory_checkpointer.hpp>
#include <agentware/message.hpp>
#include <agentware/model/scripted_model.hpp>
#include <agentware/tool/make_tool.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/json/parse.hpp>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace test {

// A tool whose calls wait until `expected` of them are inside it at once, so
// `all_met()` is true only if the calls really overlapped. It answers with its
// "n" argument. (Waits at most ten seconds, so a failure cannot hang.)
struct rendezvous {
    explicit rendezvous(int expected) : shared(std::make_shared<state>(expected)) {}
    struct state {
        explicit state(int e) : expected(e) {}
        std::mutex m;
        std::condition_variable cv;
        int expected, arrived = 0, met = 0;
    };
    std::shared_ptr<state> shared;

    auto tool() const {
        return agentware::make_tool(
            "gather", "Waits for the others.", boost::json::object{},
            [s = shared](const boost::json::object& args) {
                std::unique_lock lock(s->m);
                ++s->arrived;
                s->cv.notify_all();
                if (s->cv.wait_for(lock, std::chrono::seconds(10), [&] { return s->arrived >= s->expected; }))
                    ++s->met;
                return std::string(args.at("n").as_string());
            });
    }
    bool all_met() const {
        std::lock_guard lock(shared->m);
        return shared->met == shared->expected;
    }
};

inline agentware::tool_call call(std::string id, std::string name, std::string args_json = "{}") {
    return agentware::tool_call{std::move(id), std::move(name), boost::json::parse(args_json).as_object()};
}

inline agentware::message calls(std::vector<agentware::tool_call> cs, std::string text = {}) {
    return agentware::ai_message(std::move(text), std::move(cs));
}

// Answers with its "text" argument.
inline auto echo_tool() {
    return agentware::make_tool(
        "echo", "Repeats the text.",
        R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})",
        [](const boost::json::object& args) { return std::string(args.at("text").as_string()); });
}

inline std::vector<std::string> roles(const std::vector<agentware::message>& ms) {
    std::vector<std::string> out;
    for (const auto& m : ms)
        out.push_back(fmt::format("{}", m.type));
    return out;
}

} // namespace test

#endif
