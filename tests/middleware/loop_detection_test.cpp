// loop_detection: repeated tool calls and cycles warn, then stop, alone, in an
// agent and under concurrency.
#include "after_model_bench.hpp"

#include <agentware/middleware/loop_detection.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

using namespace agentware;
using strings = std::vector<std::string>;
using test::bench;
using test::plain_state;

namespace {

std::string loop_warning_of(const recorded_request& r) {
    if (r.messages.empty() || r.messages.back().name != "loop_warning") return {};
    return r.messages.back().text();
}

const std::string warning = "[LOOP DETECTED] You are repeating the same tool calls. Stop calling tools and "
                            "produce your final answer now. If "
                            "you cannot complete the task, summarize what you accomplished so far.";
const std::string hard_stop = "[FORCED STOP] Repeated tool calls exceeded the safety limit. Producing final "
                              "answer with results collected so far.";

} // namespace

// ---------------------------------------------------------------- hashing

TEST_CASE("the call-set hash ignores order and non-salient arguments", "[middleware][loop_detection]") {
    auto h = [](std::vector<tool_call> cs) { return loop_detection::hash_tool_calls(cs); };
    auto a = test::call("1", "web_search", R"({"query":"x","description":"first try"})");
    auto b = test::call("2", "bash", R"({"command":"ls","description":"list"})");
    CHECK(h({a, b}) == h({b, a}));
    CHECK(h({a}) == h({test::call("9", "web_search", R"({"description":"second try","query":"x"})")}));
    CHECK(h({a}) != h({test::call("9", "web_search", R"({"query":"y"})")}));
    CHECK(h({a}).size() == 16);
    // no salient field: all arguments count, in any key order
    CHECK(h({test::call("1", "calc", R"({"a":1,"b":2})")}) ==
          h({test::call("2", "calc", R"({"b":2,"a":1})")}));
    CHECK(h({test::call("1", "calc", R"({"a":1})")}) != h({test::call("2", "calc", R"({"a":2})")}));
    // write_file and str_replace: every argument counts
    CHECK(h({test::call("1", "write_file", R"({"path":"a","content":"x"})")}) !=
          h({test::call("2", "write_file", R"({"path":"a","content":"y"})")}));
}

TEST_CASE("read_file calls are keyed by path and 200-line buckets", "[middleware][loop_detection]") {
    auto key = [](const char* args) { return loop_detection::call_key(test::call("1", "read_file", args)); };
    CHECK(key(R"({"path":"/a.txt"})") == "/a.txt:0-0");
    CHECK(key(R"({"path":"/a.txt","start_line":1,"end_line":200})") == "/a.txt:0-0");
    CHECK(key(R"({"path":"/a.txt","start_line":150,"end_line":250})") == "/a.txt:0-1");
    CHECK(key(R"({"path":"/a.txt","start_line":401})") == "/a.txt:2-2");
    CHECK(key(R"({"path":"/a.txt","start_line":"401","end_line":"1"})") == "/a.txt:0-2");  // strings, sorted
    CHECK(key(R"({"path":"/a.txt","start_line":"abc","end_line":null})") == "/a.txt:0-0"); // junk: defaults
    CHECK(key(R"({"path":"/a.txt","start_line":-50})") == "/a.txt:0-0"); // clamped to line 1
    CHECK(key(R"({"start_line":5})") == "None:0-0");
}

// ---------------------------------------------------------------- layer 1

