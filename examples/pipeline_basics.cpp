// The core pipeline on its own: three middlewares, one optional, and the
// order in which their hooks run.
#include <agentware/core.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

struct state {
    std::vector<std::string> log;
};
struct runtime {};
struct request {
    std::string prompt;
};

struct audit {
    void before_model(state& s, runtime&) { s.log.push_back("audit: before_model"); }
    void after_model(state& s, runtime&) { s.log.push_back("audit: after_model"); }
};
struct shouting {
    std::string wrap_model_call(request& r, auto&& next) { return next(r) + "!"; }
};
struct budget {
    int rounds_left = 1;
    agentware::hook_result before_model(state& s) {
        s.log.push_back("budget: before_model");
        if (rounds_left-- == 0) return agentware::jump_to::end;
        return {};
    }
};

int main() {
    agentware::pipeline<audit, std::optional<shouting>, budget> p{audit{}, std::nullopt, budget{}};
    p.slot<shouting>().emplace(); // switched on by configuration at run time
    state s;
    runtime rt;
    for (int round = 0; round < 3; ++round) {
        if (auto jump = p.before_model(s, rt)) {
            std::printf("round %d: a hook jumped to %s\n", round, agentware::to_string(*jump).data());
            break;
        }
        request r{"hello"};
        std::string answer = p.wrap_model_call(r, [](request& q) { return "echo " + q.prompt; });
        std::printf("round %d: model answered \"%s\"\n", round, answer.c_str());
        p.after_model(s, rt);
    }
    for (auto& line : s.log)
        std::printf("  %s\n", line.c_str());
}
