// A before_model that takes the wrong parameters must not be silently skipped.
#include <agentware/core.hpp>

struct state {};
struct runtime {};
struct bad_before_model {
    void before_model(int missing_state, const char* missing_runtime);
    void after_model(state&); // a valid hook beside it does not hide the error
};

void use() {
    agentware::pipeline<bad_before_model> p;
    state s;
    runtime rt;
    p.before_model(s, rt);
}
