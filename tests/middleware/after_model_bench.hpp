#ifndef AGENTWARE_TESTS_MIDDLEWARE_AFTER_MODEL_BENCH_HPP
#define AGENTWARE_TESTS_MIDDLEWARE_AFTER_MODEL_BENCH_HPP

// Feeding answers to an after_model guard (loop_detection, subagent_limit) as
// the agent would, without an agent.
#include "../agent/support.hpp"

#include <string>
#include <utility>
#include <vector>

namespace test {

using plain_state = agentware::basic_state<agentware::type_list<>>;

// Feeds answers to an after_model guard as the agent would.
template <class Guard>
struct bench {
    Guard guard;
    plain_state state;
    agentware::runtime rt{"thread-1", "run-1", {}, 0};

    bench() = default;
    explicit bench(Guard g) : guard(std::move(g)) {}

    const agentware::message& answer(agentware::message ai) {
        state.messages.push_back(std::move(ai));
        guard.after_model(state, rt);
        return state.messages.back();
    }
    const agentware::message& answer(std::vector<agentware::tool_call> calls, std::string text = {}) {
        return answer(agentware::ai_message(std::move(text), std::move(calls)));
    }
};

inline agentware::tool_call task(std::string id) {
    return test::call(std::move(id), "task", R"({"description":"d","prompt":"p"})");
}

} // namespace test

#endif
