#ifndef AGENTWARE_FILESYSTEM_DISK_BACKEND_HPP
#define AGENTWARE_FILESYSTEM_DISK_BACKEND_HPP

// Files on the local disk under a root directory (deepagents'
// FilesystemBackend), and the same with a shell (LocalShellBackend).
//
// In virtual mode (the default) every path is relative to the root and
// cannot leave it: the path is resolved with its symlinks (weakly_canonical)
// and must stay under the canonical root, and the final open does not follow
// a symlink (O_NOFOLLOW), so a link swapped in after the check is refused
// too. Searches (glob, grep) never follow or read symlinks. Without virtual
// mode the paths are host paths, as in deepagents: not a sandbox.

#include <agentware/detail/format.hpp>
#include <agentware/detail/process.hpp>
#include <agentware/detail/write_nofollow.hpp>
#include <agentware/filesystem/backend.hpp>
#include <agentware/filesystem/detail/glob.hpp>

#include <fmt/core.h>
#include <fmt/std.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace agentware {

struct disk_backend_options {
    std::string root_dir = ".";
    bool virtual_mode = true;
    std::size_t max_file_size_mb = 10; ///< larger files are skipped by grep and refused by read
};

class disk_backend {
public:
    explicit disk_backend(disk_backend_options o = {}) : options_(std::move(o)) {
        std::error_code ec;
        root_ = std::filesystem::weakly_canonical(std::filesystem::absolute(options_.root_dir, ec), ec);
        if (ec) root_ = std::filesystem::absolute(options_.root_dir);
    }
    explicit disk_backend(std::string root_dir, bool virtual_mode = true)
        : disk_backend(disk_backend_options{std::move(root_dir), virtual_mode, 10}) {}

    const std::filesystem::path& root() const noexcept { return root_; }

    fs_ls_result ls(std::string_view path) const {
        fs_ls_result r;
        auto host = resolve(path, r.error);
        if (!host) return r;
        std::error_code ec;
        if (!std::filesystem::is_directory(*host, ec)) return r;
        std::filesystem::directory_iterator it(*host, ec), end;
        const std::string base = dir_prefix(path);
        for (; !ec && it != end; it.increment(ec)) {
            const auto& e = *it;
            std::error_code ec2;
            const auto st = e.symlink_status(ec2);
            if (ec2) continue;
            const std::string name = e.path().filename().string();
            if (std::filesystem::is_symlink(st) && !inside_root(e.path())) continue; // leads out: not shown
            const bool dir = std::filesystem::is_directory(e.status(ec2));
            fs_entry entry;
            entry.path = base + name + (dir ? "/" : "");
            entry.is_dir = dir;
            if (!dir) entry.size = e.file_size(ec2);
            r.entries.push_back(std::move(entry));
        }
        std::sort(r.entries.begin(), r.entries.end(),
                  [](const fs_entry& a, const fs_entry& b) { return a.path < b.path; });
        return r;
    }

