#ifndef AGENTWARE_MCP_IMPL_STDIO_CHANNEL_IPP
#define AGENTWARE_MCP_IMPL_STDIO_CHANNEL_IPP

// The MCP client's stdio channel: the server as a child process with three
// pipes, a reader thread for its stdout (one JSON-RPC message per line) and
// one for its stderr.

#include <agentware/mcp/client.hpp>
#include <agentware/mcp/detail/line_reader.hpp>
#include <agentware/mcp/impl/channel.ipp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <optional>
#include <poll.h>
#include <stop_token>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

extern char** environ; // NOLINT

namespace agentware::mcp::detail {

class stdio_channel final : public channel {
public:
    stdio_channel(const server_config& cfg, const client_options& opts, channel_events ev)
        : cfg_(cfg), opts_(opts), ev_(std::move(ev)) {}
    ~stdio_channel() override { shutdown(); }

    bool multiplexed() const noexcept override { return true; }
    bool alive() const noexcept override { return pid_ > 0 && !dead_; }

    void start() override {
        ignore_sigpipe();
        int in[2], out[2], err[2], status[2];
        if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 ||
            ::pipe2(status, O_CLOEXEC) != 0)
            throw mcp_error(mcp_error_kind::configuration,
                            "cannot create pipes: " + std::string(std::strerror(errno)));
        // Everything exec needs is built before fork (the child may only call
        // async-signal-safe functions).
        std::vector<std::string> arg_strings{cfg_.command};
        arg_strings.insert(arg_strings.end(), cfg_.args.begin(), cfg_.args.end());
        std::vector<char*> argv;
        for (auto& a : arg_strings)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        std::vector<std::string> env_strings;
        for (char** e = environ; *e != nullptr; ++e) {
            std::string_view kv(*e);
            const auto eq = kv.find('=');
            if (eq != std::string_view::npos && cfg_.env.contains(std::string(kv.substr(0, eq)))) continue;
            env_strings.emplace_back(kv);
        }
        for (const auto& [k, v] : cfg_.env)
            env_strings.push_back(k + "=" + v);
        std::vector<char*> envp;
        for (auto& e : env_strings)
            envp.push_back(e.data());
        envp.push_back(nullptr);
        const char* cwd = cfg_.cwd.empty() ? nullptr : cfg_.cwd.c_str();

        const pid_t pid = ::fork();
        if (pid < 0)
            throw mcp_error(mcp_error_kind::configuration,
                            "cannot fork: " + std::string(std::strerror(errno)));
        if (pid == 0) {
            ::setpgid(0, 0); // its own group: shutdown reaches what it starts (npx -> node)
            ::dup2(in[0], 0);
            ::dup2(out[1], 1);
            ::dup2(err[1], 2);
            int e = 0;
            if (cwd != nullptr && ::chdir(cwd) != 0) e = errno;
            if (e == 0) {
                ::execvpe(argv[0], argv.data(), envp.data());
                e = errno;
            }
            [[maybe_unused]] auto w = ::write(status[1], &e, sizeof e);
            ::_exit(127);
        }
        ::close(in[0]);
        ::close(out[1]);
        ::close(err[1]);
        ::close(status[1]);
        int child_errno = 0;
        ssize_t got;
        do
            got = ::read(status[0], &child_errno, sizeof child_errno);
        while (got < 0 && errno == EINTR);
        ::close(status[0]);
        if (got == sizeof child_errno) {
            ::close(in[1]);
            ::close(out[0]);
            ::close(err[0]);
            int st;
            ::waitpid(pid, &st, 0);
            throw mcp_error(mcp_error_kind::configuration, "MCP server \"" + cfg_.name +
                                                               "\": cannot start `" + cfg_.command +
                                                               "`: " + std::strerror(child_errno));
        }
        pid_ = pid;
        in_fd_ = in[1];
        out_fd_ = out[0];
        err_fd_ = err[0];
        dead_ = false;
        stop_ = false;
        reader_ = std::thread([this] { read_stdout(); });
        err_reader_ = std::thread([this] { read_stderr(); });
    }

    std::optional<resume_point> send(const boost::json::object& msg, std::string_view, std::string_view,
                                     const std::stop_token&,
                                     std::chrono::milliseconds) override { // the caller waits and cancels
        std::string line = boost::json::serialize(msg);                    // never contains a raw newline
        line += '\n';
        std::lock_guard lock(write_mutex_);
        if (in_fd_ < 0 || dead_) throw closed_error();
        std::size_t off = 0;
        while (off < line.size()) {
            const ssize_t n = ::write(in_fd_, line.data() + off, line.size() - off);
            if (n < 0) {
                if (errno == EINTR) continue;
                throw closed_error();
            }
            off += static_cast<std::size_t>(n);
        }
        return std::nullopt;
    }

    void shutdown() override {
        if (pid_ <= 0) return;
        {
            std::lock_guard lock(write_mutex_);
            if (in_fd_ >= 0) ::close(in_fd_);
            in_fd_ = -1;
        }
        if (!wait_exit(opts_.shutdown_grace)) {
            ::kill(-pid_, SIGTERM);
            if (!wait_exit(opts_.shutdown_grace)) {
                ::kill(-pid_, SIGKILL);
                wait_exit(std::chrono::milliseconds(-1));
            }
        }
        ::kill(-pid_, SIGKILL); // whatever of its group is left
        stop_ = true;
        if (reader_.joinable()) reader_.join();
        if (err_reader_.joinable()) err_reader_.join();
        ::close(out_fd_);
        ::close(err_fd_);
        out_fd_ = err_fd_ = -1;
        pid_ = -1;
        dead_ = true;
    }

