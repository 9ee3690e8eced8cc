#ifndef AGENTWARE_DETAIL_PROCESS_HPP
#define AGENTWARE_DETAIL_PROCESS_HPP

// Runs a shell command on the host for the local sandbox's bash tool: fork and
// exec with pipes, a new session (so the command and everything it starts
// share one process group), poll with a deadline, and on timeout SIGKILL to
// the whole group. Output is captured up to a cap per stream; the rest is read
// and counted but dropped, so a chatty command cannot exhaust memory.

#include <agentware/detail/format.hpp>

#include <fmt/core.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ; // NOLINT: POSIX

namespace agentware::detail {

struct captured_stream {
    std::string data;        ///< at most the cap
    std::uint64_t total = 0; ///< bytes the command wrote
};

struct command_outcome {
    captured_stream out, err;
    int exit_code = 0; ///< the exit status, or minus the signal that ended it
    bool timed_out = false;
    std::string failure; ///< why the command could not be started; empty when it ran
};

/// The first of /bin/zsh, /bin/bash, /bin/sh that exists.
inline std::string find_shell() {
    for (const char* s : {"/bin/zsh", "/bin/bash", "/bin/sh"})
        if (::access(s, X_OK) == 0) return s;
    return "sh";
}

namespace process_detail {

struct fd_guard {
    int fd = -1;
    ~fd_guard() { reset(); }
    void reset() {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
};

inline void kill_group(pid_t pid) {
    ::kill(-pid, SIGKILL); // the session the child made is its process group
    ::kill(pid, SIGKILL);  // in case it was killed before setsid ran
}

} // namespace process_detail

/// What the child sets up for itself between fork and exec: resource limits
/// (0 = leave as is) and a cgroup it joins (`cgroup_procs_fd`, an open
/// `cgroup.procs` file; -1 = none). Used by the isolated sandbox.
struct process_limits {
    std::uint64_t address_space_bytes = 0; ///< RLIMIT_AS
    std::uint64_t file_size_bytes = 0;     ///< RLIMIT_FSIZE
    std::uint64_t processes = 0;           ///< RLIMIT_NPROC (not enforced for root: use the cgroup)
    int cgroup_procs_fd = -1;
    /// An open descriptor the program receives as descriptor 3 (-1 = none):
    /// how bwrap is handed its seccomp filter.
    int passed_fd = -1;
};

namespace process_detail {

// Async-signal-safe: only setrlimit, getpid, write, fcntl and dup2.
inline void apply_limits_in_child(const process_limits& l) {
    auto set = [](int resource, std::uint64_t value) {
        if (value == 0) return;
        rlimit r{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
        ::setrlimit(resource, &r);
    };
    set(RLIMIT_AS, l.address_space_bytes);
    set(RLIMIT_FSIZE, l.file_size_bytes);
    set(RLIMIT_NPROC, l.processes);
    rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    if (l.cgroup_procs_fd >= 0) {
        char digits[24];
        int n = 0;
        for (long pid = ::getpid(); pid > 0 && n < 23; pid /= 10)
            digits[n++] = static_cast<char>('0' + pid % 10);
        char text[24];
        for (int k = 0; k < n; ++k)
            text[k] = digits[n - 1 - k];
        if (::write(l.cgroup_procs_fd, text, static_cast<std::size_t>(n)) < 0) ::_exit(126);
    }
    if (l.passed_fd >= 0) {
        // dup2 onto itself would keep close-on-exec set.
        const int moved = l.passed_fd == 3 ? ::fcntl(3, F_SETFD, 0) : ::dup2(l.passed_fd, 3);
        if (moved < 0) ::_exit(126);
    }
}

} // namespace process_detail

/// Runs `argv` (argv[0] a path) and waits at most `timeout`.
inline command_outcome run_process(std::vector<std::string> args, std::chrono::milliseconds timeout,
                                   std::size_t capture_cap, const process_limits* limits = nullptr) {
    using process_detail::fd_guard;
    command_outcome result;
    int out_pipe[2], err_pipe[2];
    if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
        result.failure = detail::format("pipe: {}", std::strerror(errno));
        return result;
    }
    fd_guard out_r{out_pipe[0]}, out_w{out_pipe[1]};
    if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
        result.failure = detail::format("pipe: {}", std::strerror(errno));
        return result;
    }
    fd_guard err_r{err_pipe[0]}, err_w{err_pipe[1]};

    // Everything the child needs is prepared before fork: after it, only
    // async-signal-safe calls (the parent may have other threads).
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    const process_limits no_limits;
    const process_limits& lim = limits ? *limits : no_limits;

    const pid_t pid = ::fork();
    if (pid < 0) {
        result.failure = detail::format("fork: {}", std::strerror(errno));
        return result;
    }
    if (pid == 0) {
        ::setsid();
        const int devnull = ::open("/dev/null", O_RDONLY);
        if (devnull >= 0) ::dup2(devnull, 0);
        ::dup2(out_pipe[1], 1);
        ::dup2(err_pipe[1], 2);
        if (limits) process_detail::apply_limits_in_child(lim);
        ::execve(argv[0], argv.data(), environ);
        ::_exit(127);
    }
    out_w.reset();
    err_w.reset();

    const auto deadline = std::chrono::steady_clock::now() + timeout;
    char buf[65536];
    auto drain = [&](fd_guard& fd, captured_stream& s) {
        const ssize_t n = ::read(fd.fd, buf, sizeof buf);
        if (n > 0) {
            s.total += static_cast<std::uint64_t>(n);
            if (s.data.size() < capture_cap)
                s.data.append(buf, std::min(static_cast<std::size_t>(n), capture_cap - s.data.size()));
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
            fd.reset();
        }
    };
    auto poll_once = [&](int wait_ms) {
        pollfd fds[2];
        nfds_t count = 0;
        fd_guard* owners[2];
        captured_stream* streams[2];
        if (out_r.fd >= 0) {
            fds[count] = {out_r.fd, POLLIN, 0};
            owners[count] = &out_r;
            streams[count++] = &result.out;
        }
        if (err_r.fd >= 0) {
            fds[count] = {err_r.fd, POLLIN, 0};
            owners[count] = &err_r;
            streams[count++] = &result.err;
        }
        const int ready = ::poll(fds, count, wait_ms);
        if (ready <= 0) return;
        for (nfds_t i = 0; i < count; ++i)
            if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) drain(*owners[i], *streams[i]);
    };

    while (out_r.fd >= 0 || err_r.fd >= 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            result.timed_out = true;
            break;
        }
        poll_once(static_cast<int>(std::min<std::int64_t>(left.count(), 1000)));
    }
    if (result.timed_out) {
        process_detail::kill_group(pid);
        // The group is dead, so the pipes close; a process that left the group
        // may still hold them, so drain only briefly.
        const auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while ((out_r.fd >= 0 || err_r.fd >= 0) && std::chrono::steady_clock::now() < grace)
            poll_once(100);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status))
        result.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        result.exit_code = -WTERMSIG(status);
    return result;
}

/// Runs `shell -c command` and waits at most `timeout`.
inline command_outcome run_command(const std::string& shell, const std::string& command,
                                   std::chrono::milliseconds timeout, std::size_t capture_cap) {
    return run_process({shell, "-c", command}, timeout, capture_cap);
}

} // namespace agentware::detail

#endif