    fs_read_result read(std::string_view path) const {
        fs_read_result r;
        auto host = resolve(path, r.error);
        if (!host) return r;
        const int fd = ::open(host->c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            r.error = errno == ENOENT ? detail::file_not_found(path) : open_error(path, errno);
            return r;
        }
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd);
            r.error = S_ISDIR(st.st_mode) ? detail::format("'{}' is a directory, not a file", path)
                                          : detail::file_not_found(path);
            return r;
        }
        if (static_cast<std::uint64_t>(st.st_size) > options_.max_file_size_mb * 1024 * 1024) {
            ::close(fd);
            r.error = detail::format("File '{}' is larger than {} MB", path, options_.max_file_size_mb);
            return r;
        }
        r.content.resize(static_cast<std::size_t>(st.st_size));
        std::size_t done = 0;
        while (done < r.content.size()) {
            const ssize_t n = ::read(fd, r.content.data() + done, r.content.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            done += static_cast<std::size_t>(n);
        }
        r.content.resize(done);
        ::close(fd);
        return r;
    }

    fs_write_result write(std::string_view path, std::string_view content) const {
        fs_write_result r;
        r.path = path;
        auto host = resolve(path, r.error);
        if (!host) return r;
        if (!make_parents(*host, path, r.error)) return r;
        if (int err = agentware::detail::write_file_nofollow(*host, content, false))
            r.error = open_error(path, err);
        return r;
    }

    fs_write_result edit(std::string_view path, std::string_view old_text, std::string_view new_text,
                         bool replace_all) const {
        fs_write_result r;
        r.path = path;
        fs_read_result current = read(path);
        if (!current.error.empty()) {
            r.error = std::move(current.error);
            return r;
        }
        r.error = detail::apply_edit(current.content, old_text, new_text, replace_all, r.occurrences);
        if (!r.error.empty()) return r;
        auto host = resolve(path, r.error);
        if (!host) return r;
        if (int err = agentware::detail::write_file_nofollow(*host, current.content, false))
            r.error = open_error(path, err);
        return r;
    }

    fs_glob_result glob(std::string_view pattern, std::string_view path) const {
        fs_glob_result r;
        auto host = resolve(path, r.error);
        if (!host) return r;
        const detail::fs_glob_pattern pat(pattern);
        const std::string base = dir_prefix(path);
        walk(*host, [&](const std::filesystem::path& file, std::string_view rel, std::uint64_t size) {
            (void)file;
            if (pat.matches(rel)) r.entries.push_back(fs_entry{base + std::string(rel), false, size, {}});
            return true;
        });
        std::sort(r.entries.begin(), r.entries.end(),
                  [](const fs_entry& a, const fs_entry& b) { return a.path < b.path; });
        return r;
    }

    fs_grep_result grep(std::string_view pattern, std::string_view path, std::string_view glob_filter,
                        std::size_t max_count) const {
        fs_grep_result r;
        auto host = resolve(path, r.error);
        if (!host) return r;
        std::optional<detail::fs_glob_pattern> filter;
        if (!glob_filter.empty()) filter.emplace(glob_filter);
        std::size_t budget = max_count;
        std::error_code ec;
        const auto st = std::filesystem::symlink_status(*host, ec);
        if (std::filesystem::is_regular_file(st)) {
            grep_file(*host, path, pattern, r, budget);
            return r;
        }
        const std::string base = dir_prefix(path);
        std::vector<std::pair<std::string, std::filesystem::path>> files;
        walk(*host, [&](const std::filesystem::path& file, std::string_view rel, std::uint64_t size) {
            if (size > options_.max_file_size_mb * 1024 * 1024) return true;
            if (filter && !filter->matches(rel)) return true;
            files.emplace_back(base + std::string(rel), file);
            return true;
        });
        std::sort(files.begin(), files.end());
        for (const auto& [shown, file] : files)
            if (!grep_file(file, shown, pattern, r, budget)) break;
        return r;
    }

    fs_write_result remove(std::string_view path) const {
        fs_write_result r;
        r.path = path;
        auto host = resolve(path, r.error);
        if (!host) return r;
        if (*host == root_) {
            r.error = "Cannot delete the root directory";
            return r;
        }
        std::error_code ec;
        if (!std::filesystem::exists(std::filesystem::symlink_status(*host, ec))) {
            r.error = detail::file_not_found(path);
            return r;
        }
        std::filesystem::remove_all(*host, ec); // removes a symlink itself, never what it points to
        if (ec) r.error = detail::format("Could not delete '{}': {}", path, ec.message());
        return r;
    }

    fs_write_result mkdir(std::string_view path) const {
        fs_write_result r;
        r.path = path;
        auto host = resolve(path, r.error);
        if (!host) return r;
        std::error_code ec;
        std::filesystem::create_directories(*host, ec);
        if (ec) r.error = detail::format("Could not create directory '{}': {}", path, ec.message());
        return r;
    }