TEST_CASE("the third identical answer queues a warning, the fifth is a hard stop",
          "[middleware][loop_detection]") {
    bench<loop_detection> b;
    auto same = [] { return std::vector<tool_call>{test::call("x", "web_search", R"({"query":"q"})")}; };
    b.answer(same());
    b.answer(same());
    CHECK(b.guard.pending_warnings("thread-1", "run-1").empty());
    b.answer(same());
    CHECK(b.guard.pending_warnings("thread-1", "run-1") == strings{warning});
    b.answer(same()); // warned once per hash
    CHECK(b.guard.pending_warnings("thread-1", "run-1") == strings{warning});
    message last = ai_message("Searching again.", same());
    last.provider.set_finish_reason("tool_calls");
    const message& stopped = b.answer(last);
    CHECK(stopped.tool_calls.empty());
    CHECK(stopped.text() == "Searching again.\n\n" + hard_stop);
    CHECK(stopped.provider.finish_reason() == "stop");
    CHECK(b.rt.context.at("stop_reason") == "loop_capped");
    CHECK(b.guard.consume_stop_reason("run-1") == std::optional<std::string>("loop_capped"));
    CHECK_FALSE(b.guard.consume_stop_reason("run-1")); // consumed
}

TEST_CASE("a hard stop on an answer without text, or with several blocks", "[middleware][loop_detection]") {
    loop_detection_options o;
    o.warn_threshold = 1;
    o.hard_limit = 1;
    bench<loop_detection> b{loop_detection(o)};
    // An answer without text is "" to DeerFlow (LangChain reads OpenAI's null content as ""),
    // and "" + "\n\n" + note is what it keeps.
    CHECK(b.answer({test::call("x", "t")}).text() == "\n\n" + hard_stop);
    const message& empty = b.answer(ai_message("", {test::call("e", "t")}));
    CHECK(empty.text() == "\n\n" + hard_stop);
    REQUIRE(empty.content.size() == 1);
    message m = ai_message("", {test::call("y", "t")});
    m.content = {text_block("a"), image_block("http://i")};
    m.edit_invalid_tool_calls().push_back(invalid_tool_call{"z", "t", "{", "bad"});
    const message& s = b.answer(m);
    REQUIRE(s.content.size() == 3);
    CHECK(s.content[2].text == "\n\n" + hard_stop);
    CHECK(s.invalid_tool_calls().empty());
}

TEST_CASE("only the window counts", "[middleware][loop_detection]") {
    loop_detection_options o;
    o.window_size = 4;
    bench<loop_detection> b{loop_detection(o)};
    auto a = [] { return std::vector<tool_call>{test::call("a", "t", R"({"path":"a"})")}; };
    auto other = [](int i) {
        return std::vector<tool_call>{test::call("o", "t", fmt::format(R"({{"path":"{}"}})", i))};
    };
    b.answer(a());
    b.answer(other(1));
    b.answer(other(2));
    b.answer(other(3));
    b.answer(a());
    b.answer(a()); // three `a` so far, but the first one left the window
    CHECK(b.guard.pending_warnings("thread-1", "run-1").empty());
    b.answer(a());
    CHECK(b.guard.pending_warnings("thread-1", "run-1") == strings{warning});
}

// ---------------------------------------------------------------- layer 2

TEST_CASE("one tool called too often warns, then stops, with the per-tool texts",
          "[middleware][loop_detection]") {
    loop_detection_options o;
    o.tool_freq_warn = 3;
    o.tool_freq_hard_limit = 4;
    o.detect_cycles = false;
    bench<loop_detection> b{loop_detection(o)};
    for (int i = 0; i < 3; ++i)
        b.answer({test::call("c", "bash", fmt::format(R"({{"command":"echo {}"}})", i))});
    CHECK(b.guard.pending_warnings("thread-1", "run-1") ==
          strings{"[LOOP DETECTED] You have called bash 3 times without producing a final answer. Stop "
                  "calling tools "
                  "and produce your final answer now. If you cannot complete the task, summarize what you "
                  "accomplished "
                  "so far."});
    const message& s = b.answer({test::call("c", "bash", R"({"command":"echo 9"})")});
    CHECK(s.tool_calls.empty());
    CHECK(s.text() ==
          "\n\n[FORCED STOP] Tool bash called 4 times — exceeded the per-tool safety limit. Producing final "
          "answer with results collected so far.");
}

