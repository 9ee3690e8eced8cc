#ifndef AGENTWARE_MIDDLEWARE_DETAIL_BUBBLEWRAP_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_BUBBLEWRAP_HPP

// The isolated sandbox's bash: the command runs under bubblewrap (Debian's
// `bubblewrap`) in new user, mount, PID, IPC, UTS, cgroup and (unless
// allowed) network namespaces, all capabilities dropped. Its file system is
// the host's system directories read-only, a handful of /etc files
// read-only, fresh /proc, /dev and /tmp, and the thread's directories at
// their virtual paths: /mnt/user-data/workspace and /outputs writable,
// /uploads read-only. Nothing else of the host is visible or writable (not
// the home directories, not /etc/shadow, not /root).
//
// Limits: the bash timeout (the whole namespace dies with bwrap), RLIMIT_AS
// and RLIMIT_FSIZE, and the number of processes, by a pids cgroup when the
// host lets us make one (cgroup v1 `pids` or v2), else RLIMIT_NPROC (which
// the kernel does not apply to root). When bash exits, bwrap's init exits
// and the kernel kills whatever the command left running in its PID namespace.

#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/middleware/detail/process.hpp>
#include <agentware/middleware/fields.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

namespace agentware {

/// The isolated sandbox's limits (`sandbox.isolation` in configuration).
struct isolation_options {
    bool network = false;             ///< share the host's network (false: loopback only, its own)
    std::size_t max_processes = 256;  ///< processes the command may have at once
    std::size_t max_memory_mb = 2048; ///< address space of each process
    std::size_t max_file_size_mb = 1024;
    std::string bwrap = "bwrap"; ///< the bubblewrap program (a name looked up in PATH, or a path)

