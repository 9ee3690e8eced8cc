#ifndef AGENTWARE_AGENT_FILE_CHECKPOINTER_HPP
#define AGENTWARE_AGENT_FILE_CHECKPOINTER_HPP

// A checkpointer that keeps states on disk, one JSON file per thread, written
// atomically and durably. It accepts only valid thread ids (validate_thread_id).

#include <agentware/agent/checkpointer.hpp>
#include <agentware/thread/id.hpp>

#include <boost/json/parser.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace agentware {

namespace detail {

inline std::string errno_text(int err) { return std::generic_category().message(err); }

[[noreturn]] inline void throw_checkpoint_io(std::string_view action, const std::filesystem::path& path,
                                             int err) {
    std::string what = "checkpoint: cannot ";
    what += action;
    what += " \"";
    what += path.string();
    what += "\": ";
    what += errno_text(err);
    throw checkpoint_error(what);
}

/// Owns a file descriptor; close errors on the success path are checked by
/// calling close() explicitly.
class unique_fd {
public:
    explicit unique_fd(int fd) noexcept : fd_(fd) {}
    unique_fd(const unique_fd&) = delete;
    unique_fd& operator=(const unique_fd&) = delete;
    ~unique_fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    int get() const noexcept { return fd_; }
    /// Closes now and returns 0 or the errno of close().
    int close() noexcept {
        const int fd = std::exchange(fd_, -1);
        return ::close(fd) == 0 ? 0 : errno;
    }

private:
    int fd_;
};

/// Returns 0 or the errno of the failed write.
inline int write_all(int fd, std::string_view data) noexcept {
    while (!data.empty()) {
        const ::ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return 0;
}

/// Returns 0 or the errno of the failed read.
inline int read_all(int fd, std::string& out) {
    struct ::stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) out.reserve(static_cast<std::size_t>(st.st_size));
    char buffer[16384];
    for (;;) {
        const ::ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (n == 0) return 0;
        out.append(buffer, static_cast<std::size_t>(n));
    }
}

/// Returns 0 or the errno of open() or fsync(). File systems that cannot sync
/// a directory (EINVAL) count as success: there is nothing more to do.
inline int fsync_directory(const std::filesystem::path& dir) noexcept {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno;
    int err = 0;
    while (::fsync(fd) != 0) {
        if (errno == EINTR) continue;
        if (errno != EINVAL) err = errno;
        break;
    }
    ::close(fd);
    return err;
}

/// Different for every call in this process; with the pid and the thread it
/// makes temporary names unique across writers (O_EXCL catches the rest).
inline unsigned long long next_temp_serial() noexcept {
    static std::atomic<unsigned long long> serial{0};
    return serial.fetch_add(1, std::memory_order_relaxed);
}

inline constexpr std::string_view checkpoint_suffix = ".json";
inline constexpr std::string_view checkpoint_temp_suffix = ".tmp";

/// `.<id>.json.<pid>-<thread>-<serial>.tmp`: the leading dot and the suffix keep
/// it out of load and list.
inline std::string checkpoint_temp_name(std::string_view thread_id) {
    std::string name = ".";
    name += thread_id;
    name += checkpoint_suffix;
    name += '.';
    name += std::to_string(static_cast<long long>(::getpid()));
    name += '-';
    name += std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
    name += '-';
    name += std::to_string(next_temp_serial());
    name += checkpoint_temp_suffix;
    return name;
}

inline bool is_checkpoint_temp_name(std::string_view name) noexcept {
    return name.size() > 1 && name.front() == '.' && name.ends_with(checkpoint_temp_suffix) &&
           name.find(".json.") != std::string_view::npos;
}

/// Removes a temporary file unless the rename happened.
struct checkpoint_temp_guard {
    explicit checkpoint_temp_guard(const std::filesystem::path& p) noexcept : path(p) {}
    checkpoint_temp_guard(const checkpoint_temp_guard&) = delete;
    checkpoint_temp_guard& operator=(const checkpoint_temp_guard&) = delete;
    ~checkpoint_temp_guard() {
        if (armed) ::unlink(path.c_str());
    }
    const std::filesystem::path& path;
    bool armed = true;
};

/// Creates `dir` if needed (syncing its parent), then replaces `target` (in
/// `dir`) by `text` atomically and durably: a temporary file unique to the
/// writer, fsynced, renamed over the target, then the directory fsynced.
inline void replace_file_durably(const std::filesystem::path& dir, const std::filesystem::path& target,
                                 std::string_view thread_id, std::string_view text) {
    std::error_code ec;
    if (std::filesystem::create_directories(dir, ec)) {
        // A new directory entry is only durable once its parent is synced.
        (void)fsync_directory(dir.has_parent_path() ? dir.parent_path() : ".");
    } else if (ec) {
        throw_checkpoint_io("create directory", dir, ec.value());
    }

    std::filesystem::path temp;
    int raw_fd = -1;
    for (int attempt = 0; raw_fd < 0; ++attempt) {
        temp = dir / checkpoint_temp_name(thread_id);
        raw_fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (raw_fd < 0 && (errno != EEXIST || attempt >= 16))
            throw_checkpoint_io("create temporary file", temp, errno);
    }
    unique_fd fd(raw_fd);
    checkpoint_temp_guard guard(temp);

    if (const int err = write_all(fd.get(), text)) throw_checkpoint_io("write", temp, err);
    while (::fsync(fd.get()) != 0) {
        if (errno != EINTR) throw_checkpoint_io("sync", temp, errno);
    }
    if (const int err = fd.close()) throw_checkpoint_io("close", temp, err);

    if (::rename(temp.c_str(), target.c_str()) != 0) {
        const int err = errno;
        throw_checkpoint_io("rename " + temp.string() + " to", target, err);
    }
    guard.armed = false;
    if (const int err = fsync_directory(dir)) throw_checkpoint_io("sync directory", dir, err);
}

/// Parses what serialize wrote: no depth limit of 32, and strings kept byte
/// for byte even when they are not UTF-8. Sets `ec` (and `consumed`) on failure.
inline boost::json::value parse_checkpoint_text(std::string_view text, boost::json::error_code& ec,
                                                std::size_t& consumed) {
    boost::json::parse_options options;
    options.max_depth = 100000;
    options.allow_invalid_utf8 = true;
    boost::json::parser parser(boost::json::storage_ptr(), options);
    consumed = parser.write(text.data(), text.size(), ec);
    if (ec) return nullptr;
    return parser.release();
}

/// Removes one thread's file and syncs the directory; false when there was none.
inline bool remove_checkpoint_file(const std::filesystem::path& dir, const std::filesystem::path& path) {
    if (::unlink(path.c_str()) != 0) {
        const int err = errno;
        if (err == ENOENT) return false;
        throw_checkpoint_io("remove", path, err);
    }
    if (const int err = fsync_directory(dir)) throw_checkpoint_io("sync directory", dir, err);
    return true;
}

/// The ids of the threads stored in `dir`, sorted: regular files named
/// `<valid id><suffix>` (temporaries and strays are ignored).
inline std::vector<std::string> list_checkpoint_ids(const std::filesystem::path& dir,
                                                    std::string_view suffix) {
    std::vector<std::string> ids;
    std::error_code ec;
    std::filesystem::directory_iterator it(dir, ec);
    if (ec) {
        if (ec == std::errc::no_such_file_or_directory) return ids;
        throw_checkpoint_io("list directory", dir, ec.value());
    }
    for (const std::filesystem::directory_iterator end; it != end; it.increment(ec)) {
        if (ec) throw_checkpoint_io("list directory", dir, ec.value());
        const std::string name = it->path().filename().string();
        if (!name.ends_with(suffix)) continue;
        const std::string_view id = std::string_view(name).substr(0, name.size() - suffix.size());
        std::error_code type_ec;
        if (is_valid_thread_id(id) && it->is_regular_file(type_ec)) ids.emplace_back(id);
    }
    if (ec) throw_checkpoint_io("list directory", dir, ec.value());
    std::sort(ids.begin(), ids.end());
    return ids;
}

} // namespace detail

