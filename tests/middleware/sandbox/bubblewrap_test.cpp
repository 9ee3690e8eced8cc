// The isolated sandbox (sandbox {use: isolated}): bash under bubblewrap.
// Each test tries to escape from inside bash. They skip, saying why, only when
// bwrap cannot create namespaces on this machine.
#include <agentware/middleware/sandbox/bubblewrap.hpp>

#include "../deerflow_support.hpp"

#include <agentware/presets/deerflow.hpp>
#include <agentware/presets/lead_agent.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <thread>

#include <arpa/inet.h>
#include <grp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

// Tries, from inside the sandbox, every way out the kernel's own settings and
// the host's processes offer. Each file is only opened for writing, never
// written: a test must not change a host setting even when the sandbox fails.
// Prints one line per success and, last, how many kernel settings it tried.
std::string kernel_escape_script(const std::string& marker) {
    return fmt::format(
        R"(n=0
while IFS= read -r -d '' f; do
  n=$((n+1))
  if {{ exec 3>>"$f"; }} 2>/dev/null; then echo "OPENED $f"; exec 3>&-; fi
done < <(find /proc/sys /sys -type f -perm /222 -print0 2>/dev/null)
for f in /proc/sysrq-trigger /proc/sys/kernel/core_pattern /proc/sys/kernel/modprobe /proc/sys/vm/drop_caches /proc/sys/kernel/hostname; do
  [ -e "$f" ] || continue
  if {{ exec 3>>"$f"; }} 2>/dev/null; then echo "OPENED $f"; exec 3>&-; fi
done
for p in /proc/self/root /proc/1/root; do
  for d in "" /etc /usr /mnt/user-data /proc/sys/kernel; do
    if {{ exec 3>>"$p$d/{0}"; }} 2>/dev/null; then echo "CREATED $p$d/{0}"; exec 3>&-; fi
  done
done
mount -t tmpfs none /tmp 2>/dev/null && echo "MOUNTED tmpfs"
mount -o remount,rw /usr 2>/dev/null && echo "REMOUNTED /usr"
unshare --user true 2>/dev/null && echo "UNSHARED user"
unshare --mount true 2>/dev/null && echo "UNSHARED mount"
unshare --user --map-root-user --mount sh -c 'mount -t tmpfs none /usr' 2>/dev/null && echo "MOUNTED in a user namespace"
hostname agentware-escape 2>/dev/null && echo "SET hostname"
[ -e /proc/{1} ] && echo "SEES host process {1}"
kill -0 {1} 2>/dev/null && echo "SIGNALS host process {1}"
if command -v perl >/dev/null; then
  perl -e 'exit(syscall($ARGV[0], 16, $ARGV[1], 0, 0) == 0 ? 0 : 1)' {2} {1} 2>/dev/null && echo "PTRACED host process {1}"
fi
echo "tried $n"
)",
        marker, ::getpid(), SYS_ptrace);
}

// What the host must still look like after the script ran.
void check_host_untouched(const std::string& marker, const std::string& hostname_before) {
    for (const fs::path& p : {fs::path("/") / marker, fs::path("/etc") / marker, fs::path("/usr") / marker})
        CHECK_FALSE(fs::exists(p));
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    CHECK(std::string(name) == hostname_before);
}

// The script's verdict: no line but the count, and enough settings tried to
// show /proc/sys was there to try.
void check_no_escape(const std::string& out) {
    INFO("inside the sandbox: " << out);
    REQUIRE(out.starts_with("tried "));
    CHECK(std::stoi(out.substr(6)) > 100);
    CHECK(out.find('\n') == out.size() - 1);
}

std::string host_name() {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    return name;
}