protected:
    disk_backend_options options_;
    std::filesystem::path root_;

    static std::string dir_prefix(std::string_view path) {
        std::string p(path);
        if (p.empty() || p.back() != '/') p += '/';
        return p;
    }
    static std::string open_error(std::string_view path, int err) {
        return detail::format("Could not access '{}': {}", path, std::strerror(err));
    }

    bool inside_root(const std::filesystem::path& p) const {
        std::error_code ec;
        const auto canon = std::filesystem::weakly_canonical(p, ec);
        if (ec) return false;
        auto rel = canon.lexically_relative(root_);
        return !rel.empty() && *rel.begin() != "..";
    }

    /// The host path of a virtual path, or nullopt with `error` set.
    std::optional<std::filesystem::path> resolve(std::string_view path, std::string& error) const {
        if (path.find('\0') != std::string_view::npos) {
            error = "Path contains a NUL byte";
            return std::nullopt;
        }
        if (!options_.virtual_mode) return std::filesystem::path(std::string(path));
        std::string_view rel = path;
        while (rel.starts_with('/'))
            rel.remove_prefix(1);
        std::filesystem::path host = rel.empty() ? root_ : root_ / std::string(rel);
        std::error_code ec;
        const auto canon = std::filesystem::weakly_canonical(host, ec);
        if (ec) {
            error = detail::format("Could not resolve '{}': {}", path, ec.message());
            return std::nullopt;
        }
        auto inside = canon.lexically_relative(root_);
        if (inside.empty() || *inside.begin() == "..") {
            error = detail::format("Path '{}' leads outside the root directory", path);
            return std::nullopt;
        }
        return canon;
    }

    bool make_parents(const std::filesystem::path& host, std::string_view path, std::string& error) const {
        std::error_code ec;
        std::filesystem::create_directories(host.parent_path(), ec);
        if (ec) {
            error = detail::format("Could not create the directories of '{}': {}", path, ec.message());
            return false;
        }
        if (options_.virtual_mode && !inside_root(host.parent_path())) {
            error = detail::format("Path '{}' leads outside the root directory", path);
            return false;
        }
        return true;
    }

    /// Regular files under `dir`, depth first; symlinks are neither followed nor reported.
    template <class Visit>
    void walk(const std::filesystem::path& dir, Visit&& visit) const {
        std::error_code ec;
        std::filesystem::recursive_directory_iterator it(
            dir, std::filesystem::directory_options::skip_permission_denied, ec),
            end;
        const std::size_t cut = dir.native().size() + (dir.native().ends_with('/') ? 0 : 1);
        for (; !ec && it != end; it.increment(ec)) {
            std::error_code ec2;
            const auto st = it->symlink_status(ec2);
            if (ec2 || !std::filesystem::is_regular_file(st)) continue;
            const std::string& full = it->path().native();
            if (full.size() <= cut) continue;
            if (!visit(it->path(), std::string_view(full).substr(cut), it->file_size(ec2))) return;
        }
    }

    static bool grep_file(const std::filesystem::path& file, std::string_view shown, std::string_view pattern,
                          fs_grep_result& r, std::size_t& budget) {
        const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) return true;
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd);
            return true;
        }
        // One read of the whole file (it was size-checked by the walk).
        std::string text;
        text.resize(static_cast<std::size_t>(st.st_size));
        std::size_t done = 0;
        while (done < text.size()) {
            const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            done += static_cast<std::size_t>(n);
        }
        text.resize(done);
        ::close(fd);
        if (std::memchr(text.data(), '\0', std::min<std::size_t>(text.size(), 8192)) != nullptr)
            return true; // binary
        if (!detail::grep_text(shown, text, pattern, r.matches, budget)) {
            r.truncated = true;
            return false;
        }
        return true;
    }
};

static_assert(filesystem_backend<disk_backend>);

/// disk_backend plus `execute`: commands run on the host with the root as
/// their working directory (deepagents' LocalShellBackend). Not isolated:
/// anything the user running the agent may do, the command may do.
class local_shell_backend : public disk_backend {
public:
    explicit local_shell_backend(disk_backend_options o = {},
                                 std::chrono::seconds default_timeout = std::chrono::seconds(120),
                                 std::size_t max_output_bytes = 100000)
        : disk_backend(std::move(o)), timeout_(default_timeout), max_output_(max_output_bytes) {}

    execute_response execute(std::string_view command, std::optional<std::chrono::seconds> timeout) const {
        const std::string root = root_.string();
        std::string quoted = "'";
        for (char c : root) {
            if (c == '\'')
                quoted += "'\\''";
            else
                quoted += c;
        }
        quoted += "'";
        const auto t = timeout.value_or(timeout_);
        auto outcome =
            detail::run_command(detail::find_shell(), detail::format("cd {} && {}", quoted, command),
                                std::chrono::duration_cast<std::chrono::milliseconds>(t), max_output_);
        execute_response r;
        if (!outcome.failure.empty()) {
            r.output = outcome.failure;
            return r;
        }
        r.output = outcome.out.data + outcome.err.data;
        r.truncated =
            outcome.out.total > outcome.out.data.size() || outcome.err.total > outcome.err.data.size();
        if (r.output.size() > max_output_) {
            r.output.resize(max_output_);
            r.truncated = true;
        }
        if (outcome.timed_out) r.output += detail::format("\nCommand timed out after {} seconds", t.count());
        r.exit_code = outcome.exit_code;
        return r;
    }

private:
    std::chrono::seconds timeout_;
    std::size_t max_output_;
};

static_assert(sandbox_backend<local_shell_backend>);

} // namespace agentware

#endif
