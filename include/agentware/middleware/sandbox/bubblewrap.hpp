#ifndef AGENTWARE_MIDDLEWARE_SANDBOX_BUBBLEWRAP_HPP
#define AGENTWARE_MIDDLEWARE_SANDBOX_BUBBLEWRAP_HPP

// The isolated sandbox's bash: the command runs under bubblewrap (Debian's
// `bubblewrap`) in new mount, PID, IPC, UTS, cgroup and (unless allowed)
// network namespaces, every capability dropped, as a user that is not root on
// the host. Its file system is the host's system directories read-only, a
// handful of /etc files read-only, fresh /proc (its kernel settings under
// /proc/sys read-only), /dev and /tmp, and the thread's directories at their
// virtual paths: /mnt/user-data/workspace and /outputs writable, /uploads
// read-only. Nothing else of the host is visible or writable (not the home
// directories, not /etc/shadow, not /root).
//
// Who the command runs as decides what the kernel lets it do, so the two ways
// agentware can be started are set up differently:
// - as a normal user, bwrap makes a user namespace of its own (the command is
//   that user on the host) and forbids nested ones (`--disable-userns`);
// - as root, a user namespace would map the command to host root, and host
//   root without capabilities still owns, and may write, the kernel's root-owned
//   settings (a `core_pattern` written there runs a program as root at the next
//   crash). So bwrap builds the namespaces with root's rights but no user
//   namespace, and the command starts only after `setpriv` has made it
//   `isolation.uid`:`isolation.gid` (nobody by default), with no groups and no
//   capabilities. The thread's directories are handed to that user first.
// In both, a seccomp filter refuses new user namespaces (unshare and clone with
// CLONE_NEWUSER; clone3 answers ENOSYS so the C library falls back to clone).
//
// Limits: the bash timeout (the whole namespace dies with bwrap), RLIMIT_AS
// and RLIMIT_FSIZE, and the number of processes, by a pids cgroup when the
// host lets us make one (cgroup v1 `pids` or v2), else RLIMIT_NPROC (which
// the kernel does not apply to root). When bash exits, bwrap's init exits
// and the kernel kills whatever the command left running in its PID namespace.

#include <agentware/detail/format.hpp>
#include <agentware/detail/process.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/thread/fields.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__linux__) && __has_include(<linux/seccomp.h>)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>

#include <cstddef>
#endif

namespace agentware {

/// The isolated sandbox's limits (`sandbox.isolation` in configuration).
struct isolation_options {
    bool network = false;             ///< share the host's network (false: loopback only, its own)
    std::size_t max_processes = 256;  ///< processes the command may have at once
    std::size_t max_memory_mb = 2048; ///< address space of each process
    std::size_t max_file_size_mb = 1024;
    std::string bwrap = "bwrap"; ///< the bubblewrap program (a name looked up in PATH, or a path)
    /// The host user and group the command runs as when agentware runs as
    /// root (nobody by default); never 0.
    std::uint32_t uid = 65534;
    std::uint32_t gid = 65534;

    /// Why these options cannot run a command (a root user or group), or empty.
    std::optional<std::string> problem() const {
        if (uid == 0) return std::string("uid: must not be 0 (the sandbox never runs as root)");
        if (gid == 0) return std::string("gid: must not be 0 (the sandbox never runs as root)");
        return std::nullopt;
    }

