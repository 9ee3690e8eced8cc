// tool/interrupt.hpp: interrupt and resume in both agent loops: hooks and tools pause a run,
// the checkpointer keeps it, `resume{value}` continues it where it stopped.
#include <agentware/tool/interrupt.hpp>

#include "../agent/run_async.hpp"
#include "../agent/support.hpp"

#include <agentware/agent/async_loop.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <unistd.h>

using namespace agentware;
using strings = std::vector<std::string>;

namespace interrupt_test {

// Counts each call of each tool call id.
struct call_counter {
    std::mutex m;
    std::map<std::string, int> runs;
    void count(std::string_view id) {
        std::lock_guard lock(m);
        ++runs[std::string(id)];
    }
    int of(const std::string& id) {
        std::lock_guard lock(m);
        return runs[id];
    }
};

// "work" answers "done {n}"; "ask" interrupts with its question and answers
// with the resume value.
inline tool_set tools(std::shared_ptr<call_counter> counter) {
    auto work = make_tool("work", "Does work.", boost::json::object{},
                          [counter](const boost::json::object& args, const tool_runtime& rt) {
                              counter->count(rt.tool_call_id);
                              return "done " + std::string(args.at("n").as_string());
                          });
    auto ask = make_tool(
        "ask", "Asks the user.", boost::json::object{},
        [counter](const boost::json::object& args, const tool_runtime& rt) {
            counter->count(rt.tool_call_id);
            boost::json::value answer = rt.interrupt(boost::json::object{{"question", args.at("q")}});
            return "answer: " + std::string(answer.as_string());
        });
    return tool_set(work, ask);
}

// An after_model hook that holds the calls named "risky" for review, and
// records what the resume gave it.
struct review {
    std::shared_ptr<std::vector<boost::json::value>> answers =
        std::make_shared<std::vector<boost::json::value>>();
    void after_model(auto& state, runtime& rt) {
        const auto& ms = state.messages;
        const std::size_t at = agentware::detail::last_ai_index(ms);
        if (at == static_cast<std::size_t>(-1)) return;
        const message& ai = ms[at];
        std::vector<std::string> held;
        boost::json::array names;
        for (const auto& c : ai.tool_calls)
            if (c.name == "risky" && !agentware::detail::answered_after(ms, at, c.id)) {
                held.push_back(c.id);
                names.push_back(boost::json::value(c.id));
            }
        if (held.empty()) return;
        answers->push_back(rt.interrupt(boost::json::object{{"review", names}}, held));
    }
};

// A before_model hook that asks before the run's first model call.
struct gate {
    void before_model(auto&, runtime& rt) {
        if (rt.round == 1) rt.interrupt(boost::json::value("may I?"));
    }
};

inline std::string tool_text(const std::vector<message>& ms, std::string_view id) {
    for (const auto& m : ms)
        if (m.is_tool() && m.tool_call_id() == id) return m.text();
    return "<none>";
}

class temp_dir {
public:
    temp_dir() {
        static std::atomic<int> n{0};
        path_ = std::filesystem::temp_directory_path() /
                ("agentware-interrupt-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
        std::filesystem::create_directories(path_);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

} // namespace interrupt_test

using interrupt_test::call_counter;
using interrupt_test::tool_text;

TEST_CASE("a tool interrupts: its siblings run once, the resume answers it", "[agent][interrupt]") {
    auto counter = std::make_shared<call_counter>();
    scripted_model model(
        {test::calls({test::call("c1", "work", R"({"n":"1"})"), test::call("c2", "ask", R"({"q":"color?"})"),
                      test::call("c3", "work", R"({"n":"3"})")}),
         ai_message("all done")});
    auto a = make_agent(model, interrupt_test::tools(counter));
    a.use_checkpointer(memory_checkpointer{});
    run_config cfg;
    cfg.thread_id = "t1";

    auto r = a.invoke("go", cfg);
    REQUIRE(r.reason == stop_reason::interrupted);
    CHECK(to_string(r.reason) == "interrupted");
    REQUIRE(r.interrupts.size() == 1);
    CHECK(r.interrupts[0].id == "c2");
    CHECK(r.interrupts[0].value == boost::json::parse(R"({"question":"color?"})"));
    // The siblings' results are kept; the interrupted call has none yet.
    CHECK(tool_text(r.state.messages, "c1") == "done 1");
    CHECK(tool_text(r.state.messages, "c3") == "done 3");
    CHECK(tool_text(r.state.messages, "c2") == "<none>");
    CHECK(model.calls() == 1);

    // New input is refused while the thread waits.
    auto refused = a.invoke("hello?", cfg);
    CHECK(refused.reason == stop_reason::error);
    CHECK_THAT(refused.error, Catch::Contains("waiting for its answer"));

    auto done = a.invoke(resume{"blue"}, cfg);
    REQUIRE(done.reason == stop_reason::finished);
    CHECK(tool_text(done.state.messages, "c2") == "answer: blue");
    CHECK(done.answer() == "all done");
    CHECK(counter->of("c1") == 1);
    CHECK(counter->of("c3") == 1);
    CHECK(counter->of("c2") == 2); // interrupted once, then answered
    CHECK(test::roles(done.state.messages) == strings{"human", "ai", "tool", "tool", "tool", "ai"});
    CHECK_FALSE(done.state.unknown_fields.contains("__interrupt__"));

    // Nothing left to resume.
    auto again = a.invoke(resume{"red"}, cfg);
    CHECK(again.reason == stop_reason::error);
    CHECK_THAT(again.error, Catch::Contains("no interrupted run to resume"));
}

TEST_CASE("interrupting without a checkpointer is a clear error, run() keeps the pause in the state",
          "[agent][interrupt]") {
    auto counter = std::make_shared<call_counter>();
    scripted_model model({test::calls({test::call("c1", "ask", R"({"q":"?"})")}), ai_message("ok")});
    auto a = make_agent(model, interrupt_test::tools(counter));
    auto r = a.invoke("go");
    CHECK(r.reason == stop_reason::error);
    CHECK_THAT(r.error, Catch::Contains("no checkpointer"));
    REQUIRE(r.interrupts.size() == 1); // the payload is not lost
    auto res = a.invoke(resume{"x"});
    CHECK(res.reason == stop_reason::error);
    CHECK_THAT(res.error, Catch::Contains("no checkpointer"));

    // With a state the caller keeps, the state is the checkpoint.
    scripted_model model2({test::calls({test::call("c1", "ask", R"({"q":"?"})")}), ai_message("ok")});
    auto b = make_agent(model2, interrupt_test::tools(counter));
    agent_state<pipeline<>> state;
    REQUIRE(b.run(state, "go").reason == stop_reason::interrupted);
    auto fin = b.run(state, resume{"yes"});
    REQUIRE(fin.reason == stop_reason::finished);
    CHECK(tool_text(state.messages, "c1") == "answer: yes");
}

TEST_CASE("an after_model hook holds the reviewed calls: the others run before the pause, never twice",
          "[agent][interrupt]") {
    auto counter = std::make_shared<call_counter>();
    auto risky = make_tool("risky", "Risky.", boost::json::object{},
                           [counter](const boost::json::object&, const tool_runtime& rt) {
                               counter->count(rt.tool_call_id);
                               return std::string("risky ran");
                           });
    tool_set ts = interrupt_test::tools(counter);
    ts.add(risky);
    scripted_model model({test::calls({test::call("c1", "work", R"({"n":"1"})"), test::call("c2", "risky"),
                                       test::call("c3", "work", R"({"n":"3"})")}),
                          ai_message("finished")});
    interrupt_test::review hook;
    auto a = make_agent(model, ts, hook);
    a.use_checkpointer(memory_checkpointer{});

    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::interrupted);
    REQUIRE(r.interrupts.size() == 1);
    CHECK(r.interrupts[0].id == "after_model");
    CHECK(r.interrupts[0].value == boost::json::parse(R"({"review":["c2"]})"));
    CHECK(counter->of("c1") == 1);
    CHECK(counter->of("c3") == 1);
    CHECK(counter->of("c2") == 0);

    auto done = a.invoke(resume{boost::json::parse(R"({"ok":true})")});
    REQUIRE(done.reason == stop_reason::finished);
    REQUIRE(hook.answers->size() == 1);
    CHECK((*hook.answers)[0] == boost::json::parse(R"({"ok":true})"));
    CHECK(counter->of("c1") == 1);
    CHECK(counter->of("c2") == 1);
    CHECK(counter->of("c3") == 1);
    CHECK(tool_text(done.state.messages, "c2") == "risky ran");
    CHECK(done.answer() == "finished");
}

TEST_CASE("several tools interrupt in one round: the resume answers each by id", "[agent][interrupt]") {
    auto counter = std::make_shared<call_counter>();
    scripted_model model(
        {test::calls({test::call("a1", "ask", R"({"q":"one"})"), test::call("a2", "ask", R"({"q":"two"})"),
                      test::call("w", "work", R"({"n":"w"})")}),
         ai_message("ok")});
    auto a = make_agent(model, interrupt_test::tools(counter));
    a.use_checkpointer(memory_checkpointer{});
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::interrupted);
    REQUIRE(r.interrupts.size() == 2);
    CHECK(r.interrupts[0].id == "a1");
    CHECK(r.interrupts[1].id == "a2");

