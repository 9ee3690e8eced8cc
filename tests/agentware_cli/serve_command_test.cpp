// `agentware serve` as a user starts it: the URL it prints, the assistants
// its configuration gives (the lead agent, and the deep agent when the
// configuration has a deep_agent section), a run of each, and a clean stop on
// SIGTERM that keeps the data for the next start.
#include "../server/server_support.hpp"
#include "../support/cli_process.hpp"
#include "../support/coroutine_test.hpp"
#include "../support/postgres_server.hpp"
#include "../support/redis_server.hpp"

#include <agentware/postgres/connection.hpp>

#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <sstream>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

namespace server_test {

namespace {

class serve_process {
public:
    serve_process(const std::filesystem::path& dir, std::vector<std::string> args)
        : out_(dir / "serve-output.txt") {
        std::filesystem::remove(out_); // a line of an earlier start must not be read as this one's
        args.insert(args.begin(), "serve");
        pid_ = agentware::test::start_cli(AGENTWARE_CLI, dir, out_, std::move(args));
        REQUIRE(pid_ >= 0);
        const std::string marker = "listening on http://127.0.0.1:";
        REQUIRE(eventually([&] { return output().find(marker) != std::string::npos; }));
        const auto text = output();
        port_ = static_cast<unsigned short>(std::stoi(text.substr(text.find(marker) + marker.size())));
    }
    ~serve_process() {
        if (pid_ > 0) stop();
    }
    /// SIGKILL: the process dies mid-work, as on a lost machine.
    void kill() {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }
    void signal(int sig) { ::kill(pid_, sig); }
    /// SIGTERM; the exit status.
    int stop() {
        ::kill(pid_, SIGTERM);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    unsigned short port() const { return port_; }
    std::string output() const {
        std::ifstream in(out_);
        std::stringstream text;
        text << in.rdbuf();
        return text.str();
    }

private:
    std::filesystem::path out_;
    pid_t pid_ = -1;
    unsigned short port_ = 0;
};

void write(const std::filesystem::path& file, const std::string& text) {
    std::ofstream out(file);
    out << text;
}

} // namespace

TEST_CASE("agentware serve: the lead agent and the deep agent, a stop and a restart", "[cli][serve]") {
    temp_dir dir;
    write(dir.path / "config.json", R"({
        "models": [{"name": "scripted", "model": "scripted"}],
        "thread_data": true, "sandbox": true,
        "deep_agent": {}
    })");
    write(dir.path / "script.json", R"({"model": [
        {"role": "assistant", "content": "lead here"},
        {"role": "assistant", "content": "deep here"}
    ]})");
    const std::vector<std::string> args{"--config", "config.json", "--script", "script.json",
                                        "--port",   "0",           "--data",   "data"};
    std::string thread;
    {
        serve_process serve(dir.path, args);
        const auto port = serve.port();
        auto found = call(port, "POST", "/assistants/search", "{}").json().as_array();
        REQUIRE(found.size() == 2);
        CHECK(found[0].at("graph_id") == "lead_agent");
        CHECK(found[1].at("graph_id") == "deep_agent");
        thread = std::string(call(port, "POST", "/threads", "{}").json().at("thread_id").as_string());
        auto lead = call(
            port, "POST", "/threads/" + thread + "/runs/wait",
            R"({"assistant_id": "lead_agent", "input": {"messages": [{"role": "user", "content": "hi"}]}})");
        CHECK(lead.json().at("messages").as_array().back().at("content") == "lead here");
        auto deep = call(
            port, "POST", "/runs/wait",
            R"({"assistant_id": "deep_agent", "input": {"messages": [{"role": "user", "content": "hi"}]}})");
        CHECK(deep.json().at("messages").as_array().back().at("content") == "deep here");
        CHECK(serve.stop() == 0);
        CHECK(serve.output().find("stopped") != std::string::npos);
    }
    serve_process again(dir.path, args);
    auto t = call(again.port(), "GET", "/threads/" + thread).json();
    CHECK(t.at("values").at("messages").as_array().back().at("content") == "lead here");
    CHECK(again.stop() == 0);
}

