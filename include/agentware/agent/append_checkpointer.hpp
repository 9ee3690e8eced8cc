#ifndef AGENTWARE_AGENT_APPEND_CHECKPOINTER_HPP
#define AGENTWARE_AGENT_APPEND_CHECKPOINTER_HPP

// A checkpointer that keeps each thread as an append-only log on disk: a save
// writes what changed since the previous one (the new messages, the changed
// fields), one tool result can be recorded as its call completes, and the log
// is compacted into one snapshot now and then.

#include <agentware/agent/checkpointer.hpp>
#include <agentware/agent/detail/state_diff.hpp>
#include <agentware/agent/file_checkpointer.hpp>
#include <agentware/thread/id.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace agentware {

struct append_checkpointer_options {
    /// The last messages of the previous save compared by value with the new
    /// state's (older ones are taken as unchanged: see the class comment).
    std::size_t verify_window = 32;
    /// The log is rewritten as one snapshot when it exceeds this many bytes and
    /// twice the size of its last snapshot.
    std::size_t compact_min_bytes = 1 << 20;
    /// fdatasync each record (a record then survives a power loss, not only a
    /// crash of the process).
    bool sync = true;
};

namespace detail {

inline constexpr std::string_view append_log_suffix = ".jsonl";

/// What the checkpointer remembers of a thread's log between saves: enough to
/// write the next save's difference without reading the log again.
struct append_log_cache {
    std::size_t count = 0;               ///< messages of the last save (results excluded)
    std::deque<boost::json::value> tail; ///< the last verify_window of them
    boost::json::object fields;          ///< the other keys of the last save
    std::size_t results = 0;             ///< tool results recorded since the last save
    std::size_t bytes = 0;               ///< the log's valid length
    std::size_t snapshot_bytes = 0;      ///< the length of its last snapshot record
};

/// A state already in JSON, seen as a state_view (what `save` compares).
class json_state_view final : public state_view {
public:
    json_state_view(const boost::json::object& state, const boost::json::array& messages) noexcept
        : state_(state), messages_(messages) {}
    std::size_t message_count() const override { return messages_.size(); }
    boost::json::value message(std::size_t i) const override { return messages_[i]; }
    boost::json::object fields() const override {
        boost::json::object o;
        for (const auto& kv : state_)
            if (kv.key() != "messages") o.emplace(kv.key(), kv.value());
        return o;
    }
    boost::json::value whole() const override { return state_; }

private:
    const boost::json::object& state_;
    const boost::json::array& messages_;
};

} // namespace detail

/// Keeps states on disk as one append-only log per thread,
/// `<dir>/<thread_id>.jsonl`, one JSON record a line:
///
/// - `{"snapshot": state}`: the whole state (the first save, a compaction, or a
///   save whose history was rewritten rather than extended);
/// - `{"at": n, "append": [messages], "set": {key: value}, "unset": [keys]}`:
///   the messages after the first `n` and the other top-level keys that changed;
/// - `{"result": message}`: one tool call's result, recorded as the call
///   completed (save_result); it follows the state's messages when loaded,
///   until the next save, which holds the round's results itself.
///
/// `load` replays the log. A crash while appending leaves at worst a torn last
/// record (no final newline, or not JSON): it is ignored, and the next write
/// cuts it off. A bad record anywhere else is a checkpoint_error. Compaction
/// replaces the log by one snapshot atomically (as file_checkpointer saves).
///
/// A save costs what changed: it compares the last `verify_window` messages of
/// the previous save with the new state's by value and the other top-level keys
/// by value, and takes the older messages as unchanged. `save_changes` does the
/// same on a state_view, so an agent converts to JSON only the messages
/// compared and appended and the other keys, not the whole history (the whole
/// state only when a snapshot is written). A history that was cut
/// or rewritten (summarisation, an inserted message) changes those last
/// messages and is saved as a snapshot; a hook that edits a message older than
/// the window in place, keeping the count, is not seen (such an edit must save
/// with `save_snapshot`).
///
/// One writer per thread id at a time (this object remembers each log's end);
/// the members may be called from many threads at once. Linux/POSIX only.
class append_file_checkpointer {
public:
    explicit append_file_checkpointer(std::filesystem::path directory,
                                      append_checkpointer_options options = {})
        : dir_(std::move(directory)), options_(options) {
        if (dir_.empty())
            throw std::invalid_argument("append_file_checkpointer: the directory path is empty");
    }
    append_file_checkpointer(const append_file_checkpointer&) = delete;
    append_file_checkpointer& operator=(const append_file_checkpointer&) = delete;
    append_file_checkpointer(append_file_checkpointer&& o) noexcept
        : dir_(std::move(o.dir_)), options_(o.options_), logs_(std::move(o.logs_)) {}