/// Keeps states on disk: one JSON file per thread, `<dir>/<thread_id>.json`.
///
/// The directory is created by the first save (with the process's umask);
/// files are created owner-only (0600), as conversations may be private. Saves are atomic and durable:
/// the state goes to a temporary file unique to the writer (same directory),
/// which is fsynced and renamed over the target, then the directory is fsynced.
/// A crash therefore leaves either the previous complete file or the new one,
/// plus at worst a stray `.<id>.json.*.tmp` that load and list ignore and
/// remove_stale_temporaries deletes.
///
/// Safe for concurrent use from many threads and processes: concurrent saves to
/// one thread leave one of the saved states (the last rename wins), saves to
/// different threads do not interact. Thread ids are validated before the disk
/// is touched (std::invalid_argument). I/O failures and unreadable files throw
/// checkpoint_error. Linux/POSIX only.
class file_checkpointer {
public:
    explicit file_checkpointer(std::filesystem::path directory) : dir_(std::move(directory)) {
        if (dir_.empty()) throw std::invalid_argument("file_checkpointer: the directory path is empty");
    }

    const std::filesystem::path& directory() const noexcept { return dir_; }

    /// Where the state of `thread_id` is (or would be) stored.
    std::filesystem::path path_of(std::string_view thread_id) const {
        validate_thread_id(thread_id);
        return file_path(thread_id);
    }