namespace {

// A database of the test's own, named to the processes through the environment.
void fresh_test_database(const std::string& name) {
    auto& pg = agentware::test::postgres_server::shared();
    agentware::test::run_coroutine([&]() -> boost::asio::awaitable<void> {
        auto admin = co_await agentware::postgres::connection::connect(pg.conninfo());
        co_await admin.query("DROP DATABASE IF EXISTS " + name);
        co_await admin.query("CREATE DATABASE " + name);
    });
    ::setenv("AGENTWARE_TEST_DATABASE", pg.conninfo(name).c_str(), 1);
}

// A stream's frames as lines ("id name data"), to compare two streams whole.
std::vector<std::string> sse_lines(const std::vector<sse_frame>& frames) {
    std::vector<std::string> out;
    for (const auto& e : frames)
        out.push_back(e.id + " " + e.name + " " + boost::json::serialize(e.data));
    return out;
}

// The run's record as `port` serves it, once `done` holds of it (or the last seen).
boost::json::object run_when(unsigned short port, const std::string& path,
                             const std::function<bool(const boost::json::object&)>& done) {
    boost::json::object last;
    eventually(
        [&] {
            last = call(port, "GET", path).json().as_object();
            return done(last);
        },
        std::chrono::seconds(30));
    return last;
}

constexpr const char* scripted_config = R"({"models": [{"name": "scripted", "model": "scripted"}]})";

// A process's folder `dir/who` with its config.json and script.json.
std::filesystem::path process_dir(const std::filesystem::path& dir, const std::string& who,
                                  const std::string& script, const std::string& config = scripted_config) {
    std::filesystem::create_directories(dir / who);
    write(dir / who / "config.json", config);
    write(dir / who / "script.json", script);
    return dir / who;
}

// A process's arguments on the test's database: its config.json and
// script.json, any port, and `more` (--lease, --redis).
std::vector<std::string> on_database(std::vector<std::string> more = {}) {
    std::vector<std::string> args{"--config", "config.json", "--script",   "script.json",
                                  "--port",   "0",           "--database", "$AGENTWARE_TEST_DATABASE"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

} // namespace

TEST_CASE("agentware serve --database: two processes share threads and their history in PostgreSQL",
          "[cli][serve][postgres]") {
    temp_dir dir;
    fresh_test_database("serve_" + std::to_string(::getpid()));
    const auto args = on_database();
    for (std::string who : {"a", "b"})
        process_dir(dir.path, who,
                    R"({"model": [{"role": "assistant", "content": "answered by )" + who + R"("}]})");
    serve_process a(dir.path / "a", args);
    serve_process b(dir.path / "b", args);
    CHECK(a.output().find("keeping threads in PostgreSQL at") != std::string::npos);

    const std::string thread(call(a.port(), "POST", "/threads", "{}").json().at("thread_id").as_string());
    const std::string ask =
        R"({"assistant_id": "lead_agent", "input": {"messages": [{"role": "user", "content": "hi"}]}})";
    auto first = call(a.port(), "POST", "/threads/" + thread + "/runs/wait", ask).json();
    CHECK(first.at("messages").as_array().back().at("content") == "answered by a");
    // The other process has the thread, its state, and continues it.
    auto seen = call(b.port(), "GET", "/threads/" + thread).json();
    CHECK(seen.at("values").at("messages").as_array().back().at("content") == "answered by a");
    auto second = call(b.port(), "POST", "/threads/" + thread + "/runs/wait", ask).json();
    const auto& messages = second.at("messages").as_array();
    REQUIRE(messages.size() == 4);
    CHECK(messages[1].at("content") == "answered by a");
    CHECK(messages[3].at("content") == "answered by b");
    // Each sees both runs, and the whole history.
    CHECK(call(a.port(), "GET", "/threads/" + thread + "/runs").json().as_array().size() == 2);
    auto history = call(a.port(), "POST", "/threads/" + thread + "/history", R"({"limit": 100})").json();
    REQUIRE(history.as_array().size() >= 2); // newest first: after b's run, ..., after a's
    CHECK(history.as_array().front().at("values").at("messages").as_array().size() == 4);
    CHECK(history.as_array().back().at("values").at("messages").as_array().size() == 2);
    CHECK(a.stop() == 0);
    // A stopped process loses nothing: the other still serves the thread whole.
    auto after = call(b.port(), "GET", "/threads/" + thread + "/state").json();
    CHECK(after.at("values").at("messages").as_array().size() == 4);
    CHECK(b.stop() == 0);
    ::unsetenv("AGENTWARE_TEST_DATABASE");
}

TEST_CASE("agentware serve --database: a run whose process dies goes on in another from its last "
          "checkpoint, a cancel reaches the process that runs it",
          "[cli][serve][postgres]") {
    temp_dir dir;
    fresh_test_database("takeover_" + std::to_string(::getpid()));
    const auto args = on_database({"--lease", "1"});
    const std::string config = R"({"models": [{"name": "scripted", "model": "scripted"}],
                                   "thread_data": true, "sandbox": true})";
    // a: a tool call, then a model that never answers (the process dies first).
    // b: the rest of the run, then a slow answer to cancel.
    const std::map<std::string, std::string> scripts{
        {"a", R"({"model": [
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_note", "type": "function",
              "function": {"name": "write_file", "arguments": "{\"description\": \"a note\", \"path\": \"/mnt/user-data/outputs/note.md\", \"content\": \"once\\n\"}"}}]},
            {"role": "assistant", "content": "never sent", "delay_ms": 600000}]})"},
        {"b", R"({"model": [
            {"role": "assistant", "content": "finished by b"},
            {"role": "assistant", "content": null, "delay_ms": 300, "tool_calls": [{"id": "call_two",
              "type": "function", "function": {"name": "write_file", "arguments": "{\"description\": \"another\", \"path\": \"/mnt/user-data/outputs/two.md\", \"content\": \"two\"}"}}]},
            {"role": "assistant", "content": "streamed from b", "delay_ms": 300},
            {"role": "assistant", "content": "too slow", "delay_ms": 600000},
            {"role": "assistant", "content": "finished while c was paused"}]})"},
        {"c", R"({"model": [{"role": "assistant", "content": "never sent", "delay_ms": 600000}]})"}};
    for (const auto& [who, script] : scripts)
        process_dir(dir.path, who, script, config);
    serve_process a(dir.path / "a", args);
    serve_process b(dir.path / "b", args);
    CHECK(a.output().find("working the shared run queue as ") != std::string::npos);

    const std::string thread(call(a.port(), "POST", "/threads", "{}").json().at("thread_id").as_string());
    const std::string ask =
        R"({"assistant_id": "lead_agent", "input": {"messages": [{"role": "user", "content": "hi"}]}})";
    auto made = call(a.port(), "POST", "/threads/" + thread + "/runs", ask).json().as_object();
    CHECK(made.at("status") == "running"); // the thread was free: its creator runs it
    const std::string run_path = "/threads/" + thread + "/runs/" + std::string(made.at("run_id").as_string());
    // The tool's result is checkpointed (b reads it from the database), then a dies mid model call.
    auto has_tool_result = [&] {
        const auto state = call(b.port(), "GET", "/threads/" + thread + "/state").json();
        const auto* ms = state.at("values").as_object().if_contains("messages");
        return ms != nullptr && std::any_of(ms->as_array().begin(), ms->as_array().end(),
                                            [](const auto& m) { return m.at("type") == "tool"; });
    };
    if (!eventually(has_tool_result, std::chrono::seconds(20)))
        FAIL("the run never saved its tool's result; the run: " + call(a.port(), "GET", run_path).body +
             "\na said:\n" + a.output() + "\nb said:\n" + b.output());
    a.kill();

    // b takes the run over once a's lease lapsed, and ends it.
    auto run = run_when(b.port(), run_path, [](const auto& r) { return r.at("status") == "success"; });
    CHECK(run.at("status") == "success");
    const auto state = call(b.port(), "GET", "/threads/" + thread + "/state").json();
    const auto& ms = state.at("values").at("messages").as_array();
    std::vector<std::string> types;
    for (const auto& m : ms)
        types.emplace_back(m.at("type").as_string());
    // Its input once, the tool once (its checkpointed result is not run again), b's answer.
    CHECK(types == std::vector<std::string>{"human", "ai", "tool", "ai"});
    CHECK(ms.back().at("content") == "finished by b");
    CHECK(call(b.port(), "GET", "/threads/" + thread).json().at("status") == "idle");

    // A client of another process follows a run event by event, as a client of its own process does.
    serve_process c(dir.path / "c", args);
    const std::string third(call(b.port(), "POST", "/threads", "{}").json().at("thread_id").as_string());
    auto streamed = call(b.port(), "POST", "/threads/" + third + "/runs",
                         R"({"assistant_id": "lead_agent", "stream_mode": ["values", "updates"], )"
                         R"("input": {"messages": [{"role": "user", "content": "hi"}]}})")
                        .json()
                        .as_object();
    REQUIRE(streamed.at("status") == "running");
    const std::string streamed_path =
        "/threads/" + third + "/runs/" + std::string(streamed.at("run_id").as_string()) + "/stream";
    const auto from_c = parse_sse(call(c.port(), "GET", streamed_path).body); // while b runs it
    const auto from_b = parse_sse(call(b.port(), "GET", streamed_path).body); // b's own, once over
    REQUIRE(from_b.size() >= 4);
    CHECK(sse_lines(from_c) == sse_lines(from_b));
    CHECK(from_c.front().name == "metadata");
    CHECK(from_c.back().data.at("messages").as_array().back().at("content") == "streamed from b");
    // Resumed after an event it saw, from a third process: the rest, exactly.
    serve_process again(dir.path / "a", args);
    const auto resumed =
        parse_sse(call(again.port(), "GET", streamed_path, "", {{"Last-Event-ID", from_b[1].id}}).body);
    CHECK(again.stop() == 0);
    const auto all = sse_lines(from_b);
    CHECK(sse_lines(resumed) == std::vector<std::string>(all.begin() + 2, all.end()));

    // A cancel asked of one process stops the run another executes.
    const std::string other(call(b.port(), "POST", "/threads", "{}").json().at("thread_id").as_string());
    auto slow = call(b.port(), "POST", "/threads/" + other + "/runs", ask).json().as_object();
    REQUIRE(slow.at("status") == "running");
    const std::string slow_path = "/threads/" + other + "/runs/" + std::string(slow.at("run_id").as_string());
    CHECK(call(c.port(), "POST", slow_path + "/cancel", "").status == 202);
    auto cancelled =
        run_when(c.port(), slow_path, [](const auto& r) { return r.at("status") == "interrupted"; });
    CHECK(cancelled.at("status") == "interrupted");

    // A process paused past its lease (SIGSTOP) loses its run to another, and
    // once it resumes it finds out and writes nothing.
    const std::string paused_thread(
        call(c.port(), "POST", "/threads", "{}").json().at("thread_id").as_string());
    auto held = call(c.port(), "POST", "/threads/" + paused_thread + "/runs", ask).json().as_object();
    REQUIRE(held.at("status") == "running");
    const std::string held_path =
        "/threads/" + paused_thread + "/runs/" + std::string(held.at("run_id").as_string());
    c.signal(SIGSTOP);
    auto taken = run_when(b.port(), held_path, [](const auto& r) { return r.at("status") == "success"; });
    CHECK(taken.at("status") == "success");
    c.signal(SIGCONT);
    REQUIRE(eventually([&] { return c.output().find("its lease was lost") != std::string::npos; },
                       std::chrono::seconds(10)));
    CHECK(call(c.port(), "GET", held_path).json().at("status") == "success");
    const auto after_pause = call(c.port(), "GET", "/threads/" + paused_thread + "/state").json();
    const auto& kept = after_pause.at("values").at("messages").as_array();
    REQUIRE(kept.size() == 2);
    CHECK(kept.back().at("content") == "finished while c was paused");
    CHECK(call(c.port(), "GET", "/threads/" + paused_thread).json().at("status") == "idle");
    CHECK(b.stop() == 0);
    CHECK(c.stop() == 0);
    ::unsetenv("AGENTWARE_TEST_DATABASE");
}