    friend bool operator==(const isolation_options&, const isolation_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const isolation_options& o) {
    jv = boost::json::object{{"network", o.network},
                             {"max_processes", o.max_processes},
                             {"max_memory_mb", o.max_memory_mb},
                             {"max_file_size_mb", o.max_file_size_mb},
                             {"bwrap", o.bwrap},
                             {"uid", o.uid},
                             {"gid", o.gid}};
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
        .read("uid", o.uid)
        .read("gid", o.gid)
        .reject_unknown_keys();
    if (o.uid == 0) throw json_error(r.path_of("uid"), "must not be 0 (the sandbox never runs as root)");
    if (o.gid == 0) throw json_error(r.path_of("gid"), "must not be 0 (the sandbox never runs as root)");
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

/// How the sandbox is set up: by root (the command then drops to
/// `isolation.uid`) or by a normal user (in a user namespace of its own).
enum class sandbox_setup { as_root, as_user };

inline sandbox_setup current_sandbox_setup() noexcept {
    return ::geteuid() == 0 ? sandbox_setup::as_root : sandbox_setup::as_user;
}

/// The setpriv program (util-linux) that drops root inside the sandbox, or
/// empty when the host has none (/usr is what the sandbox sees of the host).
inline std::string find_setpriv() {
    for (const char* p : {"/usr/bin/setpriv", "/bin/setpriv"})
        if (::access(p, X_OK) == 0) return p;
    return {};
}

/// bwrap's namespace and privilege arguments, shared by the real command and
/// the probe that checks bwrap can work here. With `seccomp_fd`, the filter
/// that refuses new user namespaces is read from that descriptor.
inline void append_isolation_arguments(std::vector<std::string>& a, const isolation_options& o,
                                       sandbox_setup setup, bool seccomp) {
    a.insert(a.end(), {"--die-with-parent", "--new-session"});
    if (setup == sandbox_setup::as_user) {
        a.insert(a.end(), {"--unshare-all", "--unshare-user", "--disable-userns"});
        if (o.network) a.push_back("--share-net");
        a.insert(a.end(), {"--cap-drop", "ALL"});
    } else {
        // No user namespace (it would map the command to host root): root's
        // rights build the namespaces, and setpriv needs these two to drop them.
        a.insert(a.end(), {"--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"});
        if (!o.network) a.push_back("--unshare-net");
        a.insert(a.end(), {"--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"});
    }
    if (seccomp) a.insert(a.end(), {"--seccomp", "3"});
}

/// The program bwrap starts: bash, behind setpriv when set up by root.
inline void append_sandboxed_program(std::vector<std::string>& a, const isolation_options& o,
                                     sandbox_setup setup, const std::string& setpriv,
                                     std::vector<std::string> program) {
    a.push_back("--");
    if (setup == sandbox_setup::as_root)
        a.insert(a.end(), {setpriv, "--reuid", std::to_string(o.uid), "--regid", std::to_string(o.gid),
                           "--clear-groups", "--inh-caps=-all"});
    a.insert(a.end(), std::make_move_iterator(program.begin()), std::make_move_iterator(program.end()));
}

/// bwrap's arguments for running `command` with bash in the thread's directories.
inline std::vector<std::string> bwrap_arguments(const std::string& bwrap, const thread_paths& td,
                                                const isolation_options& o, const std::string& command,
                                                sandbox_setup setup = current_sandbox_setup(),
                                                bool seccomp = false,
                                                const std::string& setpriv = "setpriv") {
    namespace fs = std::filesystem;
    std::vector<std::string> a{bwrap};
    append_isolation_arguments(a, o, setup, seccomp);
    a.insert(a.end(), {"--hostname", "sandbox", "--clearenv"});
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
    // A fresh /proc whose kernel settings stay read-only: a writable
    // /proc/sys is a host setting, whoever the command runs as.
    a.insert(a.end(), {"--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--ro-bind-try",
                       "/proc/sysrq-trigger", "/proc/sysrq-trigger"});
    // Temporary directories anyone may write, as on the host (the command's
    // user is not the one bwrap makes them as when set up by root).
    a.insert(a.end(),
             {"--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp", "--perms", "1777", "--dir", "/var/tmp"});
    // The thread's directories at their virtual paths.
    a.insert(a.end(), {"--dir", "/mnt/user-data", "--bind", td.workspace_path, "/mnt/user-data/workspace",
                       "--bind", td.outputs_path, "/mnt/user-data/outputs", "--ro-bind", td.uploads_path,
                       "/mnt/user-data/uploads", "--chdir", "/mnt/user-data/workspace"});
    a.insert(a.end(), {"--remount-ro", "/"}); // the root the directories above hang from: read-only too
    a.insert(a.end(), {"--setenv", "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                       "--setenv", "HOME", "/mnt/user-data/workspace", "--setenv", "LANG", "C.UTF-8",
                       "--setenv", "TMPDIR", "/tmp", "--setenv", "TERM", "dumb"});
    append_sandboxed_program(a, o, setup, setpriv, {"/bin/bash", "-c", command});
    return a;
}

/// An open descriptor holding the seccomp program that refuses new user
/// namespaces, in the form bwrap's `--seccomp` reads; -1 where this build
/// has none for the machine's architecture (the other defences still hold).
class user_namespace_filter {
public:
    user_namespace_filter() {
#if defined(__linux__) && __has_include(<linux/seccomp.h>) && defined(SYS_memfd_create) &&                \
    (defined(__x86_64__) || defined(__aarch64__)) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#if defined(__x86_64__)
        constexpr std::uint32_t arch = AUDIT_ARCH_X86_64;
        constexpr std::uint32_t foreign_numbers = 0x40000000; // x32's calls share the architecture
#else
        constexpr std::uint32_t arch = AUDIT_ARCH_AARCH64;
        constexpr std::uint32_t foreign_numbers = 0xffffffff;
#endif
        constexpr std::uint32_t deny_missing = SECCOMP_RET_ERRNO | ENOSYS;
        constexpr std::uint32_t deny = SECCOMP_RET_ERRNO | EPERM;
        const sock_filter program[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
            BPF_STMT(BPF_RET | BPF_K, deny_missing), // another ABI's calls: not ours to judge
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, foreign_numbers, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, deny_missing),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
            BPF_STMT(BPF_RET | BPF_K,
                     deny_missing), // its flags sit in memory: the C library falls back to clone
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 1, 0),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3),
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])), // the flags' low word
            BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, deny),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        fd_ = static_cast<int>(::syscall(SYS_memfd_create, "agentware-seccomp", 1U /* MFD_CLOEXEC */));
        if (fd_ < 0) return;
        if (::write(fd_, program, sizeof program) != static_cast<ssize_t>(sizeof program) ||
            ::lseek(fd_, 0, SEEK_SET) != 0) {
            ::close(fd_);
            fd_ = -1;
        }
