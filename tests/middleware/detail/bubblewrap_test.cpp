// The isolated sandbox (sandbox {use: isolated}): bash under bubblewrap.
// Each test tries to escape from inside bash. They skip, saying why, only when
// bwrap cannot create namespaces on this machine.
#include <agentware/middleware/detail/bubblewrap.hpp>

#include "../deerflow_support.hpp"

#include <agentware/presets/deerflow.hpp>
#include <agentware/presets/lead_agent.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

using namespace agentware;
namespace fs = std::filesystem;

namespace {

bool isolation_works() {
    static const std::optional<std::string> why = detail::bubblewrap_unavailable();
    if (why) WARN("skipped: the isolated sandbox cannot run here: " << *why);
    return !why;
}

sandbox_options isolated(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    sandbox_options o;
    o.use = "isolated";
    o.bash_command_timeout = timeout;
    return o;
}

std::string bash(dftest::sandbox_env& env, std::string command) {
    return env.call("bash", boost::json::object{{"description", "d"}, {"command", std::move(command)}})
        .text();
}

bool process_with_arg_exists(std::string_view arg) {
    for (const auto& e : fs::directory_iterator("/proc")) {
        const std::string name = e.path().filename().string();
        if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
        std::string cmdline = dftest::read(e.path() / "cmdline");
        std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
        if (cmdline.find(arg) != std::string::npos && cmdline.find("bash -c") == std::string::npos)
            return true;
    }
    return false;
}

} // namespace

TEST_CASE("the isolated sandbox offers bash and runs it at the virtual paths",
          "[middleware][isolated_sandbox]") {
    if (!isolation_works()) return;
    dftest::sandbox_env env(isolated());
    env.ctx->provider = isolated_sandbox_provider{};
    fs::create_directories(env.uploads());
    dftest::write(env.uploads() / "in.txt", "uploaded\n");
    const std::string out =
        bash(env, "pwd; cat /mnt/user-data/uploads/in.txt; echo made > "
                  "/mnt/user-data/workspace/w.txt; echo o > /mnt/user-data/outputs/o.txt; "
                  "hostname");
    CHECK(out == "/mnt/user-data/workspace\nuploaded\nsandbox\n");
    CHECK(dftest::read(env.ws() / "w.txt") == "made\n");
    CHECK(dftest::read(env.outputs() / "o.txt") == "o\n");
    CHECK(env.state.get<sandbox_field>()->sandbox_id == "isolated:default:t1");
    // The middleware offers bash with use: isolated, not with local.
    auto names = [](const sandbox& s) {
        std::vector<std::string> n;
        for (const auto& t : s.tools())
            n.push_back(t->schema().name);
        return n;
    };
    CHECK(names(sandbox(isolated())).at(0) == "bash");
    const auto local_names = names(sandbox());
    CHECK(std::find(local_names.begin(), local_names.end(), "bash") == local_names.end());
}

TEST_CASE("escape: writing outside the thread's directories fails", "[middleware][isolated_sandbox]") {
    if (!isolation_works()) return;
    dftest::sandbox_env env(isolated());
    fs::create_directories(env.outside());
    const std::string marker = "agentware-escape-" + std::to_string(::getpid());
    const std::string out =
        bash(env, fmt::format("for p in /{0} /etc/{0} /usr/{0} /var/{0} /root/{0} {1}/{0} "
                              "/mnt/user-data/uploads/{0} /mnt/user-data/{0} /proc/{0} /sys/{0}; do "
                              "(echo x > $p) 2>/dev/null && echo WROTE $p; done; echo done",
                              marker, env.outside().string()));
    CHECK(out == "done\n");
    for (const fs::path& p :
         {fs::path("/") / marker, fs::path("/etc") / marker, fs::path("/usr") / marker,
          env.outside() / marker, fs::temp_directory_path() / marker, env.uploads() / marker})
        CHECK_FALSE(fs::exists(p));
    // /tmp inside is the sandbox's own, gone after the call.
    CHECK(bash(env, "echo t > /tmp/" + marker + " && cat /tmp/" + marker) == "t\n");
    CHECK_FALSE(fs::exists(fs::path("/tmp") / marker));
}

TEST_CASE("escape: the host's home and /etc/shadow cannot be read", "[middleware][isolated_sandbox]") {
    if (!isolation_works()) return;
    dftest::sandbox_env env(isolated());
    const char* home = std::getenv("HOME");
    const std::string h = home ? home : "/root";
    const std::string out = bash(
        env,
        fmt::format("cat /etc/shadow 2>&1; ls {} 2>&1; ls /home 2>&1; ls /root 2>&1; cat /etc/gshadow 2>&1; "
                    "ls {} 2>&1 | head -1",
                    h, env.base.path.string()));
    CHECK(out.find("root:") == std::string::npos);
    CHECK(out.find("No such file or directory") != std::string::npos);
    CHECK(out.find("uploads") == std::string::npos); // the base directory of all threads is not there
}