TEST_CASE("agentware serve --database: after_seconds holds on whichever process claims the run",
          "[cli][serve][postgres]") {
    temp_dir dir;
    fresh_test_database("after_" + std::to_string(::getpid()));
    const auto args = on_database();
    const std::map<std::string, std::string> scripts{
        {"a", R"({"model": [{"role": "assistant", "content": "first", "delay_ms": 800},
                            {"role": "assistant", "content": "later"}]})"},
        {"b", R"({"model": [{"role": "assistant", "content": "later"}]})"}};
    for (const auto& [who, script] : scripts)
        process_dir(dir.path, who, script);
    serve_process a(dir.path / "a", args);
    serve_process b(dir.path / "b", args);
    const std::string thread(call(a.port(), "POST", "/threads", "{}").json().at("thread_id").as_string());
    const std::string path = "/threads/" + thread + "/runs";
    CHECK(
        call(a.port(), "POST", path,
             R"({"assistant_id": "lead_agent", "input": {"messages": [{"role": "user", "content": "one"}]}})")
            .json()
            .at("status") == "running");
    // Behind the first run: queued, then claimed by a or b once the thread is free (at 0.8 s).
    const auto asked = std::chrono::steady_clock::now();
    auto later =
        call(b.port(), "POST", path,
             R"({"assistant_id": "lead_agent", "multitask_strategy": "enqueue", "after_seconds": 2, )"
             R"("input": {"messages": [{"role": "user", "content": "two"}]}})")
            .json()
            .as_object();
    CHECK(later.at("status") == "pending");
    const std::string later_path = path + "/" + std::string(later.at("run_id").as_string());
    const auto done =
        run_when(a.port(), later_path, [](const auto& r) { return r.at("status") == "success"; });
    CHECK(done.at("status") == "success");
    const auto took = std::chrono::steady_clock::now() - asked;
    CHECK(took >= std::chrono::seconds(2));
    CHECK(took < std::chrono::seconds(6));
    const auto state = call(b.port(), "GET", "/threads/" + thread + "/state").json();
    const auto& ms = state.at("values").at("messages").as_array();
    REQUIRE(ms.size() == 4);
    CHECK(ms[1].at("content") == "first");
    CHECK(ms[3].at("content") == "later");
    CHECK(a.stop() == 0);
    CHECK(b.stop() == 0);
    ::unsetenv("AGENTWARE_TEST_DATABASE");
}