    std::string stderr_tail() const override {
        std::lock_guard lock(err_mutex_);
        return stderr_;
    }

    /// Kills the process now (limits exceeded).
    void kill_now() {
        if (pid_ > 0) ::kill(-pid_, SIGKILL);
    }

private:
    static void ignore_sigpipe() {
        // A server that exits makes writes to its stdin raise SIGPIPE, which
        // would end the whole program; the write's EPIPE is handled instead.
        struct sigaction current {};
        if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
            struct sigaction ignore {};
            ignore.sa_handler = SIG_IGN;
            ::sigaction(SIGPIPE, &ignore, nullptr);
        }
    }

    mcp_error closed_error() const {
        std::string text = "MCP server \"" + cfg_.name + "\" is not running";
        const std::string how = exit_description();
        if (how.empty()) return mcp_error(mcp_error_kind::closed, text);
        return mcp_error(mcp_error_kind::closed, text + " (" + how + ")");
    }

    /// Reaps the process when it has exited within `limit` (negative: wait for it).
    /// The reader thread and shutdown may both call it: each try is under reap_mutex_.
    bool wait_exit(std::chrono::milliseconds limit) {
        const auto until = std::chrono::steady_clock::now() + limit;
        for (;;) {
            {
                std::lock_guard lock(reap_mutex_);
                if (reaped_) return true;
                int st = 0;
                const pid_t r = ::waitpid(pid_, &st, limit.count() < 0 ? 0 : WNOHANG);
                if (r == pid_ || (r < 0 && errno == ECHILD)) {
                    reaped_ = true;
                    if (r == pid_) {
                        if (WIFEXITED(st))
                            exit_description_ = "exited with status " + std::to_string(WEXITSTATUS(st));
                        else if (WIFSIGNALED(st))
                            exit_description_ = "killed by signal " + std::to_string(WTERMSIG(st));
                    }
                    return true;
                }
                if (r < 0 && errno != EINTR) return false;
            }
            if (limit.count() >= 0 && std::chrono::steady_clock::now() >= until) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }

    /// How the process ended ("" while it runs or when another reaped it).
    std::string exit_description() const {
        std::lock_guard lock(reap_mutex_);
        return exit_description_;
    }

    /// Reads until EOF or stop; false when stopped.
    template <class OnBytes>
    bool pump(int fd, OnBytes&& on_bytes) {
        std::array<char, 65536> buf{};
        for (;;) {
            pollfd p{fd, POLLIN, 0};
            const int r = ::poll(&p, 1, 100);
            if (stop_) return false;
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) continue;
            const ssize_t n = ::read(fd, buf.data(), buf.size());
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return true;
            if (!on_bytes(std::string_view(buf.data(), static_cast<std::size_t>(n)))) return true;
        }
    }

    void read_stdout() {
        line_reader lines(opts_.max_message_bytes);
        std::optional<mcp_error> failure;
        const bool eof = pump(out_fd_, [&](std::string_view bytes) {
            if (lines.feed(bytes, [&](std::string_view text) { line(text); })) return true;
            failure = mcp_error(mcp_error_kind::limit,
                                "MCP server \"" + cfg_.name + "\" sent a line longer than " +
                                    std::to_string(opts_.max_message_bytes) + " bytes; it was stopped");
            kill_now();
            return false;
        });
        if (!eof) return; // shut down by us
        dead_ = true;
        if (!failure) {
            wait_exit(std::chrono::milliseconds(500));
            std::string text = "MCP server \"" + cfg_.name + "\" closed its output";
            if (const std::string how = exit_description(); !how.empty()) text += " (" + how + ")";
            const std::string tail = stderr_tail();
            if (!tail.empty()) text += "; its last stderr: " + excerpt(tail, 500);
            failure = mcp_error(mcp_error_kind::closed, text);
        }
        ev_.fail(*failure);
    }

    void line(std::string_view text) {
        boost::system::error_code ec;
        boost::json::value v = boost::json::parse(text, ec);
        if (ec) {
            ev_.fail(mcp_error(mcp_error_kind::protocol,
                               "MCP server \"" + cfg_.name +
                                   "\" wrote a line that is not JSON: " + excerpt(text)));
            return;
        }
        ev_.deliver(std::move(v));
    }

    void read_stderr() {
        pump(err_fd_, [&](std::string_view bytes) {
            std::lock_guard lock(err_mutex_);
            stderr_.append(bytes);
            if (stderr_.size() > opts_.max_stderr_bytes)
                stderr_.erase(0, stderr_.size() - opts_.max_stderr_bytes);
            return true;
        });
    }

    const server_config& cfg_;
    const client_options& opts_;
    channel_events ev_;
    pid_t pid_ = -1;
    int in_fd_ = -1, out_fd_ = -1, err_fd_ = -1;
    std::atomic<bool> dead_{true}, stop_{false};
    mutable std::mutex reap_mutex_;
    bool reaped_ = false;          // under reap_mutex_
    std::string exit_description_; // under reap_mutex_
    std::mutex write_mutex_;
    mutable std::mutex err_mutex_;
    std::string stderr_;
    std::thread reader_, err_reader_;
};

} // namespace agentware::mcp::detail

#endif