TEST_CASE("per-tool overrides replace the global frequency thresholds", "[middleware][loop_detection]") {
    loop_detection_options o;
    o.tool_freq_warn = 2;
    o.tool_freq_hard_limit = 2;
    o.tool_freq_overrides["bash"] = tool_frequency_limit{5, 6};
    o.detect_cycles = false;
    bench<loop_detection> b{loop_detection(o)};
    for (int i = 0; i < 4; ++i)
        b.answer({test::call("c", "bash", fmt::format(R"({{"command":"{}"}})", i))});
    CHECK(b.guard.pending_warnings("thread-1", "run-1").empty());
    CHECK(b.answer({test::call("c", "ls", R"({"path":"1"})")}).has_tool_calls());
    CHECK_FALSE(b.answer({test::call("c", "ls", R"({"path":"2"})")}).has_tool_calls()); // 2 = hard limit
}

TEST_CASE("batch-friendly tools are never counted", "[middleware][loop_detection]") {
    loop_detection_options o;
    o.batch_friendly_tools = {"create_pr"};
    bench<loop_detection> b{loop_detection(o)};
    for (int i = 0; i < 10; ++i)
        CHECK(b.answer({test::call("c", "create_pr", R"({"title":"same"})")}).has_tool_calls());
    CHECK(b.guard.pending_warnings("thread-1", "run-1").empty());
    CHECK(b.guard.tracked_threads() == 0);
}

TEST_CASE("a run whose context disables loop detection is not watched", "[middleware][loop_detection]") {
    bench<loop_detection> b;
    b.rt.context["disable_loop_detection"] = true;
    for (int i = 0; i < 6; ++i)
        CHECK(b.answer({test::call("c", "t")}).has_tool_calls());
}

// ---------------------------------------------------------------- layer 3

TEST_CASE("answers cycling A, B, A, B warn at three laps and stop at four", "[middleware][loop_detection]") {
    bench<loop_detection> b;
    int n = 0;
    auto search = [&] {
        return std::vector<tool_call>{test::call("s", "web_search", fmt::format(R"({{"query":"{}"}})", ++n))};
    };
    auto fetch = [&] {
        return std::vector<tool_call>{test::call("f", "web_fetch", fmt::format(R"({{"url":"u{}"}})", ++n))};
    };
    b.answer(search());
    b.answer(fetch());
    b.answer(search());
    b.answer(fetch());
    b.answer(search());
    CHECK(b.guard.pending_warnings("thread-1", "run-1").empty());
    b.answer(fetch());
    CHECK(
        b.guard.pending_warnings("thread-1", "run-1") ==
        strings{
            "[LOOP DETECTED] You are cycling through the same tools (web_fetch → web_search) without "
            "producing a "
            "final answer. Stop calling tools and produce your final answer now. If you cannot complete the "
            "task, summarize what you accomplished so far."});
    b.answer(search()); // the same cycle seen from the other end: not warned twice
    CHECK(b.guard.pending_warnings("thread-1", "run-1").size() == 1);
    const message& s = b.answer(fetch());
    CHECK_FALSE(s.has_tool_calls());
    CHECK(s.text() ==
          "\n\n[FORCED STOP] Tool calls cycled through web_fetch → web_search 4 times — exceeded the safety "
          "limit. Producing final answer with results collected so far.");
}

TEST_CASE("a three-step cycle is found, a single repeated tool is not a cycle",
          "[middleware][loop_detection]") {
    bench<loop_detection> b;
    int n = 0;
    auto one = [&](const char* name) {
        return std::vector<tool_call>{test::call("c", name, fmt::format(R"({{"path":"{}"}})", ++n))};
    };
    for (int lap = 0; lap < 3; ++lap) {
        b.answer(one("ls"));
        b.answer(one("read_file"));
        b.answer(one("grep"));
    }
    CHECK(b.guard.pending_warnings("thread-1", "run-1").size() == 1);
    CHECK(b.guard.pending_warnings("thread-1", "run-1")[0].find("(grep → ls → read_file)") !=
          std::string::npos);

    bench<loop_detection> single;
    for (int i = 0; i < 8; ++i)
        single.answer(one("ls"));
    CHECK(single.guard.pending_warnings("thread-1", "run-1").empty());
}