TEST_CASE("agentware serve --database: three processes, a thousand runs, one process killed mid-run",
          "[cli][serve][postgres]") {
    constexpr int threads = 100, runs_per_thread = 10;
    temp_dir dir;
    fresh_test_database("three_" + std::to_string(::getpid()));
    const auto args = on_database({"--lease", "1"});
    // Each process can answer every run (each answer a little late, so that runs are in flight).
    std::string script = R"({"model": [)";
    for (int i = 0; i < threads * runs_per_thread + 100; ++i)
        script += std::string(i ? "," : "") + R"({"role": "assistant", "content": "ok", "delay_ms": 20})";
    script += "]}";
    std::vector<std::unique_ptr<serve_process>> servers;
    for (std::string who : {"a", "b", "c"})
        servers.push_back(std::make_unique<serve_process>(process_dir(dir.path, who, script), args));
    std::vector<std::string> ids;
    for (int t = 0; t < threads; ++t)
        ids.emplace_back(
            call(servers[t % 3]->port(), "POST", "/threads", "{}").json().at("thread_id").as_string());
    // Runs queue on their threads (enqueue) and go to whichever process is free.
    bool killed = false;
    for (int k = 0; k < threads * runs_per_thread; ++k) {
        if (k == threads * runs_per_thread * 2 / 5) { // c dies with runs of its own in flight
            servers[2]->kill();
            killed = true;
        }
        const auto& via = *servers[killed ? k % 2 : k % 3];
        const int t = k % threads;
        const auto made = call(via.port(), "POST", "/threads/" + ids[t] + "/runs",
                               R"({"assistant_id": "lead_agent", "multitask_strategy": "enqueue", )"
                               R"("input": {"messages": [{"role": "user", "content": "run )" +
                                   std::to_string(k) + R"("}]}})");
        REQUIRE(made.status == 200);
    }
    // Every run ends once, successfully, on a or b.
    auto all_done = [&] {
        for (const auto& id : ids) {
            const auto runs = call(servers[0]->port(), "GET", "/threads/" + id + "/runs?limit=100").json();
            if (runs.as_array().size() != runs_per_thread) return false;
            for (const auto& r : runs.as_array())
                if (r.at("status") != "success") return false;
        }
        return true;
    };
    REQUIRE(eventually(all_done, std::chrono::seconds(180)));
    // Each thread has each of its inputs once, in order, each with its answer.
    for (int t = 0; t < threads; ++t) {
        const auto state = call(servers[1]->port(), "GET", "/threads/" + ids[t] + "/state").json();
        const auto& ms = state.at("values").at("messages").as_array();
        REQUIRE(ms.size() == 2 * runs_per_thread);
        for (int i = 0; i < runs_per_thread; ++i) {
            CHECK(ms[2 * i].at("content").as_string() == "run " + std::to_string(t + i * threads));
            CHECK(ms[2 * i + 1].at("type") == "ai");
        }
        CHECK(call(servers[0]->port(), "GET", "/threads/" + ids[t]).json().at("status") == "idle");
    }
    CHECK(servers[0]->stop() == 0);
    CHECK(servers[1]->stop() == 0);
    ::unsetenv("AGENTWARE_TEST_DATABASE");
}