#endif
    }
    user_namespace_filter(const user_namespace_filter&) = delete;
    user_namespace_filter& operator=(const user_namespace_filter&) = delete;
    ~user_namespace_filter() {
        if (fd_ >= 0) ::close(fd_);
    }
    int fd() const noexcept { return fd_; }

private:
    int fd_ = -1;
};

/// Makes `uid`:`gid` the owner of `dir` and everything under it (links
/// themselves, never what they point to; files with several hard links are
/// left alone, since another name may be outside the thread), so that a
/// sandbox set up by root can write what the agent's own file tools wrote.
inline void hand_over_tree(const std::string& dir, std::uint32_t uid, std::uint32_t gid) {
    namespace fs = std::filesystem;
    auto give = [&](const fs::path& p) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0) return;
        if (st.st_uid == uid && st.st_gid == gid) return;
        if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) return;
        (void)::lchown(p.c_str(), uid, gid);
    };
    std::error_code ec;
    if (!fs::is_directory(fs::symlink_status(dir, ec))) return;
    give(dir);
    for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec))
        give(it->path());
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

/// Whether the isolated sandbox can run here as `o` sets it up, and if not, why.
inline std::optional<std::string> bubblewrap_unavailable(const isolation_options& o,
                                                         sandbox_setup setup = current_sandbox_setup()) {
    if (auto problem = o.problem()) return detail::format("sandbox.isolation.{}", *problem);
    const std::string bwrap = find_bwrap(o.bwrap);
    if (bwrap.empty())
        return detail::format("{} was not found (install Debian's bubblewrap package)", o.bwrap);
    const std::string setpriv = find_setpriv();
    if (setup == sandbox_setup::as_root && setpriv.empty())
        return std::string(
            "setpriv was not found (util-linux): run as root, the isolated sandbox needs it to "
            "start the command as an unprivileged user");
    const user_namespace_filter filter;
    std::vector<std::string> a{bwrap, "--ro-bind", "/", "/"};
    append_isolation_arguments(a, o, setup, filter.fd() >= 0);
    append_sandboxed_program(a, o, setup, setpriv, {"/bin/true"});
    process_limits limits;
    limits.passed_fd = filter.fd();
    const auto r = run_process(std::move(a), std::chrono::seconds(20), 4096, &limits);
    if (!r.failure.empty()) return r.failure;
    if (r.exit_code != 0)
        return detail::format("bwrap cannot create namespaces on this machine (exit {}): {}", r.exit_code,
                              r.err.data);
    return std::nullopt;
}