    const std::filesystem::path& directory() const noexcept { return dir_; }
    const append_checkpointer_options& options() const noexcept { return options_; }

    /// Where the log of `thread_id` is (or would be) stored.
    std::filesystem::path path_of(std::string_view thread_id) const {
        validate_thread_id(thread_id);
        return file_path(thread_id);
    }

    std::optional<boost::json::value> load(std::string_view thread_id) const {
        validate_thread_id(thread_id);
        std::lock_guard lock(mutex_);
        return replay(thread_id, true);
    }

    /// Appends what changed since the previous save (or a snapshot).
    void save(std::string_view thread_id, const boost::json::value& state) {
        const auto* o = state.if_object();
        const auto* m = o != nullptr ? o->if_contains("messages") : nullptr;
        if (m != nullptr && m->is_array())
            return save_changes(thread_id, detail::json_state_view(*o, m->as_array()));
        validate_thread_id(thread_id);
        std::lock_guard lock(mutex_);
        write_snapshot(thread_id, state); // no history to extend
    }

    /// `save(thread_id, view.whole())`, reading of the view only the messages
    /// it compares and appends and the other keys (the whole state when a
    /// snapshot is written).
    void save_changes(std::string_view thread_id, const state_view& state) {
        validate_thread_id(thread_id);
        std::lock_guard lock(mutex_);
        detail::append_log_cache* log = cache_of(thread_id);
        if (log == nullptr || !append_difference(thread_id, *log, state))
            write_snapshot(thread_id, state.whole());
    }

    /// Writes the whole state as one snapshot, replacing the log.
    void save_snapshot(std::string_view thread_id, const boost::json::value& state) {
        validate_thread_id(thread_id);
        std::lock_guard lock(mutex_);
        write_snapshot(thread_id, state);
    }

    /// Records one tool call's result after the last saved state.
    void save_result(std::string_view thread_id, const boost::json::value& message) {
        validate_thread_id(thread_id);
        std::lock_guard lock(mutex_);
        detail::append_log_cache* log = cache_of(thread_id);
        if (log == nullptr)
            throw checkpoint_error("checkpoint: cannot record a tool result for thread \"" +
                                   std::string(thread_id) + "\": it has no saved state to follow");
        boost::json::object record;
        record["result"] = message;
        append_record(thread_id, *log, record);
        ++log->results;
    }

    bool erase(std::string_view thread_id) {
        validate_thread_id(thread_id);
        std::lock_guard lock(mutex_);
        logs_.erase(std::string(thread_id));
        return detail::remove_checkpoint_file(dir_, file_path(thread_id));
    }

    /// The ids of the stored threads, sorted (files named `<valid id>.jsonl`).
    std::vector<std::string> list() const {
        return detail::list_checkpoint_ids(dir_, detail::append_log_suffix);
    }

private:
    using cache_map = std::map<std::string, detail::append_log_cache, std::less<>>;

    std::filesystem::path file_path(std::string_view thread_id) const {
        std::string name(thread_id);
        name += detail::append_log_suffix;
        return dir_ / name;
    }

    // The thread's cache, reading its log once when this object has not yet.
    detail::append_log_cache* cache_of(std::string_view thread_id) {
        auto it = logs_.find(thread_id);
        if (it == logs_.end()) {
            if (!replay(thread_id, true)) return nullptr;
            it = logs_.find(thread_id);
        }
        return it == logs_.end() ? nullptr : &it->second;
    }