TEST_CASE("agentware serve --database: the database restarts mid-run, the runs go on and end once",
          "[cli][serve][postgres]") {
    constexpr int threads = 8;
    temp_dir dir;
    fresh_test_database("restart_" + std::to_string(::getpid()));
    // A lease of 6 s: statements wait up to 3 s for the database to come back.
    const auto args = on_database({"--lease", "6"});
    // Answers spread over the restart: some end before it, some while the
    // database is down, some after.
    std::string script = R"({"model": [)";
    for (int i = 0; i < threads + 2; ++i)
        script += std::string(i ? "," : "") + R"({"role": "assistant", "content": "ok", "delay_ms": )" +
                  std::to_string(200 + 250 * i) + "}";
    script += "]}";
    serve_process serve(process_dir(dir.path, "one", script), args);

    std::vector<std::string> ids, runs;
    for (int t = 0; t < threads; ++t) {
        ids.emplace_back(call(serve.port(), "POST", "/threads", "{}").json().at("thread_id").as_string());
        const auto made = call(serve.port(), "POST", "/threads/" + ids.back() + "/runs",
                               R"({"assistant_id": "lead_agent", "input": {"messages": )"
                               R"([{"role": "user", "content": "hi"}]}})")
                              .json();
        runs.emplace_back(made.at("run_id").as_string());
    }
    auto& pg = agentware::test::postgres_server::shared();
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    pg.stop();
    // A client asks while the database is down: its answer waits for it.
    auto asked_meanwhile = std::async(std::launch::async,
                                      [&] { return call(serve.port(), "GET", "/threads/" + ids[0]).status; });
    std::this_thread::sleep_for(std::chrono::milliseconds(1'000));
    pg.start();
    CHECK(asked_meanwhile.get() == 200);

    // Every run ends once, successfully; each thread holds its input and one answer.
    for (int t = 0; t < threads; ++t) {
        const std::string path = "/threads/" + ids[t] + "/runs/" + runs[t];
        const auto run =
            run_when(serve.port(), path, [](const auto& r) { return r.at("status") == "success"; });
        CHECK(run.at("status") == "success");
        const auto state = call(serve.port(), "GET", "/threads/" + ids[t] + "/state").json();
        const auto& ms = state.at("values").at("messages").as_array();
        REQUIRE(ms.size() == 2);
        CHECK(ms[1].at("content") == "ok");
        CHECK(call(serve.port(), "GET", "/threads/" + ids[t] + "/runs").json().as_array().size() == 1);
        CHECK(call(serve.port(), "GET", "/threads/" + ids[t]).json().at("status") == "idle");
    }
    // And the process serves new runs on the restarted database.
    const auto after = call(serve.port(), "POST", "/threads/" + ids[0] + "/runs/wait",
                            R"({"assistant_id": "lead_agent", "input": {"messages": )"
                            R"([{"role": "user", "content": "again"}]}})")
                           .json();
    CHECK(after.at("messages").as_array().size() == 4);
    CHECK(serve.stop() == 0);
    ::unsetenv("AGENTWARE_TEST_DATABASE");
}

TEST_CASE("agentware serve --database --redis: a client of one process follows a run another executes, "
          "through Redis Streams",
          "[cli][serve][postgres][redis]") {
    temp_dir dir;
    fresh_test_database("redis_" + std::to_string(::getpid()));
    ::setenv("AGENTWARE_TEST_REDIS", agentware::test::redis_server::shared().url().c_str(), 1);
    const auto args = on_database({"--redis", "$AGENTWARE_TEST_REDIS"});
    for (std::string who : {"runs", "follows"})
        process_dir(dir.path, who, R"({"model": [
            {"role": "assistant", "content": "one moment", "delay_ms": 200},
            {"role": "assistant", "content": "followed through Redis", "delay_ms": 200}]})");
    serve_process runs(dir.path / "runs", args);
    serve_process follows(dir.path / "follows", args);
    CHECK(runs.output().find("carrying the runs' events through Redis at unix://") != std::string::npos);

    const std::string thread(call(runs.port(), "POST", "/threads", "{}").json().at("thread_id").as_string());
    const std::string ask = R"({"assistant_id": "lead_agent", "stream_mode": ["values", "messages-tuple"], )"
                            R"("input": {"messages": [{"role": "user", "content": "hi"}]}})";
    auto made = call(runs.port(), "POST", "/threads/" + thread + "/runs", ask).json().as_object();
    REQUIRE(made.at("status") == "running");
    const std::string path =
        "/threads/" + thread + "/runs/" + std::string(made.at("run_id").as_string()) + "/stream";
    const auto followed = parse_sse(call(follows.port(), "GET", path).body);
    const auto own = parse_sse(call(runs.port(), "GET", path).body);
    REQUIRE(own.size() >= 3);
    CHECK(sse_lines(followed) == sse_lines(own));
    CHECK(followed.back().data.at("messages").as_array().back().at("content") == "one moment");
    CHECK(runs.stop() == 0);
    CHECK(follows.stop() == 0);
    ::unsetenv("AGENTWARE_TEST_DATABASE");
    ::unsetenv("AGENTWARE_TEST_REDIS");
}

