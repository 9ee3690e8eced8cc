// `agentware serve` as a user starts it: the URL it prints, the assistants
// its configuration gives (the lead agent, and the deep agent when the
// configuration has a deep_agent section), a run of each, and a clean stop on
// SIGTERM that keeps the data for the next start.
#include "../server/server_support.hpp"
#include "../support/cli_process.hpp"

#include <catch2/catch.hpp>

#include <csignal>
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

} // namespace server_test