TEST_CASE("escape: no network unless configured", "[middleware][isolated_sandbox]") {
    if (!isolation_works()) return;
    // A listener on the host's loopback.
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd, 4) == 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    const int port = ntohs(addr.sin_port);
    const std::string probe =
        fmt::format("(exec 3<>/dev/tcp/127.0.0.1/{}) 2>/dev/null && echo CONNECTED || echo refused; "
                    "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '",
                    port);
    dftest::sandbox_env env(isolated());
    CHECK(bash(env, probe) == "refused\nlo\n"); // its own loopback only
    sandbox_options with_net = isolated();
    with_net.isolation.network = true;
    dftest::sandbox_env net(with_net);
    CHECK(bash(net, probe).starts_with("CONNECTED"));
    ::close(fd);
}

TEST_CASE("escape: a fork bomb is contained and killed", "[middleware][isolated_sandbox]") {
    if (!isolation_works()) return;
    sandbox_options o = isolated(std::chrono::seconds(3));
    o.isolation.max_processes = 64;
    dftest::sandbox_env env(o);
    const auto start = std::chrono::steady_clock::now();
    const std::string out = bash(env, ":(){ :|:& };:");
    INFO("the bomb's output: " << out);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
    // The bomb is still trying when the time is up, or it hit the process cap, or the
    // top shell returned at once (the bomb runs in the background) and the end of the
    // call killed everything it had started: which one depends on the machine's load.
    CHECK((out.find("Command timed out after 3 seconds") != std::string::npos ||
           out.find("fork: ") != std::string::npos || out == "(no output)"));
    // The machine still works and the sandbox too.
    CHECK(bash(env, "echo alive") == "alive\n");
}

