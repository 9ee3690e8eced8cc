// Builds against the installed package and runs a two-middleware pipeline.
#include <agentware/core.hpp>

#include <cstdio>
#include <string>

struct state {
    std::string trace;
};
struct first {
    void before_model(state& s) { s.trace += "1"; }
};
struct second {
    void before_model(state& s) { s.trace += "2"; }
    void after_model(state& s) { s.trace += "3"; }
};

int main() {
    agentware::pipeline<first, second> p;
    state s;
    int runtime = 0;
    p.before_model(s, runtime);
    p.after_model(s, runtime);
    std::printf("agentware test_package: %s\n", s.trace.c_str());
    return s.trace == "123" ? 0 : 1;
}