/// The same for the default options, with `bwrap_name` as the program.
inline std::optional<std::string> bubblewrap_unavailable(const std::string& bwrap_name = "bwrap") {
    isolation_options o;
    o.bwrap = bwrap_name;
    return bubblewrap_unavailable(o);
}

/// bubblewrap_unavailable, asked once per set of options for the life of the
/// process: what a program checks at start (the answer does not change while
/// it runs, and each check starts bwrap).
inline std::optional<std::string> bubblewrap_unavailable_cached(const isolation_options& o) {
    static std::mutex mutex;
    static std::map<std::string, std::optional<std::string>> answers;
    const std::string key = detail::format("{}\n{}\n{}\n{}\n{}", o.bwrap, o.uid, o.gid, o.network,
                                           current_sandbox_setup() == sandbox_setup::as_root);
    std::lock_guard lock(mutex);
    if (auto it = answers.find(key); it != answers.end()) return it->second;
    return answers.emplace(key, bubblewrap_unavailable(o)).first->second;
}

/// Runs `command` with bash inside the isolated sandbox.
inline command_outcome run_isolated(const std::string& command, const thread_paths& td,
                                    const isolation_options& o, std::chrono::milliseconds timeout,
                                    std::size_t capture_cap) {
    command_outcome r;
    if (auto problem = o.problem()) {
        r.failure = detail::format("sandbox.isolation.{}", *problem);
        return r;
    }
    const std::string bwrap = find_bwrap(o.bwrap);
    if (bwrap.empty()) {
        r.failure =
            detail::format("{} was not found (the isolated sandbox needs Debian's bubblewrap)", o.bwrap);
        return r;
    }
    const sandbox_setup setup = current_sandbox_setup();
    const std::string setpriv = find_setpriv();
    if (setup == sandbox_setup::as_root) {
        if (setpriv.empty()) {
            r.failure = "setpriv was not found (util-linux): run as root, the isolated sandbox needs it to "
                        "start the command as an unprivileged user";
            return r;
        }
        for (const auto* dir : {&td.workspace_path, &td.outputs_path, &td.uploads_path})
            hand_over_tree(*dir, o.uid, o.gid);
    }
    const user_namespace_filter filter;
    pids_cgroup group(o.max_processes);
    process_limits limits;
    limits.address_space_bytes = static_cast<std::uint64_t>(o.max_memory_mb) * 1024 * 1024;
    limits.file_size_bytes = static_cast<std::uint64_t>(o.max_file_size_mb) * 1024 * 1024;
    limits.processes = group.dir().empty() ? o.max_processes : 0;
    limits.cgroup_procs_fd = group.procs_fd();
    limits.passed_fd = filter.fd();
    return run_process(bwrap_arguments(bwrap, td, o, command, setup, filter.fd() >= 0, setpriv), timeout,
                       capture_cap, &limits);
}

} // namespace detail
} // namespace agentware

#endif