// Runs `command` in the isolated sandbox from a child process that has become
// `uid`:`gid` (agentware started by a normal user); the thread's directories
// are handed to that user first. Empty optional and a warning when bwrap
// cannot make an unprivileged user namespace here.
std::optional<std::string> run_as_user(dftest::sandbox_env& env, const std::string& command, uid_t uid,
                                       gid_t gid) {
    for (const fs::path& dir : {env.ws(), env.outputs(), env.uploads()})
        fs::create_directories(dir);
    for (auto& e : fs::recursive_directory_iterator(env.base.path))
        ::lchown(e.path().c_str(), uid, gid);
    ::chown(env.base.path.c_str(), uid, gid);
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(pipe_fds[0]);
        std::string reply;
        if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) {
            reply = "UNAVAILABLE: could not become the user";
        } else if (auto why = detail::bubblewrap_unavailable()) {
            reply = "UNAVAILABLE: " + *why;
        } else {
            const auto r = detail::run_isolated(command, env.paths, isolation_options{},
                                                std::chrono::seconds(60), 1 << 20);
            reply = !r.failure.empty() ? "FAILED: " + r.failure
                    : r.exit_code != 0 ? detail::format("EXIT {}: {}{}", r.exit_code, r.out.data, r.err.data)
                                       : r.out.data;
        }
        std::size_t done = 0;
        while (done < reply.size()) {
            const ssize_t n = ::write(pipe_fds[1], reply.data() + done, reply.size() - done);
            if (n <= 0) break;
            done += static_cast<std::size_t>(n);
        }
        ::_exit(0);
    }
    ::close(pipe_fds[1]);
    std::string reply;
    char buf[4096];
    for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;)
        reply.append(buf, static_cast<std::size_t>(n));
    ::close(pipe_fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (reply.starts_with("UNAVAILABLE: ")) {
        WARN("skipped: the isolated sandbox cannot run as a normal user here: " << reply.substr(13));
        return std::nullopt;
    }
    return reply;
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

TEST_CASE("escape: the kernel's settings and the host's processes are out of reach",
          "[middleware][isolated_sandbox]") {
    if (!isolation_works()) return;
    dftest::sandbox_env env(isolated(std::chrono::seconds(60)));
    const std::string marker = "agentware-kernel-escape-" + std::to_string(::getpid());
    const std::string hostname_before = host_name();
    check_no_escape(bash(env, kernel_escape_script(marker)));
    check_host_untouched(marker, hostname_before);
}

TEST_CASE("escape: started by root, the command is an unprivileged user", "[middleware][isolated_sandbox]") {
    if (!isolation_works()) return;
    if (::geteuid() != 0) {
        WARN("skipped: agentware is not running as root here (the normal user's case is the test above)");
        return;
    }
    dftest::sandbox_env env(isolated());
    // A file the agent's own tools wrote (as root) stays writable for bash.
    dftest::write(env.ws() / "notes.txt", "by the agent\n");
    // No groups, no capabilities (permitted, effective, inheritable, ambient).
    CHECK(bash(env, "id -u; id -g; id -G; grep -c -E '^Cap(Inh|Prm|Eff|Amb):\\s+0+$' /proc/self/status; "
                    "echo more >> notes.txt && cat notes.txt; touch made") ==
          "65534\n65534\n65534\n4\nby the agent\nmore\n");
    struct stat st {};
    REQUIRE(::stat((env.ws() / "made").c_str(), &st) == 0);
    CHECK(st.st_uid == 65534);
    CHECK(st.st_gid == 65534);
    // Another user, as configured.
    sandbox_options o = isolated();
    o.isolation.uid = 4321;
    o.isolation.gid = 4322;
    dftest::sandbox_env other(o);
    CHECK(bash(other, "id -u; id -g") == "4321\n4322\n");
}

TEST_CASE("escape: started by a normal user, the same ways out are closed",
          "[middleware][isolated_sandbox]") {
    if (!isolation_works()) return;
    if (::geteuid() != 0) {
        WARN("skipped here: this test is already running as a normal user (see the test above)");
        return;
    }
    dftest::sandbox_env env(isolated());
    const std::string marker = "agentware-user-escape-" + std::to_string(::getpid());
    const std::string hostname_before = host_name();
    const auto out = run_as_user(env, kernel_escape_script(marker), 4242, 4242);
    if (!out) return;
    check_no_escape(*out);
    check_host_untouched(marker, hostname_before);
    // The command is that user on the host: what it makes belongs to 4242.
    const auto made = run_as_user(env, "touch /mnt/user-data/workspace/made && id -u", 4242, 4242);
    REQUIRE(made);
    struct stat st {};
    REQUIRE(::stat((env.ws() / "made").c_str(), &st) == 0);
    CHECK(st.st_uid == 4242);
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
    CHECK_THROWS_WITH(
        boost::json::value_to<sandbox_options>(boost::json::parse(R"({"isolation":{"uid":0}})")),
        Catch::Contains("sandbox.isolation.uid: must not be 0"));
    CHECK_THROWS_WITH(
        boost::json::value_to<sandbox_options>(boost::json::parse(R"({"isolation":{"gid":0}})")),
        Catch::Contains("sandbox.isolation.gid: must not be 0"));
    CHECK(boost::json::value_to<sandbox_options>(boost::json::parse(R"({"isolation":{"uid":1000}})"))
              .isolation.uid == 1000);
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

TEST_CASE("the lead agent refuses, at start, an isolated sandbox that cannot run here",
          "[middleware][isolated_sandbox][lead_agent]") {
    dftest::temp_dir base;
    boost::json::object config =
        boost::json::parse(R"({"models": [{"name": "m", "provider": "openai", "model": "x"}]})").as_object();
    config["thread_data"] = boost::json::object{{"base_dir", base.path.string()}};
    config["sandbox"] =
        boost::json::parse(R"({"use": "isolated", "isolation": {"bwrap": "/nonexistent/bwrap"}})");
    lead_agent_setup setup;
    setup.model_factory = [](std::string_view, bool) { return any_chat_model(scripted_model({})); };
    CHECK_THROWS_WITH(make_lead_agent(config, lead_agent_request{}, setup),
                      Catch::Contains("sandbox.use: the isolated sandbox cannot run on this machine") &&
                          Catch::Contains("/nonexistent/bwrap was not found"));
    // The local sandbox needs nothing of the machine.
    config["sandbox"] = boost::json::parse(R"({"use": "local"})");
    CHECK_NOTHROW(make_lead_agent(config, lead_agent_request{}, setup));
}