    std::optional<boost::json::value> load(std::string_view thread_id) const {
        validate_thread_id(thread_id);
        const std::filesystem::path path = file_path(thread_id);
        detail::unique_fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (fd.get() < 0) {
            const int err = errno;
            if (err == ENOENT) return std::nullopt;
            detail::throw_checkpoint_io("open", path, err);
        }
        std::string text;
        if (const int err = detail::read_all(fd.get(), text)) detail::throw_checkpoint_io("read", path, err);
        return parse(text, path);
    }

    void save(std::string_view thread_id, const boost::json::value& state) {
        validate_thread_id(thread_id);
        std::string text = boost::json::serialize(state);
        text += '\n';

        detail::replace_file_durably(dir_, file_path(thread_id), thread_id, text);
    }

    bool erase(std::string_view thread_id) {
        validate_thread_id(thread_id);
        return detail::remove_checkpoint_file(dir_, file_path(thread_id));
    }

    /// The ids of the stored threads, sorted. Files that are not named
    /// `<valid id>.json` (temporaries, strays) are ignored.
    std::vector<std::string> list() const {
        return detail::list_checkpoint_ids(dir_, detail::checkpoint_suffix);
    }

    /// Deletes temporary files left by interrupted saves that are at least
    /// `min_age` old, and returns how many. A younger one may belong to a save
    /// still in progress (in any process), whose rename would then fail.
    std::size_t remove_stale_temporaries(std::chrono::seconds min_age = std::chrono::minutes(10)) {
        std::size_t removed = 0;
        std::error_code ec;
        std::filesystem::directory_iterator it(dir_, ec);
        if (ec) {
            if (ec == std::errc::no_such_file_or_directory) return 0;
            detail::throw_checkpoint_io("list directory", dir_, ec.value());
        }
        const auto now = std::filesystem::file_time_type::clock::now();
        for (const std::filesystem::directory_iterator end; it != end; it.increment(ec)) {
            if (ec) detail::throw_checkpoint_io("list directory", dir_, ec.value());
            if (!detail::is_checkpoint_temp_name(it->path().filename().string())) continue;
            std::error_code entry_ec;
            const auto written = std::filesystem::last_write_time(it->path(), entry_ec);
            if (entry_ec || now - written < min_age) continue;
            if (::unlink(it->path().c_str()) == 0) ++removed;
        }
        if (ec) detail::throw_checkpoint_io("list directory", dir_, ec.value());
        return removed;
    }

private:
    std::filesystem::path file_path(std::string_view thread_id) const {
        std::string name(thread_id);
        name += detail::checkpoint_suffix;
        return dir_ / name;
    }

    static boost::json::value parse(std::string_view text, const std::filesystem::path& path) {
        boost::json::error_code ec;
        std::size_t consumed = 0;
        boost::json::value v = detail::parse_checkpoint_text(text, ec, consumed);
        if (ec) {
            std::string what = "checkpoint: file \"";
            what += path.string();
            what += "\" is not valid JSON: ";
            what += ec.message();
            what += " (at byte ";
            what += std::to_string(consumed);
            what += " of ";
            what += std::to_string(text.size());
            what += ')';
            throw checkpoint_error(what);
        }
        return v;
    }

    std::filesystem::path dir_;
};

static_assert(checkpointer<file_checkpointer>);

} // namespace agentware

#endif
