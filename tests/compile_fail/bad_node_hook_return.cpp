// A node hook may return void, jump_to or hook_result; anything else is an error.
#include <agentware/core.hpp>

struct state {};
struct runtime {};
struct bad_after_agent_return {
    int after_agent(state&, runtime&) { return 1; }
};

void use() {
    agentware::pipeline<bad_after_agent_return> p;
    state s;
    runtime rt;
    p.after_agent(s, rt);
}