TEST_CASE("escape: nothing keeps running after the call", "[middleware][isolated_sandbox]") {
    if (!isolation_works()) return;
    dftest::sandbox_env env(isolated());
    const std::string tag = std::to_string(31000 + ::getpid() % 1000);
    CHECK(bash(env, "nohup sleep " + tag + " >/dev/null 2>&1 & setsid sleep " + tag +
                        " & disown; echo started") == "started\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK_FALSE(process_with_arg_exists("sleep " + tag));
}

TEST_CASE("limits: memory and time", "[middleware][isolated_sandbox]") {
    if (!isolation_works()) return;
    sandbox_options o = isolated(std::chrono::seconds(2));
    o.isolation.max_memory_mb = 256;
    dftest::sandbox_env env(o);
    // Asking for 1 GB in one process fails under the limit.
    const std::string mem = bash(env, "x=$(head -c 600000000 /dev/zero | tr '\\0' a); echo ${#x}");
    CHECK(mem.find("600000000") == std::string::npos);
    CHECK(bash(env, "sleep 30").find("Command timed out after 2 seconds") != std::string::npos);
}

TEST_CASE("sandbox use: isolated from configuration, and bad values",
          "[middleware][isolated_sandbox][options]") {
    auto o = boost::json::value_to<sandbox_options>(
        boost::json::parse(R"({"use":"isolated","isolation":{"network":true,"max_processes":32}})"));
    CHECK(o.isolated());
    CHECK(o.offers_bash());
    CHECK(o.isolation.network);
    CHECK(o.isolation.max_processes == 32);
    CHECK(boost::json::value_to<sandbox_options>(boost::json::value_from(o)) == o);
    CHECK(boost::json::value_to<sandbox_options>(
              boost::json::parse(R"({"use":"deerflow.sandbox.local:LocalSandboxProvider"})"))
              .use == "local");
    CHECK_THROWS_WITH(boost::json::value_to<sandbox_options>(boost::json::parse(R"({"use":"docker"})")),
                      Catch::Contains("sandbox.use") && Catch::Contains("isolated"));
    CHECK_THROWS_WITH(
        boost::json::value_to<sandbox_options>(boost::json::parse(R"({"isolation":{"net":true}})")),
        Catch::Contains("sandbox.isolation.net"));
    auto chain =
        make_deerflow_pipeline(boost::json::parse(R"({"thread_data":true,"sandbox":{"use":"isolated"}})"));
    REQUIRE(chain.get<sandbox>());
    CHECK(chain.get<sandbox>()->options().isolated());
}

// The lead agent's built-in `bash` subagent (DeerFlow's task tool, reference
// §5.12): with the isolated sandbox its commands run inside it; with the local
// one (host bash not allowed) the type is hidden and refused with DeerFlow's text.
namespace isolated_sandbox_test {

struct lead_run {
    std::string task_result;                 // the task tool's answer to the lead
    std::vector<recorded_request> requests;  // every model request, lead and subagent, in order
    std::vector<std::string> subagent_types; // what the executor offers
};

inline lead_run run_bash_subagent(const fs::path& base, std::string_view sandbox_section, std::string command,
                                  bool subagent_runs) {
    boost::json::object config =
        boost::json::parse(R"({"models": [{"name": "m", "provider": "openai", "model": "x"}]})").as_object();
    config["thread_data"] = boost::json::object{{"base_dir", base.string()}};
    config["sandbox"] = boost::json::parse(sandbox_section);
    const boost::json::object task{
        {"description", "run it"}, {"prompt", "Run the command."}, {"subagent_type", "bash"}};
    const boost::json::object bash_args{{"description", "run"}, {"command", std::move(command)}};
    // The subagent inherits the lead's model: one script serves both, in call order.
    std::vector<message> script{ai_message("", {tool_call{"task-1", "task", task}})};
    if (subagent_runs) {
        script.push_back(ai_message("", {tool_call{"bash-1", "bash", bash_args}}));
        script.push_back(ai_message("it ran"));
    }
    script.push_back(ai_message("done"));
    scripted_model model(std::move(script));
    lead_agent_setup setup;
    setup.model_factory = [model](std::string_view, bool) { return any_chat_model(model); };
    lead_agent_request request;
    request.subagent_enabled = true;
    auto lead = make_lead_agent(config, request, setup);
    lead_run out;
    out.subagent_types = lead.executor->registry().available();
    lead_agent::state_type state;
    run_config cfg;
    cfg.thread_id = "t-bash";
    const auto result = lead.run(state, agent_input(human_message("go")), cfg);
    REQUIRE(result.reason == stop_reason::finished);
    for (const auto& m : state.messages)
        if (m.is_tool() && m.tool_call_id() == "task-1") out.task_result = m.text();
    out.requests = model.requests();
    return out;
}

} // namespace isolated_sandbox_test

TEST_CASE("the bash subagent runs its commands in the isolated sandbox",
          "[middleware][isolated_sandbox][subagent]") {
    if (!isolation_works()) return;
    dftest::temp_dir base;
    // Outside the thread's directories (the base of all threads is not mounted inside).
    const fs::path escape = base.path / "outside" / "agentware-bash-subagent";
    fs::create_directories(escape.parent_path());
    const auto run = isolated_sandbox_test::run_bash_subagent(
        base.path, R"({"use": "isolated", "bash_command_timeout": 20})",
        "pwd; echo made > /mnt/user-data/outputs/made.txt; (echo x > " + escape.string() +
            ") 2>/dev/null || echo refused; cat /etc/shadow >/dev/null 2>&1 || echo no-shadow; hostname",
        true);
    CHECK(std::find(run.subagent_types.begin(), run.subagent_types.end(), "bash") !=
          run.subagent_types.end());
    CHECK(run.task_result == "Task Succeeded. Result: it ran");
    // The subagent's second request carries the bash result: run inside the sandbox.
    REQUIRE(run.requests.size() == 4);
    CHECK(run.requests[1].messages.back().text() == "Run the command.");
    const message& result = run.requests[2].messages.back();
    REQUIRE(result.is_tool());
    CHECK(result.text() == "/mnt/user-data/workspace\nrefused\nno-shadow\nsandbox\n");
    CHECK_FALSE(fs::exists(escape));
    // The thread's outputs on the host hold what the subagent wrote.
    const auto paths = detail::make_thread_paths(base.path, "default", "t-bash");
    CHECK(dftest::read(fs::path(paths.outputs_path) / "made.txt") == "made\n");
}

TEST_CASE("the bash subagent is hidden and refused when host bash is not allowed",
          "[middleware][isolated_sandbox][subagent]") {
    dftest::temp_dir base;
    const auto run =
        isolated_sandbox_test::run_bash_subagent(base.path, R"({"use": "local"})", "echo hi", false);
    CHECK(std::find(run.subagent_types.begin(), run.subagent_types.end(), "bash") ==
          run.subagent_types.end());
    // DeerFlow's text, naming agentware's isolated sandbox (docs/subagents.md).
    CHECK(run.task_result ==
          "Task failed. Error: Bash subagent is disabled for LocalSandboxProvider because host bash "
          "execution is not a secure sandbox boundary. Switch to the isolated sandbox (sandbox.use: "
          "isolated) for isolated bash access, or set sandbox.allow_host_bash: true only in a fully trusted "
          "local environment.");
    // The lead's model was asked twice (the delegation, then its answer); no subagent ran.
    CHECK(run.requests.size() == 2);
}