// ---------------------------------------------------------------- delivery and scoping

TEST_CASE("warnings reach the next model call after the tool results, request-only",
          "[middleware][loop_detection][agent]") {
    std::vector<message> script;
    for (int i = 0; i < 3; ++i)
        script.push_back(test::calls({test::call(fmt::format("c{}", i), "echo", R"({"text":"x"})")}));
    script.push_back(ai_message("final"));
    scripted_model model(script);
    auto a = make_agent(model, tool_set(test::echo_tool()), loop_detection{});
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::finished);
    auto reqs = model.requests();
    REQUIRE(reqs.size() == 4);
    CHECK(loop_warning_of(reqs[2]).empty());
    CHECK(loop_warning_of(reqs[3]) == warning);
    CHECK(reqs[3].messages[reqs[3].messages.size() - 2].is_tool()); // after the tool result
    for (const auto& m : r.state.messages)
        CHECK(m.name != "loop_warning");
}

TEST_CASE("the hard stop ends an agent's run with the stopped answer",
          "[middleware][loop_detection][agent]") {
    scripted_model model({test::calls({test::call("c", "echo", R"({"text":"x"})")}, "again")}, {true, true});
    auto a = make_agent(model, tool_set(test::echo_tool()), loop_detection{});
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::finished);
    CHECK(model.calls() == 5);
    CHECK(r.answer() == "again\n\n" + hard_stop);
}

TEST_CASE("queued warnings are deduplicated and capped at four per run", "[middleware][loop_detection]") {
    loop_detection_options o;
    o.warn_threshold = 1;
    o.hard_limit = 100;
    bench<loop_detection> b{loop_detection(o)};
    for (int i = 0; i < 6; ++i)
        b.answer({test::call("c", "t", fmt::format(R"({{"path":"{}"}})", i))});
    auto p = b.guard.pending_warnings("thread-1", "run-1");
    CHECK(p.size() == 1); // six hashes, one text
    CHECK(p[0] == warning);
}

TEST_CASE("before_agent drops other runs' warnings of the thread, after_agent the run's own",
          "[middleware][loop_detection]") {
    loop_detection_options o;
    o.warn_threshold = 1;
    o.hard_limit = 100;
    loop_detection ld(o);
    plain_state s;
    runtime old_run{"t", "old", {}, 0}, other_thread{"u", "x", {}, 0}, new_run{"t", "new", {}, 0};
    s.messages.push_back(test::calls({test::call("c", "a")}));
    ld.after_model(s, old_run);
    ld.after_model(s, other_thread);
    REQUIRE(ld.pending_warnings("t", "old").size() == 1);
    ld.before_agent(s, new_run);
    CHECK(ld.pending_warnings("t", "old").empty());
    CHECK(ld.pending_warnings("u", "x").size() == 1);
    s.messages.push_back(test::calls({test::call("c", "b")}));
    ld.after_model(s, new_run);
    CHECK(ld.pending_warnings("t", "new").size() == 1);
    ld.after_agent(s, new_run);
    CHECK(ld.pending_warnings("t", "new").empty());
    CHECK(ld.pending_warnings("u", "x").size() == 1);
}

TEST_CASE("histories survive across runs of a thread and are kept for the most recent threads",
          "[middleware][loop_detection]") {
    loop_detection_options o;
    o.max_tracked_threads = 2;
    loop_detection ld(o);
    plain_state s;
    s.messages.push_back(test::calls({test::call("c", "t")}));
    for (const char* run : {"r1", "r2"}) {
        runtime rt{"a", run, {}, 0};
        ld.after_model(s, rt);
    }
    runtime third{"a", "r3", {}, 0};
    ld.after_model(s, third);
    CHECK(ld.pending_warnings("a", "r3") == strings{warning}); // counted across runs
    runtime b{"b", "r", {}, 0}, c{"c", "r", {}, 0};
    ld.after_model(s, b);
    ld.after_model(s, c); // evicts "a"
    CHECK(ld.tracked_threads() == 2);
    runtime again{"a", "r4", {}, 0};
    ld.after_model(s, again);
    CHECK(ld.pending_warnings("a", "r4").empty()); // "a" starts over
}

