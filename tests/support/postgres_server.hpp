// A PostgreSQL cluster of the tests' own: initdb in a temporary folder, the
// server listening on a Unix socket in that folder only (no TCP port), fsync
// off, stopped and removed at the end. Run as root (CI), the server runs as
// the `postgres` user that Debian's package creates, since PostgreSQL refuses
// to run as root.
#ifndef AGENTWARE_TESTS_SUPPORT_POSTGRES_SERVER_HPP
#define AGENTWARE_TESTS_SUPPORT_POSTGRES_SERVER_HPP

#include "cli_process.hpp"

#include <libpq-fe.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace agentware::test {

class postgres_server {
public:
    postgres_server() {
        bindir_ = find_bindir();
        char dir_template[] = "/tmp/agentware-pg-XXXXXX";
        if (!::mkdtemp(dir_template))
            throw std::runtime_error("postgres_server: cannot make a temporary folder");
        dir_ = dir_template;
        if (::geteuid() == 0) {
            const passwd* pw = ::getpwnam("postgres");
            if (!pw)
                throw std::runtime_error(
                    "postgres_server: running as root, and PostgreSQL refuses root; there is no "
                    "`postgres` user to run it as (Debian's postgresql-15 package makes one)");
            uid_ = pw->pw_uid;
            gid_ = pw->pw_gid;
            if (::chown(dir_.c_str(), uid_, gid_) != 0)
                throw std::runtime_error("postgres_server: cannot give " + dir_.string() +
                                         " to the postgres user");
        }
        const int rc =
            wait_for(spawn({(bindir_ / "initdb").string(), "-D", (dir_ / "data").string(), "-A", "trust",
                            "-U", "agentware", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"},
                           dir_ / "initdb.log"));
        if (rc != 0)
            throw std::runtime_error("postgres_server: initdb failed (" + std::to_string(rc) +
                                     "): " + log("initdb.log"));
        start();
    }
    ~postgres_server() {
        stop();
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    postgres_server(const postgres_server&) = delete;
    postgres_server& operator=(const postgres_server&) = delete;

    /// The libpq connection string of database `db` (user agentware, no password).
    std::string conninfo(const std::string& db = "postgres") const {
        return "host=" + dir_.string() + " user=agentware dbname=" + db;
    }
    const std::filesystem::path& socket_dir() const noexcept { return dir_; }

    void start() {
        if (pid_ > 0) return;
        pid_ = spawn({(bindir_ / "postgres").string(), "-D", (dir_ / "data").string(), "-k", dir_.string(),
                      "-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c",
                      "full_page_writes=off", "-c", "max_connections=200"},
                     dir_ / "server.log");
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (PQping(conninfo().c_str()) != PQPING_OK) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                throw std::runtime_error("postgres_server: the server exited: " + log("server.log"));
            }
            if (std::chrono::steady_clock::now() > deadline)
                throw std::runtime_error("postgres_server: no answer within 30 s: " + log("server.log"));
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }

    /// Stops the server the way an operator's restart does (fast shutdown:
    /// sessions are closed); start() brings it back on the same data.
    void stop() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGINT);
        wait_for(pid_);
        pid_ = -1;
    }

    /// The server's log, for a failing test's message.
    std::string log(const std::string& name = "server.log") const {
        std::ifstream in(dir_ / name);
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }

    /// One server for the whole test program, started by the first test that asks.
    static postgres_server& shared() {
        static postgres_server server;
        return server;
    }

private:
    static std::filesystem::path find_bindir() {
        if (const char* d = std::getenv("AGENTWARE_PG_BINDIR"); d && *d) return d;
        for (const char* v : {"15", "16", "17", "14"}) {
            std::filesystem::path p = std::string("/usr/lib/postgresql/") + v + "/bin";
            if (std::filesystem::exists(p / "postgres")) return p;
        }
        throw std::runtime_error("postgres_server: no PostgreSQL server under /usr/lib/postgresql (install "
                                 "postgresql-15: cmake/install-deps.sh) and no AGENTWARE_PG_BINDIR");
    }

    pid_t spawn(std::vector<std::string> args, const std::filesystem::path& out) const {
        std::fflush(nullptr);
        const pid_t pid = ::fork();
        if (pid != 0) return pid;
        const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || ::dup2(fd, 1) < 0 || ::dup2(fd, 2) < 0) ::_exit(126);
        const int null = ::open("/dev/null", O_RDONLY);
        if (null < 0 || ::dup2(null, 0) < 0) ::_exit(126);
        if (uid_ != 0 && (::setgid(gid_) != 0 || ::setuid(uid_) != 0)) ::_exit(126);
        // If the test program dies, the server shuts down instead of lingering
        // (set after setuid, which clears it).
        ::prctl(PR_SET_PDEATHSIG, SIGINT);
        if (::chdir(dir_.c_str()) != 0) ::_exit(126);
        exec_or_exit(args);
    }

    static int wait_for(pid_t pid) {
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0)
            if (errno != EINTR) return -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    std::filesystem::path bindir_;
    std::filesystem::path dir_;
    uid_t uid_ = 0;
    gid_t gid_ = 0;
    pid_t pid_ = -1;
};

} // namespace agentware::test

#endif