    // A value that does not name every interrupt: an error, and still paused.
    auto bad = a.invoke(resume{"both"});
    CHECK(bad.reason == stop_reason::error);
    CHECK_THAT(bad.error, Catch::Contains("missing: a1, a2"));
    auto partial = a.invoke(resume{boost::json::parse(R"({"a1":"x"})")});
    CHECK(partial.reason == stop_reason::error);
    CHECK_THAT(partial.error, Catch::Contains("missing: a2"));

    auto done = a.invoke(resume{boost::json::parse(R"({"a1":"first","a2":"second"})")});
    REQUIRE(done.reason == stop_reason::finished);
    CHECK(tool_text(done.state.messages, "a1") == "answer: first");
    CHECK(tool_text(done.state.messages, "a2") == "answer: second");
    CHECK(counter->of("w") == 1);
}

TEST_CASE("a paused run resumes after a restart: a new agent on the same file checkpointer",
          "[agent][interrupt][checkpointer]") {
    interrupt_test::temp_dir dir;
    auto counter = std::make_shared<call_counter>();
    run_config cfg;
    cfg.thread_id = "restart";
    {
        scripted_model model({test::calls(
            {test::call("c1", "work", R"({"n":"1"})"), test::call("c2", "ask", R"({"q":"name?"})")})});
        auto a = make_agent(model, interrupt_test::tools(counter));
        a.use_checkpointer(file_checkpointer(dir.path()));
        REQUIRE(a.invoke("go", cfg).reason == stop_reason::interrupted);
    }
    scripted_model model({ai_message("hello Ada")});
    auto b = make_agent(model, interrupt_test::tools(counter));
    b.use_checkpointer(file_checkpointer(dir.path()));
    auto done = b.invoke(resume{"Ada"}, cfg);
    REQUIRE(done.reason == stop_reason::finished);
    CHECK(tool_text(done.state.messages, "c2") == "answer: Ada");
    CHECK(counter->of("c1") == 1);
    CHECK(done.answer() == "hello Ada");
}

TEST_CASE("the coroutine loop pauses and resumes the same way", "[agent][interrupt][async]") {
    auto counter = std::make_shared<call_counter>();
    auto risky = make_tool("risky", "Risky.", boost::json::object{},
                           [counter](const boost::json::object&, const tool_runtime& rt) {
                               counter->count(rt.tool_call_id);
                               return std::string("risky ran");
                           });
    tool_set ts = interrupt_test::tools(counter);
    ts.add(risky);
    scripted_model model({test::calls({test::call("c1", "work", R"({"n":"1"})"), test::call("c2", "risky"),
                                       test::call("c3", "ask", R"({"q":"?"})")}),
                          ai_message("finished")});
    interrupt_test::review hook;
    auto a = make_agent(model, ts, hook);
    a.use_checkpointer(memory_checkpointer{});

    auto r = test::run_async(a, "go");
    REQUIRE(r.reason == stop_reason::interrupted);
    // The hook's interrupt first, then the tool that interrupted while the others ran.
    REQUIRE(r.interrupts.size() == 2);
    CHECK(r.interrupts[0].id == "after_model");
    CHECK(r.interrupts[1].id == "c3");
    CHECK(counter->of("c1") == 1);
    CHECK(counter->of("c2") == 0);

    auto done = test::resume_async(a, resume{boost::json::parse(R"({"after_model":"go","c3":"yes"})")});
    REQUIRE(done.reason == stop_reason::finished);
    CHECK((*hook.answers)[0] == boost::json::value("go"));
    CHECK(tool_text(done.state.messages, "c2") == "risky ran");
    CHECK(tool_text(done.state.messages, "c3") == "answer: yes");
    CHECK(counter->of("c1") == 1);
    CHECK(counter->of("c2") == 1);
    CHECK(done.answer() == "finished");
}

TEST_CASE("a before_model hook that interrupts receives the resume value when its round runs again",
          "[agent][interrupt][async]") {
    using interrupt_test::gate;
    for (bool coroutine : {false, true}) {
        scripted_model model({ai_message("hi")});
        auto a = make_agent(model, tool_set{}, gate{});
        a.use_checkpointer(memory_checkpointer{});
        auto r = coroutine ? test::run_async(a, "go") : a.invoke("go");
        REQUIRE(r.reason == stop_reason::interrupted);
        CHECK(r.interrupts[0].id == "before_model");
        CHECK(model.calls() == 0);
        auto done = coroutine ? test::resume_async(a, resume{true}) : a.invoke(resume{true});
        REQUIRE(done.reason == stop_reason::finished);
        CHECK(done.answer() == "hi");
    }
}

TEST_CASE("a tool that interrupts twice gets both answers in order", "[agent][interrupt]") {
    auto twice = make_tool("twice", "Asks two questions.", boost::json::object{},
                           [](const boost::json::object&, const tool_runtime& rt) {
                               auto first = rt.interrupt(boost::json::value("first?"));
                               auto second = rt.interrupt(boost::json::value("second?"));
                               return std::string(first.as_string()) + " " + std::string(second.as_string());
                           });
    scripted_model model({test::calls({test::call("t1", "twice")}), ai_message("ok")});
    auto a = make_agent(model, tool_set(twice));
    a.use_checkpointer(memory_checkpointer{});
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::interrupted);
    CHECK(r.interrupts[0].value == boost::json::value("first?"));
    auto again = a.invoke(resume{"a"});
    REQUIRE(again.reason == stop_reason::interrupted);
    CHECK(again.interrupts[0].value == boost::json::value("second?"));
    auto done = a.invoke(resume{"b"});
    REQUIRE(done.reason == stop_reason::finished);
    CHECK(tool_text(done.state.messages, "t1") == "a b");
}
