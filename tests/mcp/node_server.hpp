#ifndef AGENTWARE_TESTS_MCP_NODE_SERVER_HPP
#define AGENTWARE_TESTS_MCP_NODE_SERVER_HPP

// A node server on 127.0.0.1 for the MCP tests and benchmarks: started on a
// free loopback port, stopped (SIGTERM, reaped) with the object.

#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <netinet/in.h>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace mcp_test {

using namespace std::chrono_literals;

inline int free_port() {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(s);
    return ntohs(a.sin_port);
}

/// The local addresses listening on `port` (from /proc/net/tcp and tcp6), in hex.
inline std::vector<std::string> listeners(int port) {
    std::vector<std::string> out;
    char hex[8];
    std::snprintf(hex, sizeof hex, ":%04X", port);
    for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
        std::ifstream in(file);
        std::string line;
        std::getline(in, line);
        while (std::getline(in, line)) {
            std::istringstream fields(line);
            std::string sl, local, remote, state;
            fields >> sl >> local >> remote >> state;
            if (state == "0A" && local.ends_with(hex)) out.push_back(local);
        }
    }
    return out;
}

/// A node server listening on 127.0.0.1:port(), started with `args` (the
/// port appended when `port_last`, else in $PORT); `quiet`: its output goes
/// to /dev/null.
class http_server {
public:
    http_server(std::vector<std::string> args, bool port_last, bool quiet = false) : port_(free_port()) {
        const std::string port = std::to_string(port_);
        if (port_last) args.push_back(port);
        std::vector<char*> argv;
        argv.push_back(const_cast<char*>("node"));
        for (auto& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        pid_ = ::fork();
        if (pid_ == 0) {
            ::setenv("PORT", port.c_str(), 1);
            if (quiet) {
                const int null = ::open("/dev/null", O_WRONLY);
                ::dup2(null, 1);
                ::dup2(null, 2);
            }
            ::execvp("node", argv.data());
            ::_exit(127);
        }
        for (int i = 0; i < 200 && listeners(port_).empty(); ++i)
            std::this_thread::sleep_for(50ms);
    }
    ~http_server() {
        ::kill(pid_, SIGTERM);
        int st;
        ::waitpid(pid_, &st, 0);
    }
    int port() const { return port_; }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/mcp"; }

private:
    int port_;
    pid_t pid_;
};

} // namespace mcp_test

#endif
