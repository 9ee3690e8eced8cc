// A Redis server of the tests' own: redis-server listening on a Unix socket
// in a temporary folder only (no TCP port), nothing saved to disk, stopped
// and removed at the end.
#ifndef AGENTWARE_TESTS_SUPPORT_REDIS_SERVER_HPP
#define AGENTWARE_TESTS_SUPPORT_REDIS_SERVER_HPP

#include "cli_process.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

namespace agentware::test {

class redis_server {
public:
    redis_server() {
        program_ = find_program();
        char dir_template[] = "/tmp/agentware-redis-XXXXXX";
        if (!::mkdtemp(dir_template))
            throw std::runtime_error("redis_server: cannot make a temporary folder");
        dir_ = dir_template;
        start();
    }
    ~redis_server() {
        stop();
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }

    /// Starts the server (again, after stop(): empty, as a restarted Redis
    /// that saves nothing is).
    void start() {
        if (pid_ > 0) return;
        pid_ = start_cli(program_.c_str(), dir_, dir_ / "server.log",
                         {"--port", "0", "--unixsocket", socket().string(), "--unixsocketperm", "700",
                          "--save", "", "--appendonly", "no", "--daemonize", "no"});
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!answers()) {
            int status = 0;
            if (pid_ < 0 || ::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                throw std::runtime_error("redis_server: the server exited: " + log());
            }
            if (std::chrono::steady_clock::now() > deadline)
                throw std::runtime_error("redis_server: no answer within 30 s: " + log());
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    /// Stops the server; its clients' connections break.
    void stop() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGTERM);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
        std::error_code ec;
        std::filesystem::remove(socket(), ec);
    }
    redis_server(const redis_server&) = delete;
    redis_server& operator=(const redis_server&) = delete;

    std::filesystem::path socket() const { return dir_ / "redis.sock"; }
    /// The server's URL, as agentware::redis::address::parse reads it.
    std::string url() const { return "unix://" + socket().string(); }

    std::string log() const {
        std::ifstream in(dir_ / "server.log");
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }

    /// One server for the whole test program, started by the first test that asks.
    static redis_server& shared() {
        static redis_server server;
        return server;
    }

private:
    static std::string find_program() {
        if (const char* p = std::getenv("AGENTWARE_REDIS_SERVER"); p && *p) return p;
        for (const char* p : {"/usr/bin/redis-server", "/usr/local/bin/redis-server"})
            if (std::filesystem::exists(p)) return p;
        throw std::runtime_error("redis_server: no redis-server (install it: cmake/install-deps.sh) and no "
                                 "AGENTWARE_REDIS_SERVER");
    }

    bool answers() const {
        if (!std::filesystem::exists(socket())) return false;
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd < 0) return false;
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        const std::string path = socket().string();
        path.copy(addr.sun_path, sizeof addr.sun_path - 1);
        const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
        ::close(fd);
        return ok;
    }

    std::string program_;
    std::filesystem::path dir_;
    pid_t pid_ = -1;
};

} // namespace agentware::test

#endif
