#ifndef AGENTWARE_TESTS_MEMORY_SUPPORT_HPP
#define AGENTWARE_TESTS_MEMORY_SUPPORT_HPP

// Helpers for the memory subsystem's tests: an update item, a scripted memory
// model, the memory model's JSON answers, options on a temporary directory,
// a stored fact, a point in time.

#include "../middleware/deerflow_support.hpp"

#include <agentware/memory/manager.hpp>

#include <boost/json/serialize.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace memory_test {

using namespace agentware;
using dftest::temp_dir;

inline memory_update_item item_for(std::string thread, std::vector<std::string> signals = {}) {
    memory_update_item i;
    i.thread_id = std::move(thread);
    i.user_id = "alice";
    i.agent_name = "__default__";
    i.messages = {human_message("hi there friend"), ai_message("hello")};
    i.signals = std::move(signals);
    return i;
}

// A memory model that answers with `text` and counts its calls.
struct canned_model {
    std::shared_ptr<std::vector<std::string>> answers = std::make_shared<std::vector<std::string>>();
    std::shared_ptr<std::vector<std::string>> prompts = std::make_shared<std::vector<std::string>>();
    memory_model fn() const {
        return [a = answers, p = prompts](const chat_request& r) {
            p->push_back(r.messages.back().text());
            if (a->empty()) throw std::runtime_error("no scripted answer left");
            model_response out;
            out.ai = ai_message(a->front());
            a->erase(a->begin());
            return out;
        };
    }
};

inline std::string fact_json(std::string content, double confidence = 0.9,
                             std::string category = "preference", std::string scope = "user",
                             std::string durability = "durable", std::string authority = "descriptive") {
    return boost::json::serialize(boost::json::object{{"content", content},
                                                      {"category", category},
                                                      {"confidence", confidence},
                                                      {"scope", scope},
                                                      {"durability", durability},
                                                      {"authority", authority}});
}

inline std::string update_json(std::vector<std::string> facts, std::string extra = {}) {
    std::string out = R"({"user": {}, "history": {}, "newFacts": [)";
    for (std::size_t i = 0; i < facts.size(); ++i)
        out += (i ? "," : "") + facts[i];
    return out + "]" + extra + "}";
}

inline memory_options options_at(const temp_dir& dir) {
    memory_options o;
    o.backend_config.storage_path = dir.path.string();
    o.shutdown_flush_timeout_seconds = 5;
    return o;
}

inline memory_fact fact(std::string id, std::string content, double confidence = 0.9,
                        std::string category = "context") {
    memory_fact f;
    f.id = std::move(id);
    f.content = std::move(content);
    f.confidence = confidence;
    f.category = std::move(category);
    f.created_at = "2026-11-01T00:00:00Z";
    f.source = "thread-1";
    return f;
}

} // namespace memory_test

namespace memory_eviction {

inline agentware::memory_clock::time_point at(int y, unsigned mo, unsigned d, int h = 0) {
    return std::chrono::sys_days(std::chrono::year(y) / mo / d) + std::chrono::hours(h);
}

} // namespace memory_eviction

#endif // AGENTWARE_TESTS_MEMORY_SUPPORT_HPP
