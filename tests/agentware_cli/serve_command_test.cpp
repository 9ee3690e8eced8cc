// `agentware serve` as a user starts it: the URL it prints, the assistants
// its configuration gives (the lead agent, and the deep agent when the
// configuration has a deep_agent section), a run of each, and a clean stop on
// SIGTERM that keeps the data for the next start.
#include "../server/server_support.hpp"
#include "../support/cli_process.hpp"
#include "../support/coroutine_test.hpp"
#include "../support/postgres_server.hpp"

#include <agentware/postgres/connection.hpp>

#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>

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

TEST_CASE("agentware serve --database: two processes share threads and their history in PostgreSQL",
          "[cli][serve][postgres]") {
    temp_dir dir;
    // A database of the test's own, named to the processes through the environment.
    const std::string name = "serve_" + std::to_string(::getpid());
    auto& pg = agentware::test::postgres_server::shared();
    agentware::test::run_coroutine([&]() -> boost::asio::awaitable<void> {
        auto admin = co_await agentware::postgres::connection::connect(pg.conninfo());
        co_await admin.query("DROP DATABASE IF EXISTS " + name);
        co_await admin.query("CREATE DATABASE " + name);
    });
    ::setenv("AGENTWARE_TEST_DATABASE", pg.conninfo(name).c_str(), 1);
    const std::vector<std::string> args{"--config", "config.json", "--script",   "script.json",
                                        "--port",   "0",           "--database", "$AGENTWARE_TEST_DATABASE"};
    for (std::string who : {"a", "b"}) {
        std::filesystem::create_directories(dir.path / who);
        write(dir.path / who / "config.json", R"({"models": [{"name": "scripted", "model": "scripted"}]})");
        write(dir.path / who / "script.json",
              R"({"model": [{"role": "assistant", "content": "answered by )" + who + R"("}]})");
    }
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

} // namespace server_test