    friend bool operator==(const isolation_options&, const isolation_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const isolation_options& o) {
    jv = boost::json::object{{"network", o.network},
                             {"max_processes", o.max_processes},
                             {"max_memory_mb", o.max_memory_mb},
                             {"max_file_size_mb", o.max_file_size_mb},
                             {"bwrap", o.bwrap}};
}
inline isolation_options tag_invoke(boost::json::value_to_tag<isolation_options>,
                                    const boost::json::value& jv) {
    json_reader r(jv);
    isolation_options o;
    r.read("network", o.network)
        .read("max_processes", o.max_processes)
        .read("max_memory_mb", o.max_memory_mb)
        .read("max_file_size_mb", o.max_file_size_mb)
        .read("bwrap", o.bwrap)
        .reject_unknown_keys();
    return o;
}

namespace detail {

/// The bwrap program's path, or empty when it cannot be found.
inline std::string find_bwrap(const std::string& name) {
    if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : std::string();
    const char* path = std::getenv("PATH");
    std::string_view dirs = path ? path : "/usr/bin:/bin";
    while (!dirs.empty()) {
        const auto colon = dirs.find(':');
        const std::string candidate = std::string(dirs.substr(0, colon)) + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        if (colon == std::string_view::npos) break;
        dirs.remove_prefix(colon + 1);
    }
    for (const char* fallback : {"/usr/bin/bwrap", "/bin/bwrap"})
        if (::access(fallback, X_OK) == 0) return fallback;
    return {};
}

/// bwrap's arguments for running `command` with bash in the thread's directories.
inline std::vector<std::string> bwrap_arguments(const std::string& bwrap, const thread_paths& td,
                                                const isolation_options& o, const std::string& command) {
    namespace fs = std::filesystem;
    std::vector<std::string> a{bwrap, "--die-with-parent", "--new-session", "--unshare-all"};
    if (o.network) a.push_back("--share-net");
    a.insert(a.end(), {"--cap-drop", "ALL", "--hostname", "sandbox", "--clearenv"});
    // System directories, read-only; merged-/usr symlinks stay symlinks.
    a.insert(a.end(), {"--ro-bind", "/usr", "/usr"});
    for (const char* dir : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
        std::error_code ec;
        const auto st = fs::symlink_status(dir, ec);
        if (ec || !fs::exists(st)) continue;
        if (fs::is_symlink(st)) {
            a.insert(a.end(), {"--symlink", fs::read_symlink(dir, ec).string(), dir});
        } else {
            a.insert(a.end(), {"--ro-bind", dir, dir});
        }
    }
    // The few /etc files programs expect, read-only (no shadow, no gshadow, no sudoers).
    a.insert(a.end(), {"--dir", "/etc"});
    for (const char* f :
         {"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/ld.so.cache", "/etc/ld.so.conf",
          "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime", "/etc/bash.bashrc", "/etc/profile",
          "/etc/inputrc", "/etc/mime.types", "/etc/ssl", "/etc/ca-certificates", "/etc/hosts"})
        a.insert(a.end(), {"--ro-bind-try", f, f});
    if (o.network)
        for (const char* f : {"/etc/resolv.conf", "/etc/gai.conf", "/etc/host.conf"})
            a.insert(a.end(), {"--ro-bind-try", f, f});
    a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", "/var/tmp"});
    // The thread's directories at their virtual paths.
    a.insert(a.end(), {"--dir", "/mnt/user-data", "--bind", td.workspace_path, "/mnt/user-data/workspace",
                       "--bind", td.outputs_path, "/mnt/user-data/outputs", "--ro-bind", td.uploads_path,
                       "/mnt/user-data/uploads", "--chdir", "/mnt/user-data/workspace"});
    a.insert(a.end(), {"--remount-ro", "/"}); // the root the directories above hang from: read-only too
    a.insert(a.end(), {"--setenv", "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                       "--setenv", "HOME", "/mnt/user-data/workspace", "--setenv", "LANG", "C.UTF-8",
                       "--setenv", "TMPDIR", "/tmp", "--setenv", "TERM", "dumb"});
    a.insert(a.end(), {"--", "/bin/bash", "-c", command});
    return a;
}

/// A pids cgroup for one command; empty `dir` when the host offers none.
class pids_cgroup {
public:
    explicit pids_cgroup(std::size_t max_processes) {
        static std::atomic<std::uint64_t> counter{0};
        const std::string name = detail::format("agentware-sandbox-{}-{}", ::getpid(), counter.fetch_add(1));
        for (const char* root : {"/sys/fs/cgroup/pids", "/sys/fs/cgroup"}) {
            std::error_code ec;
            if (!std::filesystem::exists(std::string(root) + "/cgroup.procs", ec)) continue;
            const std::string dir = std::string(root) + "/" + name;
            if (!std::filesystem::create_directory(dir, ec) || ec) continue;
            std::ofstream limit(dir + "/pids.max");
            limit << max_processes;
            limit.close();
            if (!limit) {
                std::filesystem::remove(dir, ec);
                continue;
            }
            procs_fd_ = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
            if (procs_fd_ < 0) {
                std::filesystem::remove(dir, ec);
                continue;
            }
            dir_ = dir;
            break;
        }
    }
    pids_cgroup(const pids_cgroup&) = delete;
    pids_cgroup& operator=(const pids_cgroup&) = delete;
    ~pids_cgroup() {
        if (procs_fd_ >= 0) ::close(procs_fd_);
        if (dir_.empty()) return;
        // Whatever is still in it is killed, then the group is removed.
        for (int attempt = 0; attempt < 50; ++attempt) {
            std::ifstream procs(dir_ + "/cgroup.procs");
            bool any = false;
            for (long pid; procs >> pid;) {
                any = true;
                ::kill(static_cast<pid_t>(pid), SIGKILL);
            }
            if (!any) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        std::error_code ec;
        for (int attempt = 0; attempt < 50 && !std::filesystem::remove(dir_, ec); ++attempt)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    int procs_fd() const noexcept { return procs_fd_; }
    const std::string& dir() const noexcept { return dir_; }

private:
    std::string dir_;
    int procs_fd_ = -1;
};

/// Whether bwrap can make its namespaces here, and if not, why (cached).
inline std::optional<std::string> bubblewrap_unavailable(const std::string& bwrap_name = "bwrap") {
    const std::string bwrap = find_bwrap(bwrap_name);
    if (bwrap.empty())
        return detail::format("{} was not found (install Debian's bubblewrap package)", bwrap_name);
    const auto r = run_process({bwrap, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"},
                               std::chrono::seconds(20), 4096);
    if (!r.failure.empty()) return r.failure;
    if (r.exit_code != 0)
        return detail::format("bwrap cannot create namespaces on this machine (exit {}): {}", r.exit_code,
                              r.err.data);
    return std::nullopt;
}

/// Runs `command` with bash inside the isolated sandbox.
inline command_outcome run_isolated(const std::string& command, const thread_paths& td,
                                    const isolation_options& o, std::chrono::milliseconds timeout,
                                    std::size_t capture_cap) {
    const std::string bwrap = find_bwrap(o.bwrap);
    if (bwrap.empty()) {
        command_outcome r;
        r.failure =
            detail::format("{} was not found (the isolated sandbox needs Debian's bubblewrap)", o.bwrap);
        return r;
    }
    pids_cgroup group(o.max_processes);
    process_limits limits;
    limits.address_space_bytes = static_cast<std::uint64_t>(o.max_memory_mb) * 1024 * 1024;
    limits.file_size_bytes = static_cast<std::uint64_t>(o.max_file_size_mb) * 1024 * 1024;
    limits.processes = group.dir().empty() ? o.max_processes : 0;
    limits.cgroup_procs_fd = group.procs_fd();
    return run_process(bwrap_arguments(bwrap, td, o, command), timeout, capture_cap, &limits);
}

} // namespace detail
} // namespace agentware

#endif
