#include "trace.hpp"

#include <catch2/catch.hpp>

using test::recorder;
using strings = std::vector<std::string>;

TEST_CASE("before hooks run in list order and after hooks in reverse", "[pipeline][order]") {
    agentware::pipeline<recorder<'a'>, recorder<'b'>, recorder<'c'>> p;
    test::state s;
    test::runtime rt;
    p.before_agent(s, rt);
    p.before_model(s, rt);
    p.after_model(s, rt);
    p.after_agent(s, rt);
    CHECK(s.trace == strings{"a.before_agent", "b.before_agent", "c.before_agent", "a.before_model",
                             "b.before_model", "c.before_model", "c.after_model", "b.after_model",
                             "a.after_model", "c.after_agent", "b.after_agent", "a.after_agent"});
}

TEST_CASE("wrap hooks nest with the first-listed middleware outermost", "[pipeline][order][wrap]") {
    strings log;
    agentware::pipeline<recorder<'a'>, recorder<'b'>, recorder<'c'>> p{
        recorder<'a'>{&log}, recorder<'b'>{&log}, recorder<'c'>{&log}};
    test::request req{">"};
    std::string seen_by_model;
    auto out = p.wrap_model_call(req, [&](test::request& r) {
        seen_by_model = r.text;
        log.push_back("model");
        return test::response{"<"};
    });
    CHECK(seen_by_model == ">abc"); // the request flowed a -> b -> c
    CHECK(out.text == "<cba");      // the response flowed back c -> b -> a
    CHECK(log == strings{"a.wrap_model_call>", "b.wrap_model_call>", "c.wrap_model_call>", "model",
                         "c.wrap_model_call<", "b.wrap_model_call<", "a.wrap_model_call<"});
}

namespace {
// The middlewares of DeerFlow's lead agent with exactly the hooks of its table.
#define RECORD(hook)                                                                                         \
    void hook(test::state& s, test::runtime&) { s.trace.push_back(std::string(name) + "." #hook); }
#define WRAP(hook)                                                                                           \
    test::response hook(test::request& r, auto&& next) {                                                     \
        r.text += std::string(name) + " ";                                                                   \
        return next(r);                                                                                      \
    }
struct thread_data {
    static constexpr const char* name = "thread_data";
    RECORD(before_agent)
};
struct uploads {
    static constexpr const char* name = "uploads";
    RECORD(before_agent)
};
struct sandbox {
    static constexpr const char* name = "sandbox";
    RECORD(before_agent) RECORD(after_agent)
};
struct dangling_tool_call {
    static constexpr const char* name = "dangling";
    WRAP(wrap_model_call)
};
struct guardrail {
    static constexpr const char* name = "guardrail";
    WRAP(wrap_tool_call)
};
struct tool_error_handling {
    static constexpr const char* name = "tool_errors";
    WRAP(wrap_tool_call)
};
struct summarization {
    static constexpr const char* name = "summarization";
    RECORD(before_model)
};
struct todo {
    static constexpr const char* name = "todo";
    RECORD(before_model) RECORD(after_model) WRAP(wrap_model_call)
};
struct title {
    static constexpr const char* name = "title";
    RECORD(after_model)
};
struct memory {
    static constexpr const char* name = "memory";
    RECORD(after_agent)
};
struct view_image {
    static constexpr const char* name = "view_image";
    RECORD(before_model)
};
struct subagent_limit {
    static constexpr const char* name = "subagent_limit";
    RECORD(after_model)
};
struct loop_detection {
    static constexpr const char* name = "loop_detection";
    RECORD(before_agent) RECORD(after_model) RECORD(after_agent) WRAP(wrap_model_call)
};
struct clarification {
    static constexpr const char* name = "clarification";
    WRAP(wrap_tool_call)
};
#undef RECORD
#undef WRAP
} // namespace

TEST_CASE("the DeerFlow chain runs in the order of its execution-flow diagram",
          "[pipeline][order][deerflow]") {
    agentware::pipeline<thread_data, uploads, sandbox, dangling_tool_call, guardrail, tool_error_handling,
                        summarization, todo, title, memory, view_image, subagent_limit, loop_detection,
                        clarification>
        p;
    test::state s;
    test::runtime rt;
    p.before_agent(s, rt);
    CHECK(s.trace == strings{"thread_data.before_agent", "uploads.before_agent", "sandbox.before_agent",
                             "loop_detection.before_agent"});
    s.trace.clear();
    p.before_model(s, rt);
    CHECK(s.trace == strings{"summarization.before_model", "todo.before_model", "view_image.before_model"});
    test::request req;
    p.wrap_model_call(req, [](test::request& r) { return test::response{r.text}; });
    CHECK(req.text == "dangling todo loop_detection ");
    s.trace.clear();
    p.after_model(s, rt);
    // The last middleware's after_model runs first.
    CHECK(s.trace == strings{"loop_detection.after_model", "subagent_limit.after_model", "title.after_model",
                             "todo.after_model"});
    test::request tool_req;
    p.wrap_tool_call(tool_req, [](test::request& r) { return test::response{r.text}; });
    CHECK(tool_req.text == "guardrail tool_errors clarification ");
    s.trace.clear();
    p.after_agent(s, rt);
    CHECK(s.trace == strings{"loop_detection.after_agent", "memory.after_agent", "sandbox.after_agent"});
}
