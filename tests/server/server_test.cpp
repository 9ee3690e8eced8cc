// The agent server over HTTP on loopback: the LangGraph routes as the SDKs
// call them, the SSE wire format, interrupts and resume, multitask
// strategies, cancel, a restart on the same data directory, and hostile input.
#include "server_support.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/write.hpp>

#include <fstream>

namespace server_test {

using boost::json::array;
using boost::json::object;

namespace {

std::string new_thread(unsigned short port, object metadata = {}) {
    auto r = call(port, "POST", "/threads", body({{"metadata", metadata}}));
    REQUIRE(r.status == 200);
    return std::string(r.json().at("thread_id").as_string());
}

std::vector<sse_frame> stream_run(unsigned short port, const std::string& thread, object run) {
    if (!run.contains("assistant_id")) run["assistant_id"] = "agent";
    auto r = call(port, "POST", "/threads/" + thread + "/runs/stream", body(run));
    REQUIRE(r.status == 200);
    CHECK(r.headers["content-type"] == "text/event-stream");
    CHECK(r.headers["content-location"].starts_with("/threads/" + thread + "/runs/"));
    return parse_sse(r.body);
}

std::string status_of(unsigned short port, const std::string& thread) {
    return std::string(call(port, "GET", "/threads/" + thread).json().at("status").as_string());
}

const sse_frame* last_named(const std::vector<sse_frame>& events, std::string_view name) {
    for (auto it = events.rbegin(); it != events.rend(); ++it)
        if (it->name == name) return &*it;
    return nullptr;
}

std::string last_ai_text(const boost::json::value& values) {
    const auto& ms = values.at("messages").as_array();
    for (auto it = ms.rbegin(); it != ms.rend(); ++it)
        if (it->at("type") == "ai") return std::string(it->at("content").as_string());
    return {};
}

} // namespace

TEST_CASE("server: system routes and assistants", "[server]") {
    server::file_store store;
    running_server srv(store);
    const auto port = srv.port();
    CHECK(call(port, "GET", "/ok").json() == boost::json::parse(R"({"ok":true})"));
    auto info = call(port, "GET", "/info").json();
    CHECK(info.at("flags").at("assistants") == true);
    CHECK(info.at("flags").at("strict_resume") == true);

    auto found = call(port, "POST", "/assistants/search", body({{"graph_id", "agent"}, {"limit", 10}}));
    REQUIRE(found.status == 200);
    CHECK(found.headers["x-pagination-total"] == "1");
    const auto id = std::string(found.json().as_array().at(0).at("assistant_id").as_string());
    CHECK(id == server::assistant_uuid("agent"));
    // The graph id and the assistant id name the same assistant.
    CHECK(call(port, "GET", "/assistants/agent").json() == call(port, "GET", "/assistants/" + id).json());
    auto missing = call(port, "GET", "/assistants/nope");
    CHECK(missing.status == 404);
    CHECK(missing.body == "No assistant found for \"nope\". Make sure the assistant ID is for a valid "
                          "assistant or a valid graph ID.");
    CHECK(call(port, "GET", "/assistants/agent/schemas").json().at("graph_id") == "agent");
    // CORS on every response, and the preflight.
    auto pre = call(port, "OPTIONS", "/threads", {}, {{"Origin", "http://localhost:3000"}});
    CHECK(pre.status == 204);
    CHECK(pre.headers["access-control-allow-origin"] == "*");
    CHECK(call(port, "GET", "/ok", {}, {{"Origin", "http://x"}}).headers["access-control-expose-headers"] ==
          "content-location,x-pagination-total");
}

TEST_CASE("server: threads are created, read, searched, copied and deleted", "[server]") {
    server::file_store store;
    running_server srv(store);
    const auto port = srv.port();
    const auto a = new_thread(port, {{"owner", "ann"}});
    const auto b = new_thread(port, {{"owner", "bob"}});
    auto t = call(port, "GET", "/threads/" + a).json();
    CHECK(t.at("status") == "idle");
    CHECK(t.at("metadata").at("owner") == "ann");

    auto patched = call(port, "PATCH", "/threads/" + a, body({{"metadata", object{{"tag", "x"}}}})).json();
    CHECK(patched.at("metadata").at("owner") == "ann");
    CHECK(patched.at("metadata").at("tag") == "x");

    auto found = call(port, "POST", "/threads/search", body({{"metadata", object{{"owner", "bob"}}}}));
    REQUIRE(found.json().as_array().size() == 1);
    CHECK(found.json().as_array()[0].at("thread_id") == boost::json::value(b));
    CHECK(call(port, "POST", "/threads/search", body({{"limit", 1}})).headers["x-pagination-total"] == "2");

    // if_exists
    CHECK(call(port, "POST", "/threads", body({{"thread_id", a}})).status == 409);
    CHECK(call(port, "POST", "/threads", body({{"thread_id", a}, {"if_exists", "do_nothing"}})).status ==
          200);

    stream_run(port, a,
               {{"input", object{{"messages", array{object{{"role", "user"}, {"content", "hi"}}}}}}});
    auto copy = call(port, "POST", "/threads/" + a + "/copy").json();
    const std::string c(copy.at("thread_id").as_string());
    CHECK(c != a);
    CHECK(last_ai_text(call(port, "GET", "/threads/" + c + "/state").json().at("values")) == "you said: hi");

    // Search: sorted and paged on the threads' fields, each thread shown whole (with its values);
    // `values` filters on the values.
    const auto sorted = call(port, "POST", "/threads/search",
                             body({{"sort_by", "thread_id"}, {"sort_order", "asc"}, {"limit", 10}}))
                            .json()
                            .as_array();
    REQUIRE(sorted.size() == 3);
    CHECK(sorted[0].at("thread_id").as_string() < sorted[1].at("thread_id").as_string());
    CHECK(sorted[1].at("thread_id").as_string() < sorted[2].at("thread_id").as_string());
    boost::json::value a_values;
    for (const auto& found_thread : sorted)
        if (found_thread.at("thread_id") == boost::json::value(a)) a_values = found_thread.at("values");
    CHECK(last_ai_text(a_values) == "you said: hi");
    auto second = call(port, "POST", "/threads/search",
                       body({{"sort_by", "thread_id"}, {"sort_order", "asc"}, {"offset", 1}, {"limit", 1}}));
    CHECK(second.headers["x-pagination-total"] == "3");
    REQUIRE(second.json().as_array().size() == 1);
    CHECK(second.json().as_array()[0] == sorted[1]);
    const auto same_values = call(port, "POST", "/threads/search",
                                  body({{"values", object{{"messages", a_values.at("messages")}}}}))
                                 .json()
                                 .as_array();
    CHECK(same_values.size() == 2); // a and its copy
    CHECK(call(port, "POST", "/threads/count", body({{"values", object{{"messages", array{}}}}})).body ==
          "0");

    CHECK(call(port, "DELETE", "/threads/" + a).status == 204);
    auto gone = call(port, "GET", "/threads/" + a);
    CHECK(gone.status == 404);
    CHECK(gone.body == "Thread with ID " + a + " not found");
}

TEST_CASE("server: a streamed run in values, updates and messages-tuple modes", "[server]") {
    server::file_store store;
    running_server srv(store);
    const auto port = srv.port();
    const auto t = new_thread(port);
    auto events = stream_run(
        port, t,
        {{"input", object{{"messages", array{object{{"role", "user"}, {"content", "echo ping"}}}}}},
         {"stream_mode", array{"values", "updates", "messages-tuple"}}});
    REQUIRE(events.size() > 4);
    CHECK(events.front().name == "metadata");
    CHECK(events.front().data.at("attempt") == 1);
    // Ids count from 0, one per event.
    for (std::size_t i = 0; i < events.size(); ++i)
        CHECK(events[i].id == std::to_string(i));
    // The first values carry the input; the last the answer.
    const auto* first_values =
        &*std::find_if(events.begin(), events.end(), [](auto& e) { return e.name == "values"; });
    CHECK(first_values->data.at("messages").as_array().back().at("type") == "human");
    CHECK(last_ai_text(last_named(events, "values")->data) == "echo said: echo: ping");
    bool tool_update = false, ai_tuple = false;
    for (const auto& e : events) {
        if (e.name == "updates" && e.data.as_object().contains("tools"))
            tool_update = e.data.at("tools").at("messages").at(0).at("content") == "echo: ping";
        if (e.name == "messages" && e.data.at(0).at("type") == "ai" &&
            e.data.at(1).at("langgraph_node") == "model")
            ai_tuple = true;
    }
    CHECK(tool_update);
    CHECK(ai_tuple);
    CHECK(status_of(port, t) == "idle");

    // State and history.
    auto state = call(port, "GET", "/threads/" + t + "/state").json();
    CHECK(state.at("next").as_array().empty());
    CHECK(state.at("checkpoint").at("thread_id") == boost::json::value(t));
    auto history = call(port, "POST", "/threads/" + t + "/history", body({{"limit", 10}})).json().as_array();
    REQUIRE(history.size() >= 2);
    CHECK(history[0].at("checkpoint").at("checkpoint_id") == state.at("checkpoint").at("checkpoint_id"));
    CHECK(history[1].at("checkpoint").at("checkpoint_id") ==
          history[0].at("parent_checkpoint").at("checkpoint_id"));
    auto one = call(port, "POST", "/threads/" + t + "/history", body({{"limit", 1}})).json().as_array();
    CHECK(one.size() == 1);

    // Other modes each give their own events.
    for (std::string mode : {"events", "tasks", "debug", "checkpoints", "messages", "updates"}) {
        auto e = stream_run(
            port, t,
            {{"input", object{{"messages", array{object{{"role", "user"}, {"content", "hello"}}}}}},
             {"stream_mode", mode}});
        const std::string expected = mode == "messages" ? "messages/complete" : mode;
        CHECK(std::any_of(e.begin(), e.end(), [&](auto& x) { return x.name == expected; }));
        CHECK(e.front().name == "metadata");
    }
}

TEST_CASE("server: a delegation's events at the root, and under its namespace with subgraphs", "[server]") {
    server::file_store store;
    running_server srv(store);
    const auto port = srv.port();
    const auto t = new_thread(port);
    auto names = [](const std::vector<sse_frame>& events) {
        std::vector<std::string> out;
        for (const auto& e : events)
            out.push_back(e.name);
        return out;
    };
    auto root = names(stream_run(
        port, t,
        {{"input", object{{"messages", array{object{{"role", "user"}, {"content", "delegate a"}}}}}},
         {"stream_mode", array{"custom", "updates", "messages-tuple"}}}));
    CHECK(std::count(root.begin(), root.end(), "custom") == 4);
    CHECK(std::none_of(root.begin(), root.end(), [](auto& n) { return n.find('|') != std::string::npos; }));
    auto events = stream_run(
        port, t,
        {{"input", object{{"messages", array{object{{"role", "user"}, {"content", "delegate b"}}}}}},
         {"stream_mode", array{"custom", "updates", "messages-tuple"}},
         {"stream_subgraphs", true}});
    auto n = names(events);
    CHECK(std::count(n.begin(), n.end(), "custom|task:call_task") == 4);
    CHECK(std::count(n.begin(), n.end(), "messages|task:call_task") == 1);
    CHECK(std::count(n.begin(), n.end(), "updates|task:call_task") == 1);
    for (const auto& e : events)
        if (e.name == "messages|task:call_task") {
            CHECK(e.data.at(0).at("content") == "partial");
            CHECK(e.data.at(1).at("langgraph_checkpoint_ns") == "task:call_task");
        }
    CHECK(last_ai_text(call(port, "GET", "/threads/" + t + "/state").json().at("values")) ==
          "delegated: sub done");
}

TEST_CASE("server: wait, join and a join stream resumed after Last-Event-ID", "[server]") {
    server::file_store store;
    running_server srv(store);
    const auto port = srv.port();
    const auto t = new_thread(port);
    auto waited =
        call(port, "POST", "/threads/" + t + "/runs/wait",
             body({{"assistant_id", "agent"},
                   {"input", object{{"messages", array{object{{"role", "user"}, {"content", "one"}}}}}}}));
    REQUIRE(waited.status == 200);
    CHECK(last_ai_text(waited.json()) == "you said: one");

    auto created = call(
        port, "POST", "/threads/" + t + "/runs",
        body({{"assistant_id", "agent"},
              {"stream_resumable", true},
              {"stream_mode", array{"values", "updates"}},
              {"input", object{{"messages", array{object{{"role", "user"}, {"content", "echo two"}}}}}}}));
    REQUIRE(created.status == 200);
    CHECK(created.json().at("status") == "pending");
    const std::string run(created.json().at("run_id").as_string());
    auto joined = call(port, "GET", "/threads/" + t + "/runs/" + run + "/join");
    CHECK(last_ai_text(joined.json()) == "echo said: echo: two");
    CHECK(call(port, "GET", "/threads/" + t + "/runs/" + run).json().at("status") == "success");

    auto all = parse_sse(call(port, "GET", "/threads/" + t + "/runs/" + run + "/stream").body);
    REQUIRE(all.size() > 3);
    auto rest = parse_sse(
        call(port, "GET", "/threads/" + t + "/runs/" + run + "/stream", {}, {{"Last-Event-ID", "1"}}).body);
    REQUIRE(rest.size() == all.size() - 2);
    CHECK(rest.front().id == "2");
    CHECK(call(port, "GET", "/threads/" + t + "/runs/" + run + "/stream", {}, {{"Last-Event-ID", "x1"}})
              .status == 422);

    auto runs = call(port, "GET", "/threads/" + t + "/runs?limit=10").json().as_array();
    CHECK(runs.size() == 2);
    CHECK(runs[0].at("run_id") == boost::json::value(run)); // newest first

    // Stateless: a temporary thread, no id lines.
    auto stateless =
        call(port, "POST", "/runs/stream",
             body({{"assistant_id", "agent"},
                   {"input", object{{"messages", array{object{{"role", "user"}, {"content", "x"}}}}}}}));
    CHECK(stateless.headers["content-location"].starts_with("/runs/"));
    auto sl = parse_sse(stateless.body);
    CHECK(sl.front().id.empty());
    CHECK(last_ai_text(last_named(sl, "values")->data) == "you said: x");
}

TEST_CASE("server: a human-in-the-loop interrupt and its resume", "[server]") {
    server::file_store store;
    running_server srv(store);
    const auto port = srv.port();
    const auto t = new_thread(port);
    auto events =
        stream_run(port, t,
                   {{"input", object{{"messages", array{object{{"role", "user"}, {"content", "write it"}}}}}},
                    {"stream_mode", array{"values", "updates"}}});
    const auto* last = last_named(events, "values");
    REQUIRE(last != nullptr);
    REQUIRE(last->data.as_object().contains("__interrupt__"));
    const auto& pending = last->data.at("__interrupt__").as_array();
    REQUIRE(pending.size() == 1);
    CHECK(pending[0].at("value").at("action_requests").at(0).at("name") == "write_file");
    CHECK(last_named(events, "updates")->data.as_object().contains("__interrupt__"));
    CHECK(status_of(port, t) == "interrupted");
    auto state = call(port, "GET", "/threads/" + t + "/state").json();
    CHECK(!state.at("next").as_array().empty());
    CHECK(state.at("tasks").at(0).at("interrupts").at(0).at("id") == pending[0].at("id"));
    auto thread = call(port, "GET", "/threads/" + t).json();
    CHECK(thread.at("interrupts").as_object().size() == 1);
    // `wait` on a paused thread answers with the interrupt.
    auto resumed = stream_run(
        port, t,
        {{"command", object{{"resume", object{{"decisions", array{object{{"type", "approve"}}}}}}}},
         {"stream_mode", array{"values"}}});
    CHECK(last_ai_text(last_named(resumed, "values")->data) == "written: wrote a.txt");
    CHECK(status_of(port, t) == "idle");
    // strict_resume: nothing waits now.
    auto strict = stream_run(port, t, {{"command", object{{"resume", "yes"}}}, {"strict_resume", true}});
    REQUIRE(last_named(strict, "error") != nullptr);
    CHECK(last_named(strict, "error")->data.at("error") == "UnknownInterruptError");
    CHECK(status_of(port, t) == "idle");
}

TEST_CASE("server: one run per thread under each multitask strategy, and cancel", "[server]") {
    server::file_store store;
    running_server srv(store);
    const auto port = srv.port();
    auto start = [&](const std::string& t, const std::string& text, const std::string& strategy) {
        return call(
            port, "POST", "/threads/" + t + "/runs",
            body({{"assistant_id", "agent"},
                  {"multitask_strategy", strategy},
                  {"input", object{{"messages", array{object{{"role", "user"}, {"content", text}}}}}}}));
    };
    auto run_status = [&](const std::string& t, const boost::json::value& run) {
        auto r = call(port, "GET", "/threads/" + t + "/runs/" + std::string(run.at("run_id").as_string()));
        return r.status == 404 ? std::string("deleted") : std::string(r.json().at("status").as_string());
    };

    SECTION("reject") {
        const auto t = new_thread(port);
        auto first = start(t, "slow 400", "reject").json();
        auto second = start(t, "hi", "reject");
        CHECK(second.status == 422);
        CHECK(second.body == "Thread is already running a task. Wait for it to finish or choose a different "
                             "multitask strategy.");
        CHECK(eventually([&] { return run_status(t, first) == "success"; }));
    }
    SECTION("enqueue") {
        const auto t = new_thread(port);
        auto first = start(t, "slow 200", "reject").json();
        auto second = start(t, "after", "enqueue");
        REQUIRE(second.status == 200);
        call(port, "GET",
             "/threads/" + t + "/runs/" + std::string(second.json().at("run_id").as_string()) + "/join");
        CHECK(run_status(t, first) == "success");
        CHECK(run_status(t, second.json()) == "success");
        const auto values = call(port, "GET", "/threads/" + t + "/state").json().at("values");
        const auto& ms = values.at("messages").as_array();
        REQUIRE(ms.size() == 4);
        CHECK(ms[1].at("content") == "done: slow 200");
        CHECK(ms[3].at("content") == "you said: after");
    }
    SECTION("interrupt") {
        const auto t = new_thread(port);
        auto first = start(t, "slow 5000", "reject").json();
        CHECK(eventually([&] { return run_status(t, first) == "running"; }));
        auto second = start(t, "now", "interrupt");
        REQUIRE(second.status == 200);
        call(port, "GET",
             "/threads/" + t + "/runs/" + std::string(second.json().at("run_id").as_string()) + "/join");
        CHECK(run_status(t, first) == "interrupted");
        CHECK(run_status(t, second.json()) == "success");
    }
    SECTION("rollback") {
        const auto t = new_thread(port);
        auto first = start(t, "slow 5000", "reject").json();
        CHECK(eventually([&] { return run_status(t, first) == "running"; }));
        auto second = start(t, "instead", "rollback");
        REQUIRE(second.status == 200);
        call(port, "GET",
             "/threads/" + t + "/runs/" + std::string(second.json().at("run_id").as_string()) + "/join");
        CHECK(run_status(t, first) == "deleted");
        const auto values = call(port, "GET", "/threads/" + t + "/state").json().at("values");
        CHECK(values.at("messages").as_array().front().at("content") == "instead");
    }
    SECTION("cancel, and cancel through another thread's path") {
        const auto t = new_thread(port);
        const auto other = new_thread(port);
        auto run = start(t, "slow 5000", "reject").json();
        const std::string id(run.at("run_id").as_string());
        CHECK(eventually([&] { return run_status(t, run) == "running"; }));
        CHECK(call(port, "POST", "/threads/" + other + "/runs/" + id + "/cancel").status == 404);
        CHECK(
            call(port, "POST", "/threads/" + t + "/runs/" + id + "/cancel?wait=1&action=interrupt").status ==
            204);
        CHECK(run_status(t, run) == "interrupted");
        CHECK(status_of(port, t) == "idle");
        CHECK(call(port, "POST", "/threads/" + t + "/runs/" + id + "/cancel").status == 409);
    }
}

TEST_CASE("server: agents with an asynchronous model run as coroutines, not on the pool's threads",
          "[server]") {
    server::file_store store;
    running_server srv(store); // 4 pool threads
    const auto port = srv.port();
    async_counters()->most = 0;
    constexpr int runs = 24;
    std::vector<std::string> threads, run_ids;
    for (int i = 0; i < runs; ++i) {
        threads.push_back(new_thread(port));
        auto r =
            call(port, "POST", "/threads/" + threads.back() + "/runs",
                 body({{"assistant_id", "async_agent"},
                       {"input",
                        object{{"messages", array{object{{"role", "user"}, {"content", "slow 300"}}}}}}}));
        REQUIRE(r.status == 200);
        run_ids.emplace_back(r.json().at("run_id").as_string());
    }
    for (int i = 0; i < runs; ++i)
        CHECK(last_ai_text(
                  call(port, "GET", "/threads/" + threads[i] + "/runs/" + run_ids[i] + "/join").json()) ==
              "done: slow 300");
    // More model calls were waiting at once than the pool has threads.
    CHECK(async_counters()->most.load() > 4);
    // An echo round trip (a tool on the pool between two model calls) works the same.
    auto events = stream_run(
        port, threads[0],
        {{"assistant_id", "async_agent"},
         {"input", object{{"messages", array{object{{"role", "user"}, {"content", "echo hi"}}}}}}});
    CHECK(last_ai_text(last_named(events, "values")->data) == "echo said: echo: hi");
}

TEST_CASE("server: a restart keeps threads, and a paused thread resumes after it", "[server]") {
    temp_dir dir;
    std::string t;
    {
        server::file_store store(dir.path);
        running_server srv(store);
        t = new_thread(srv.port(), {{"k", "v"}});
        stream_run(srv.port(), t,
                   {{"input", object{{"messages", array{object{{"role", "user"}, {"content", "write"}}}}}}});
        CHECK(status_of(srv.port(), t) == "interrupted");
    }
    // The run's saves are kept as what changed since the checkpoint before;
    // the restart below reads them back into whole states.
    {
        std::ifstream file(dir.path / "threads" / t / "checkpoints.jsonl");
        std::size_t lines = 0, changes = 0;
        for (std::string line; std::getline(file, line); ++lines)
            if (boost::json::parse(line).as_object().contains("changes")) ++changes;
        CHECK(lines >= 2);
        CHECK(changes >= 1);
    }
    server::file_store store(dir.path);
    running_server srv(store);
    const auto port = srv.port();
    auto thread = call(port, "GET", "/threads/" + t).json();
    CHECK(thread.at("status") == "interrupted");
    CHECK(thread.at("metadata").at("k") == "v");
    auto resumed = stream_run(
        port, t,
        {{"command", object{{"resume", object{{"decisions", array{object{{"type", "approve"}}}}}}}}});
    CHECK(last_ai_text(last_named(resumed, "values")->data) == "written: wrote a.txt");
    CHECK(call(port, "GET", "/threads/" + t + "/runs").json().as_array().size() == 2);
}

TEST_CASE("server: a run in flight when the process died ends in error after the restart", "[server]") {
    temp_dir dir;
    {
        // What a process killed during a run leaves behind.
        server::file_store store(dir.path);
        const object thread{{"thread_id", "t-died"},
                            {"created_at", "2026-11-29T00:00:00.000Z"},
                            {"updated_at", "2026-11-29T00:00:00.000Z"},
                            {"metadata", object{}},
                            {"status", "busy"},
                            {"config", object{}}};
        const object run{
            {"run_id", "r-died"}, {"thread_id", "t-died"}, {"status", "running"}, {"kwargs", object{}}};
        agentware::test::run_coroutine([&]() -> boost::asio::awaitable<void> {
            co_await store.put_thread(thread);
            co_await store.put_run(run);
        });
    }
    std::vector<std::string> warnings;
    // A record cut short by the crash is skipped, with a warning.
    {
        std::ofstream cut(dir.path / "threads" / "t-died" / "runs.jsonl", std::ios::app);
        cut << "{\"run_id\": \"r-cut";
    }
    server::file_store reread(dir.path, [&](const std::string& w) { warnings.push_back(w); });
    CHECK(warnings.size() == 1);
    running_server srv(reread);
    const auto port = srv.port();
    auto run = call(port, "GET", "/threads/t-died/runs/r-died").json();
    CHECK(run.at("status") == "error");
    CHECK(run.at("error") == "the server stopped during the run");
    CHECK(status_of(port, "t-died") == "idle");
    // The thread takes new runs.
    auto events =
        stream_run(port, "t-died",
                   {{"input", object{{"messages", array{object{{"role", "user"}, {"content", "again"}}}}}}});
    CHECK(last_ai_text(last_named(events, "values")->data) == "you said: again");
}

TEST_CASE("server: hostile input gets a clear answer and never a crash", "[server]") {
    server::file_store store;
    server::server_options o;
    o.max_body_bytes = 4096;
    o.header_timeout = std::chrono::seconds(1);
    running_server srv(store, o);
    const auto port = srv.port();

    auto bad_json = call(port, "POST", "/threads", "{not json");
    CHECK(bad_json.status == 422);
    auto bad_field = call(port, "POST", "/threads", body({{"metadata", 5}}));
    CHECK(bad_field.status == 422);
    CHECK(bad_field.json().at("error").at("issues").at(0).at("path") ==
          boost::json::parse(R"(["metadata"])"));
    const auto t = new_thread(port);
    auto bad_mode = call(port, "POST", "/threads/" + t + "/runs",
                         body({{"assistant_id", "agent"}, {"stream_mode", array{"values", "nope"}}}));
    CHECK(bad_mode.status == 422);
    CHECK(bad_mode.json().at("error").at("issues").at(0).at("path") ==
          boost::json::parse(R"(["stream_mode",1])"));
    CHECK(call(port, "POST", "/threads/" + t + "/runs", body({{"input", object{}}})).status ==
          422); // no assistant
    auto bad_message = call(port, "POST", "/threads/" + t + "/runs/wait",
                            body({{"assistant_id", "agent"},
                                  {"input", object{{"messages", array{object{{"role", "nobody"}}}}}}}));
    CHECK(bad_message.json().at("__error__").at("message").as_string().find("input.messages[0].role") !=
          std::string::npos);
    CHECK(status_of(port, t) == "idle");

    CHECK(call(port, "POST", "/threads", std::string(10000, ' ')).status == 413);
    CHECK(call(port, "GET", "/threads/..%2F..%2Fetc").status == 404);
    CHECK(call(port, "GET", "/threads/x/runs/y/nothing").status == 404);
    CHECK(call(port, "POST", "/runs/cancel", body({{"run_ids", array{"nope"}}})).status == 204);

    // A client that sends half a request head is dropped after the header timeout.
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket slow(io);
    slow.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    boost::asio::write(slow, boost::asio::buffer(std::string("GET /ok HTTP/1.1\r\nHost: x\r\n")));
    const auto began = std::chrono::steady_clock::now();
    char byte = 0;
    boost::system::error_code ec;
    slow.read_some(boost::asio::buffer(&byte, 1), ec);
    CHECK(ec); // closed by the server
    CHECK(std::chrono::steady_clock::now() - began < std::chrono::seconds(5));
    CHECK(call(port, "GET", "/ok").status == 200);
}

TEST_CASE("server: a token guards every route", "[server]") {
    server::file_store store;
    server::server_options o;
    o.auth_token = "s3cret";
    running_server srv(store, o);
    const auto port = srv.port();
    CHECK(call(port, "GET", "/threads/x").status == 401);
    CHECK(call(port, "GET", "/ok", {}, {{"Authorization", "Bearer wrong"}}).status == 401);
    CHECK(call(port, "GET", "/ok", {}, {{"Authorization", "Bearer s3cret"}}).status == 200);
    CHECK(call(port, "GET", "/ok", {}, {{"X-Api-Key", "s3cret"}}).status == 200);
    CHECK(call(port, "OPTIONS", "/threads").status == 204);
}

} // namespace server_test
