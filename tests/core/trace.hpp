#ifndef AGENTWARE_TESTS_CORE_TRACE_HPP
#define AGENTWARE_TESTS_CORE_TRACE_HPP

// Plain state, runtime and request types for the core tests: the pipeline is
// a template over them, so it needs no messages or JSON here.
#include <agentware/core.hpp>

#include <string>
#include <vector>

namespace test {

struct state {
    std::vector<std::string> trace;
    int counter = 0;
};
struct runtime {
    std::string thread_id = "t1";
};
struct request {
    std::string text;
};
struct response {
    std::string text;
};

// A middleware with every hook, which records "<name>.<hook>" into the trace.
template <char Name>
struct recorder {
    std::vector<std::string>* log = nullptr;
    std::string tag(const char* hook) const { return std::string(1, Name) + "." + hook; }

    void before_agent(state& s, runtime&) { s.trace.push_back(tag("before_agent")); }
    void before_model(state& s, runtime&) { s.trace.push_back(tag("before_model")); }
    void after_model(state& s, runtime&) { s.trace.push_back(tag("after_model")); }
    void after_agent(state& s, runtime&) { s.trace.push_back(tag("after_agent")); }
    response wrap_model_call(request& r, auto&& next) {
        if (log) log->push_back(tag("wrap_model_call>"));
        r.text += Name;
        response out = next(r);
        out.text += Name;
        if (log) log->push_back(tag("wrap_model_call<"));
        return out;
    }
    response wrap_tool_call(request& r, auto&& next) {
        r.text += Name;
        return next(r);
    }
};

} // namespace test

#endif