TEST_CASE("loop_detection rejects thresholds that make no sense, with DeerFlow's texts",
          "[middleware][loop_detection]") {
    auto fails_with = [](loop_detection_options o, const std::string& text) {
        try {
            loop_detection ld(o);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what()) == text;
        }
        return false;
    };
    loop_detection_options o;
    o.warn_threshold = 6;
    CHECK(fails_with(o, "hard_limit must be greater than or equal to warn_threshold"));
    o = {};
    o.tool_freq_overrides["bash"] = {10, 5};
    CHECK(fails_with(o, "hard_limit must be >= warn"));
    o = {};
    o.window_size = 0;
    CHECK(fails_with(o, "window_size must be >= 1"));
}

TEST_CASE("loop_detection options read DeerFlow's config keys", "[middleware][loop_detection][json]") {
    auto o = boost::json::value_to<loop_detection_options>(boost::json::parse(
        R"({"warn_threshold":2,"hard_limit":4,"tool_freq_overrides":{"bash":{"warn":150,"hard_limit":300}},
            "batch_friendly_tools":["create_pr"],"detect_cycles":false})"));
    CHECK(o.warn_threshold == 2);
    CHECK(o.hard_limit == 4);
    CHECK(o.window_size == 20);
    CHECK(o.tool_freq_overrides.at("bash") == tool_frequency_limit{150, 300});
    CHECK(o.batch_friendly_tools == strings{"create_pr"});
    CHECK_FALSE(o.detect_cycles);
    auto back = boost::json::value_to<loop_detection_options>(boost::json::value_from(o));
    CHECK(back.tool_freq_overrides == o.tool_freq_overrides);
    CHECK(back.hard_limit == 4);
}

TEST_CASE("concurrent runs share one loop_detection safely", "[middleware][loop_detection][concurrency]") {
    loop_detection ld;
    std::vector<std::thread> workers;
    std::atomic<int> stopped{0};
    for (int w = 0; w < 8; ++w)
        workers.emplace_back([&, w] {
            for (int run = 0; run < 20; ++run) {
                plain_state s;
                runtime rt{fmt::format("thread-{}", w % 4), fmt::format("run-{}-{}", w, run), {}, 0};
                ld.before_agent(s, rt);
                for (int i = 0; i < 6; ++i) {
                    s.messages.push_back(test::calls({test::call("c", "t", R"({"path":"same"})")}));
                    ld.after_model(s, rt);
                    if (!s.messages.back().has_tool_calls()) ++stopped;
                    ld.pending_warnings(rt.thread_id, rt.run_id);
                }
                ld.after_agent(s, rt);
                ld.consume_stop_reason(rt.run_id);
            }
        });
    for (auto& t : workers)
        t.join();
    CHECK(stopped > 0);
    CHECK(ld.tracked_threads() == 4);
    for (int w = 0; w < 4; ++w)
        for (int run = 0; run < 20; ++run)
            CHECK(ld.pending_warnings(fmt::format("thread-{}", w), fmt::format("run-{}-{}", w, run)).empty());
}

TEST_CASE("concurrent agent runs on one loop_detection get their own warnings",
          "[middleware][loop_detection][concurrency][agent]") {
    scripted_model model({test::calls({test::call("c", "echo", R"({"text":"x"})")})}, {false, true});
    auto a = make_agent(model, tool_set(test::echo_tool()), loop_detection{});
    std::vector<std::thread> runs;
    std::atomic<int> ok{0};
    for (int i = 0; i < 4; ++i)
        runs.emplace_back([&, i] {
            run_config cfg;
            cfg.thread_id = fmt::format("t{}", i);
            auto r = a.invoke("go", cfg);
            if (r.reason == stop_reason::finished && r.answer() == "\n\n" + hard_stop) ++ok;
        });
    for (auto& t : runs)
        t.join();
    CHECK(ok == 4);
}