TEST_CASE("agentware serve --database --redis: Redis restarts or is down, the runs end and their "
          "followers' streams end with them",
          "[cli][serve][postgres][redis]") {
    temp_dir dir;
    fresh_test_database("redis_restart_" + std::to_string(::getpid()));
    auto& redis = agentware::test::redis_server::shared();
    ::setenv("AGENTWARE_TEST_REDIS", redis.url().c_str(), 1);
    const auto args = on_database({"--redis", "$AGENTWARE_TEST_REDIS"});
    for (std::string who : {"runs", "follows"})
        process_dir(dir.path, who, R"({"model": [
            {"role": "assistant", "content": "across the restart", "delay_ms": 1500},
            {"role": "assistant", "content": "while Redis was down", "delay_ms": 300},
            {"role": "assistant", "content": "through Redis again", "delay_ms": 300}]})");
    serve_process runs(dir.path / "runs", args);
    serve_process follows(dir.path / "follows", args);
    const std::string ask = R"({"assistant_id": "lead_agent", "stream_mode": ["values", "updates"], )"
                            R"("input": {"messages": [{"role": "user", "content": "hi"}]}})";
    auto start = [&] {
        const std::string thread(
            call(runs.port(), "POST", "/threads", "{}").json().at("thread_id").as_string());
        auto made = call(runs.port(), "POST", "/threads/" + thread + "/runs", ask).json().as_object();
        REQUIRE(made.at("status") == "running");
        return "/threads/" + thread + "/runs/" + std::string(made.at("run_id").as_string());
    };
    auto last_answer = [](const std::vector<sse_frame>& frames) -> std::string {
        for (auto it = frames.rbegin(); it != frames.rend(); ++it)
            if (it->name == "values")
                return std::string(it->data.at("messages").as_array().back().at("content").as_string());
        return "";
    };

    // Redis restarts while the run waits for its model: the run's next events
    // go out on a new connection, and its follower sees them all.
    const std::string across = start();
    auto followed = std::async(
        std::launch::async, [&] { return parse_sse(call(follows.port(), "GET", across + "/stream").body); });
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    redis.stop();
    redis.start();
    const auto seen = followed.get();
    const auto own = parse_sse(call(runs.port(), "GET", across + "/stream").body);
    CHECK(sse_lines(seen) == sse_lines(own));
    CHECK(last_answer(seen) == "across the restart");
    CHECK(call(runs.port(), "GET", across).json().at("status") == "success");

    // Redis down for a whole run: the run ends as ever; its follower's stream
    // ends with it, its end read from the database.
    redis.stop();
    const std::string down = start();
    const auto without = parse_sse(call(follows.port(), "GET", down + "/stream").body);
    REQUIRE(!without.empty());
    CHECK(without.front().name == "metadata");
    CHECK(last_answer(without) == "while Redis was down");
    CHECK(call(follows.port(), "GET", down).json().at("status") == "success");
    REQUIRE(eventually(
        [&] { return runs.output().find("did not all reach the other processes") != std::string::npos; }));

    // Back: the next run is followed through Redis, event by event.
    redis.start();
    const std::string again = start();
    const auto through = parse_sse(call(follows.port(), "GET", again + "/stream").body);
    CHECK(sse_lines(through) == sse_lines(parse_sse(call(runs.port(), "GET", again + "/stream").body)));
    CHECK(last_answer(through) == "through Redis again");
    CHECK(runs.stop() == 0);
    CHECK(follows.stop() == 0);
    ::unsetenv("AGENTWARE_TEST_DATABASE");
    ::unsetenv("AGENTWARE_TEST_REDIS");
}

} // namespace server_test