    [[noreturn]] static void corrupt(const std::filesystem::path& path, std::size_t line,
                                     std::string_view why) {
        throw checkpoint_error("checkpoint: log \"" + path.string() + "\" record " + std::to_string(line) +
                               " " + std::string(why));
    }

    static boost::json::array& messages_of(boost::json::value& state, const std::filesystem::path& path,
                                           std::size_t line) {
        auto* o = state.if_object();
        auto* m = o != nullptr ? o->if_contains("messages") : nullptr;
        if (m == nullptr || !m->is_array())
            corrupt(path, line, "extends a state that has no \"messages\" array");
        return m->as_array();
    }

    // Reads the log into a state (messages, then the pending results) and
    // refreshes the cache. A torn last record is left out.
    std::optional<boost::json::value> replay(std::string_view thread_id, bool refresh) const {
        const std::filesystem::path path = file_path(thread_id);
        detail::unique_fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (fd.get() < 0) {
            const int err = errno;
            if (err == ENOENT) {
                if (refresh) logs_.erase(std::string(thread_id));
                return std::nullopt;
            }
            detail::throw_checkpoint_io("open", path, err);
        }
        std::string text;
        if (const int err = detail::read_all(fd.get(), text)) detail::throw_checkpoint_io("read", path, err);

        std::optional<boost::json::value> state;
        boost::json::array results;
        std::size_t valid = 0;
        std::size_t snapshot_bytes = 0;
        std::size_t line = 0;
        while (valid < text.size()) {
            ++line;
            const std::size_t eol = text.find('\n', valid);
            if (eol == std::string::npos) break; // torn: written without its newline
            boost::json::error_code ec;
            std::size_t consumed = 0;
            boost::json::value record = detail::parse_checkpoint_text(
                std::string_view(text).substr(valid, eol - valid), ec, consumed);
            if (ec || !record.is_object()) {
                if (eol + 1 == text.size()) break; // torn last record
                corrupt(path, line, "is not a JSON object");
            }
            apply_record(record.as_object(), state, results, path, line);
            if (record.as_object().contains("snapshot")) snapshot_bytes = eol + 1 - valid;
            valid = eol + 1;
        }
        if (!state) {
            if (refresh) logs_.erase(std::string(thread_id));
            return std::nullopt;
        }
        if (refresh) {
            detail::append_log_cache log;
            log.bytes = valid;
            log.snapshot_bytes = snapshot_bytes;
            log.results = results.size();
            remember(log, *state);
            logs_.insert_or_assign(std::string(thread_id), std::move(log));
        }
        if (!results.empty()) {
            boost::json::array& messages = messages_of(*state, path, line);
            for (auto& r : results)
                messages.push_back(std::move(r));
        }
        return state;
    }

    static void apply_record(boost::json::object& record, std::optional<boost::json::value>& state,
                             boost::json::array& results, const std::filesystem::path& path,
                             std::size_t line) {
        if (auto* snapshot = record.if_contains("snapshot")) {
            state = std::move(*snapshot);
            results.clear();
            return;
        }
        if (!state) corrupt(path, line, "comes before any snapshot");
        if (auto* result = record.if_contains("result")) {
            results.push_back(std::move(*result));
            return;
        }
        const auto* at = record.if_contains("at");
        if (at == nullptr || (!at->is_uint64() && !at->is_int64()))
            corrupt(path, line, "has no \"at\" count");
        if (at->to_number<std::size_t>() != messages_of(*state, path, line).size())
            corrupt(path, line, "does not follow the messages before it");
        results.clear();
        if (const auto why = detail::apply_state_changes(state->as_object(), record); !why.empty())
            corrupt(path, line, why);
    }

    // Fills the cache's view of `state` (as saved, results excluded).
    void remember(detail::append_log_cache& log, const boost::json::value& state) const {
        log.fields.clear();
        log.tail.clear();
        log.count = 0;
        const auto* o = state.if_object();
        if (o == nullptr) return;
        for (const auto& kv : *o) {
            if (kv.key() == "messages" && kv.value().is_array()) {
                const auto& messages = kv.value().as_array();
                log.count = messages.size();
                const std::size_t from =
                    messages.size() > options_.verify_window ? messages.size() - options_.verify_window : 0;
                for (std::size_t i = from; i < messages.size(); ++i)
                    log.tail.push_back(messages[i]);
            } else {
                log.fields.emplace(kv.key(), kv.value());
            }
        }
    }

