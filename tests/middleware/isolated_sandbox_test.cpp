// The isolated sandbox (sandbox {use: isolated}): bash under bubblewrap.
// Each test tries to escape from inside bash. They skip, saying why, only when
// bwrap cannot create namespaces on this machine.
#include "deerflow_support.hpp"

#include <agentware/presets/deerflow.hpp>

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