    // Appends the difference from the previous save; false when the history
    // was rewritten (a snapshot is needed).
    bool append_difference(std::string_view thread_id, detail::append_log_cache& log,
                           const state_view& state) {
        const std::size_t count = state.message_count();
        if (count < log.count) return false;
        const std::size_t first_kept = log.count - log.tail.size();
        for (std::size_t i = 0; i < log.tail.size(); ++i)
            if (state.message(first_kept + i) != log.tail[i]) return false;

        boost::json::object record;
        record["at"] = log.count;
        boost::json::array appended;
        appended.reserve(count - log.count);
        for (std::size_t i = log.count; i < count; ++i)
            appended.push_back(state.message(i));
        auto [set, unset] = detail::changed_fields(log.fields, state.fields());
        if (appended.empty() && set.empty() && unset.empty() && log.results == 0)
            return true; // nothing to write

        if (log.bytes + appended.size() * 64 > options_.compact_min_bytes &&
            log.bytes > 2 * log.snapshot_bytes)
            return false; // compact: the snapshot replaces the log

        if (!appended.empty()) record["append"] = appended;
        if (!set.empty()) record["set"] = set;
        if (!unset.empty()) record["unset"] = unset;
        append_record(thread_id, log, record);

        const std::size_t keep = std::min(appended.size(), options_.verify_window);
        for (std::size_t i = appended.size() - keep; i < appended.size(); ++i) {
            log.tail.push_back(std::move(appended[i]));
            if (log.tail.size() > options_.verify_window) log.tail.pop_front();
        }
        log.count = count;
        for (auto& kv : set)
            log.fields[kv.key()] = std::move(kv.value());
        for (const auto& key : unset)
            log.fields.erase(key.as_string());
        log.results = 0;
        return true;
    }

    void write_snapshot(std::string_view thread_id, boost::json::value state) {
        boost::json::object record;
        record["snapshot"] = std::move(state);
        std::string text = boost::json::serialize(record);
        text += '\n';
        detail::replace_file_durably(dir_, file_path(thread_id), thread_id, text);
        detail::append_log_cache log;
        log.bytes = text.size();
        log.snapshot_bytes = text.size();
        remember(log, record["snapshot"]);
        logs_.insert_or_assign(std::string(thread_id), std::move(log));
    }

    // Appends one record, first cutting off a torn record left by a crash.
    void append_record(std::string_view thread_id, detail::append_log_cache& log,
                       const boost::json::object& record) {
        std::string text = boost::json::serialize(record);
        text += '\n';
        const std::filesystem::path path = file_path(thread_id);
        detail::unique_fd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
        if (fd.get() < 0) detail::throw_checkpoint_io("open", path, errno);
        struct ::stat st {};
        if (::fstat(fd.get(), &st) != 0) detail::throw_checkpoint_io("stat", path, errno);
        if (static_cast<std::size_t>(st.st_size) != log.bytes &&
            ::ftruncate(fd.get(), static_cast<::off_t>(log.bytes)) != 0)
            detail::throw_checkpoint_io("truncate", path, errno);
        if (const int err = detail::write_all(fd.get(), text)) {
            (void)::ftruncate(fd.get(), static_cast<::off_t>(log.bytes)); // leave no half record
            detail::throw_checkpoint_io("write", path, err);
        }
        if (options_.sync)
            while (::fdatasync(fd.get()) != 0)
                if (errno != EINTR) detail::throw_checkpoint_io("sync", path, errno);
        if (const int err = fd.close()) detail::throw_checkpoint_io("close", path, err);
        log.bytes += text.size();
    }

    std::filesystem::path dir_;
    append_checkpointer_options options_;
    mutable std::mutex mutex_;
    mutable cache_map logs_;
};

static_assert(checkpointer<append_file_checkpointer>);
static_assert(result_checkpointer<append_file_checkpointer>);
static_assert(incremental_checkpointer<append_file_checkpointer>);

} // namespace agentware

#endif
