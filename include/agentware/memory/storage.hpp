#ifndef AGENTWARE_MEMORY_STORAGE_HPP
#define AGENTWARE_MEMORY_STORAGE_HPP

// DeerMem v2's files (reference §9.2): per user `{root}/users/{user}/memory.json`
// (summaries and a revision, no facts) and one Markdown file per fact with
// front matter at `{root}/users/{user}/agents/{agent}/facts/{sha256(id)[:2]}/{id}.md`.
//
// Every file is written whole to a temporary file, flushed to disk and
// renamed over the old one, so a writer killed at any instant leaves either
// the old or the new file, never a torn one. A save writes the new facts
// first, then memory.json (which bumps the revision), then removes the facts
// that went: a crash between the steps loses nothing that was there before.
// Saves of one user are serialised by a mutex in the process and an flock on
// `{user}/.lock` across processes, and checked against the revision they
// started from (memory_revision_conflict when another writer got there first).

#include <agentware/detail/format.hpp>
#include <agentware/detail/hash.hpp>
#include <agentware/memory/clock.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>

#include <boost/json.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace agentware {

/// A memory file that cannot be read (corrupt JSON, a bad fact file). Never overwritten.
class memory_storage_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Another writer saved the user's memory after this snapshot was loaded.
class memory_revision_conflict : public memory_storage_error {
public:
    using memory_storage_error::memory_storage_error;
};

struct memory_summary {
    std::string summary;
    std::string updated_at;
    friend bool operator==(const memory_summary&, const memory_summary&) = default;
};

struct memory_fact {
    std::string id;
    std::string content;
    std::string category = "context";
    std::string category_extension; ///< the model's category when it is not one storage knows
    double confidence = 0.5;
    std::string created_at;
    std::string source = "unknown";           ///< the thread it came from
    std::string source_type = "conversation"; ///< "manual" for user-authored facts
    std::string source_error;
    std::optional<std::int64_t> expected_valid_days;
    std::string updated_at;
    std::string last_confirmed_at;       ///< when the user last confirmed it (factsToReinforce; "" = never)
    std::int64_t confirmation_count = 0; ///< how often the user confirmed it
    std::vector<std::string> consolidated_from; ///< the facts a consolidation merged into this one
    friend bool operator==(const memory_fact&, const memory_fact&) = default;
};

/// One user's memory as one agent sees it: the user's summaries and that agent's facts.
struct user_memory {
    std::int64_t revision = 0;
    std::string last_updated;
    /// workContext, personalContext, topOfMind
    std::array<memory_summary, 3> user;
    /// recentMonths, earlierContext, longTermBackground
    std::array<memory_summary, 3> history;
    std::vector<memory_fact> facts;
    friend bool operator==(const user_memory&, const user_memory&) = default;
};

inline constexpr std::array<std::string_view, 3> memory_user_keys{"workContext", "personalContext",
                                                                  "topOfMind"};
inline constexpr std::array<std::string_view, 3> memory_history_keys{"recentMonths", "earlierContext",
                                                                     "longTermBackground"};
inline constexpr std::array<std::string_view, 9> memory_categories{
    "preference", "correction", "context", "goal", "behavior", "identity", "constraint", "decision", "other"};
inline constexpr std::string_view default_memory_agent = "__default__";

namespace detail {

inline bool is_valid_fact_id(std::string_view id) noexcept { return is_valid_user_id(id); }

/// An agent's directory name: lower-cased, `__default__` when empty.
inline std::string memory_agent_dir(std::string_view agent_name) {
    std::string a = lower(trim(agent_name));
    if (a.empty()) return std::string(default_memory_agent);
    if (!is_valid_user_id(a))
        throw std::invalid_argument(
            detail::format("invalid agent name {}: use characters from A-Z, a-z, 0-9, '_' and '-'",
                           quoted_excerpt(agent_name, 64)));
    return a;
}

inline void check_memory_user(std::string_view user_id) {
    if (!is_valid_user_id(user_id))
        throw std::invalid_argument(
            detail::format("invalid user id {}: use characters from A-Z, a-z, 0-9, '_' and '-'",
                           quoted_excerpt(user_id, 64)));
}

/// Writes `data` to `path` atomically: a temporary file beside it, fsync, rename, fsync of the directory.
inline void atomic_write(const std::filesystem::path& path, std::string_view data) {
    std::filesystem::create_directories(path.parent_path());
    const std::filesystem::path tmp = path.string() + detail::format(".tmp{}", ::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw memory_storage_error(detail::format("cannot write {}", tmp.string()));
    std::size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n <= 0) {
            ::close(fd);
            std::filesystem::remove(tmp);
            throw memory_storage_error(detail::format("cannot write {}", tmp.string()));
        }
        done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        std::filesystem::remove(tmp);
        throw memory_storage_error(detail::format("cannot flush {}", tmp.string()));
    }
    std::filesystem::rename(tmp, path);
    if (const int dir = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
}

inline std::optional<std::string> read_whole(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// A YAML scalar: plain when it is safe, else single-quoted ('' for ').
inline std::string yaml_scalar(std::string_view s, bool force_quotes = false) {
    bool plain = !s.empty() && !force_quotes;
    for (char c : s)
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.'))
            plain = false;
    if (plain && (s == "null" || s == "true" || s == "false" || s == "~")) plain = false;
    if (plain) return std::string(s);
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') out += '\'';
        if (c == '\n') {
            out += ' ';
            continue;
        }
        out += c;
    }
    return out + "'";
}

inline std::string yaml_unquote(std::string_view s) {
    s = trim(s);
    if (s.size() >= 2 && s.front() == '\'' && s.back() == '\'') {
        std::string out;
        for (std::size_t i = 1; i + 1 < s.size(); ++i) {
            out += s[i];
            if (s[i] == '\'' && i + 2 < s.size() && s[i + 1] == '\'') ++i;
        }
        return out;
    }
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') {
        boost::system::error_code ec;
        auto v = boost::json::parse(s, ec);
        if (!ec && v.is_string()) return std::string(v.get_string());
    }
    return std::string(s);
}

inline std::string fact_title(std::string_view content) {
    std::string_view first = content;
    while (!first.empty()) {
        const auto nl = first.find('\n');
        std::string_view line = trim(first.substr(0, nl));
        if (!line.empty()) return std::string(first_code_points(line, 160));
        if (nl == std::string_view::npos) break;
        first.remove_prefix(nl + 1);
    }
    return {};
}

inline std::string fact_markdown(const memory_fact& f, std::string_view user_id, std::string_view agent) {
    std::string out = "---\n";
    out += "id: " + f.id + "\n";
    const bool known =
        std::find(memory_categories.begin(), memory_categories.end(), f.category) != memory_categories.end();
    out += "category: " + yaml_scalar(known ? f.category : "other") + "\n";
    if (!known || !f.category_extension.empty())
        out += "categoryExtension: " + yaml_scalar(known ? f.category_extension : f.category) + "\n";
    out += detail::format("confidence: {}\n", f.confidence);
    out += "createdAt: " + yaml_scalar(f.created_at, true) + "\n";
    if (f.source_type == "conversation")
        out += "source: {type: conversation, threadId: " + yaml_scalar(f.source) + "}\n";
    else
        out += "source: {type: " + yaml_scalar(f.source_type) + "}\n";
    if (!f.source_error.empty()) out += "sourceError: " + yaml_scalar(f.source_error, true) + "\n";
    if (f.expected_valid_days) out += detail::format("expected_valid_days: {}\n", *f.expected_valid_days);
    if (!f.last_confirmed_at.empty())
        out += "lastConfirmedAt: " + yaml_scalar(f.last_confirmed_at, true) + "\n";
    if (f.confirmation_count > 0) out += detail::format("confirmationCount: {}\n", f.confirmation_count);
    out += "status: active\ntopics: []\nconsolidatedFrom: [";
    for (std::size_t i = 0; i < f.consolidated_from.size(); ++i)
        out += (i ? ", " : "") + yaml_scalar(f.consolidated_from[i]);
    out += "]\nrevision: 1\nschemaVersion: 2\n";
    out += "updatedAt: " + yaml_scalar(f.updated_at.empty() ? f.created_at : f.updated_at, true) + "\n";
    out += "user_id: " + yaml_scalar(user_id) + "\n";
    out += "agent_name: " + yaml_scalar(agent) + "\n";
    out += "---\n\n# " + fact_title(f.content) + "\n\n" + f.content + "\n";
    return out;
}

/// Reads a fact file written by fact_markdown (and DeerMem's own, for the keys we use).
inline memory_fact parse_fact_markdown(std::string_view text, const std::string& where) {
    auto fail = [&](std::string_view why) {
        return memory_storage_error(detail::format("{}: {}", where, why));
    };
    if (!text.starts_with("---\n")) throw fail("no front matter");
    const auto end = text.find("\n---\n", 3);
    if (end == std::string_view::npos) throw fail("unterminated front matter");
    std::string_view header = text.substr(4, end - 4 + 1);
    std::string_view body = text.substr(end + 5);
    memory_fact f;
    std::string status = "active";
    bool has_id = false;
    while (!header.empty()) {
        const auto nl = header.find('\n');
        std::string_view line = header.substr(0, nl);
        header.remove_prefix(nl == std::string_view::npos ? header.size() : nl + 1);
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        const std::string_view key = trim(line.substr(0, colon));
        const std::string_view raw = trim(line.substr(colon + 1));
        if (key == "id") {
            f.id = yaml_unquote(raw);
            has_id = true;
        } else if (key == "category")
            f.category = yaml_unquote(raw);
        else if (key == "categoryExtension")
            f.category_extension = yaml_unquote(raw);
        else if (key == "confidence") {
            try {
                f.confidence = std::stod(std::string(raw));
            } catch (...) {
                f.confidence = 0;
            }
        } else if (key == "createdAt")
            f.created_at = yaml_unquote(raw);
        else if (key == "updatedAt")
            f.updated_at = yaml_unquote(raw);
        else if (key == "sourceError")
            f.source_error = yaml_unquote(raw);
        else if (key == "lastConfirmedAt")
            f.last_confirmed_at = yaml_unquote(raw);
        else if (key == "confirmationCount") {
            try {
                f.confirmation_count = std::max<std::int64_t>(std::stoll(std::string(raw)), 0);
            } catch (...) {
            }
        } else if (key == "consolidatedFrom" && raw.starts_with('[') && raw.ends_with(']')) {
            std::string_view inner = raw.substr(1, raw.size() - 2);
            while (!trim(inner).empty()) { // fact ids: no commas inside
                const auto comma = inner.find(',');
                if (auto id = yaml_unquote(inner.substr(0, comma)); !id.empty())
                    f.consolidated_from.push_back(std::move(id));
                inner.remove_prefix(comma == std::string_view::npos ? inner.size() : comma + 1);
            }
        } else if (key == "status")
            status = yaml_unquote(raw);
        else if (key == "expected_valid_days") {
            try {
                f.expected_valid_days = std::stoll(std::string(raw));
            } catch (...) {
            }
        } else if (key == "source") {
            if (raw.starts_with('{')) {
                std::string_view inner = raw.substr(1, raw.size() >= 2 ? raw.size() - 2 : 0);
                std::string type, thread;
                // Split at ", " outside quotes.
                std::vector<std::string> parts;
                std::string cur;
                bool quoted = false;
                for (char c : inner) {
                    if (c == '\'') quoted = !quoted;
                    if (c == ',' && !quoted) {
                        parts.push_back(cur);
                        cur.clear();
                    } else
                        cur += c;
                }
                parts.push_back(cur);
                for (const auto& p : parts) {
                    const auto c2 = p.find(':');
                    if (c2 == std::string::npos) continue;
                    const auto k = trim(std::string_view(p).substr(0, c2));
                    const auto v = yaml_unquote(std::string_view(p).substr(c2 + 1));
                    if (k == "type")
                        type = v;
                    else if (k == "threadId")
                        thread = v;
                }
                f.source_type = type.empty() ? "conversation" : type;
                f.source = !thread.empty() ? thread : (type.empty() ? "unknown" : type);
            } else {
                f.source = yaml_unquote(raw);
            }
        }
    }
    if (!has_id || !is_valid_fact_id(f.id)) throw fail("missing or invalid id");
    if (f.category == "other" && !f.category_extension.empty()) {
        f.category = f.category_extension;
        f.category_extension.clear();
    }
    // Body: "\n# title\n\ncontent\n".
    while (body.starts_with('\n'))
        body.remove_prefix(1);
    if (body.starts_with("# ")) {
        const auto nl = body.find('\n');
        body.remove_prefix(nl == std::string_view::npos ? body.size() : nl + 1);
        if (body.starts_with('\n')) body.remove_prefix(1);
    }
    if (body.ends_with('\n')) body.remove_suffix(1);
    f.content = std::string(body);
    if (status != "active") f.id.clear(); // archived: not part of the memory
    return f;
}

/// One flock'ed file per user plus an in-process mutex (flock does not exclude threads of one process).
class user_file_lock {
public:
    user_file_lock(std::mutex& m, const std::filesystem::path& file, std::chrono::milliseconds timeout)
        : guard_(m) {
        std::filesystem::create_directories(file.parent_path());
        fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd_ < 0) throw memory_storage_error(detail::format("cannot open lock file {}", file.string()));
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
            if (std::chrono::steady_clock::now() >= deadline) {
                ::close(fd_);
                throw memory_storage_error(
                    detail::format("timed out waiting for the memory lock {}", file.string()));
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    ~user_file_lock() {
        ::flock(fd_, LOCK_UN);
        ::close(fd_);
    }
    user_file_lock(const user_file_lock&) = delete;
    user_file_lock& operator=(const user_file_lock&) = delete;

private:
    std::lock_guard<std::mutex> guard_;
    int fd_ = -1;
};

inline boost::json::object summary_json(const memory_summary& s) {
    return boost::json::object{{"summary", s.summary}, {"updatedAt", s.updated_at}};
}

inline void read_summaries(const boost::json::object& doc, std::string_view group,
                           const std::array<std::string_view, 3>& keys, std::array<memory_summary, 3>& out,
                           const std::string& where) {
    const auto* g = doc.if_contains(group);
    if (!g || g->is_null()) return;
    if (!g->is_object())
        throw memory_storage_error(detail::format("{}: \"{}\" is not an object", where, group));
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const auto* s = g->get_object().if_contains(keys[i]);
        if (!s || !s->is_object()) continue;
        if (const auto* v = s->get_object().if_contains("summary"); v && v->is_string())
            out[i].summary = std::string(v->get_string());
        if (const auto* v = s->get_object().if_contains("updatedAt"); v && v->is_string())
            out[i].updated_at = std::string(v->get_string());
    }
}

inline memory_fact fact_from_v1(const boost::json::object& o) {
    memory_fact f;
    auto str = [&](std::string_view k) {
        const auto* v = o.if_contains(k);
        return v && v->is_string() ? std::string(v->get_string()) : std::string();
    };
    f.id = str("id");
    f.content = str("content");
    if (auto c = str("category"); !c.empty()) f.category = c;
    if (const auto* c = o.if_contains("confidence"); c && c->is_number())
        f.confidence = c->to_number<double>();
    f.created_at = str("createdAt");
    if (auto s = str("source"); !s.empty()) f.source = s;
    f.source_error = str("sourceError");
    return f;
}

} // namespace detail

/// A user's memory as DeerFlow's memory API shows it: version, revision,
/// lastUpdated, the summaries, and `facts` with each fact's source projected
/// back to a string (its thread id, or its source type).
inline boost::json::object memory_view(const user_memory& m) {
    boost::json::object user, history;
    for (std::size_t i = 0; i < 3; ++i) {
        user[memory_user_keys[i]] = detail::summary_json(m.user[i]);
        history[memory_history_keys[i]] = detail::summary_json(m.history[i]);
    }
    boost::json::array facts;
    for (const auto& f : m.facts) {
        boost::json::object o{{"id", f.id},
                              {"content", f.content},
                              {"category", f.category},
                              {"confidence", f.confidence},
                              {"createdAt", f.created_at},
                              {"source", f.source_type == "conversation" ? f.source : f.source_type}};
        if (!f.source_error.empty()) o["sourceError"] = f.source_error;
        if (!f.updated_at.empty()) o["updatedAt"] = f.updated_at;
        if (!f.last_confirmed_at.empty()) o["lastConfirmedAt"] = f.last_confirmed_at;
        if (f.confirmation_count > 0) o["confirmationCount"] = f.confirmation_count;
        facts.push_back(std::move(o));
    }
    return boost::json::object{
        {"version", "2.0"},        {"revision", m.revision},        {"lastUpdated", m.last_updated},
        {"user", std::move(user)}, {"history", std::move(history)}, {"facts", std::move(facts)}};
}

/// The files of DeerMem v2 under one root directory.
class memory_storage {
public:
    explicit memory_storage(std::filesystem::path root,
                            std::shared_ptr<memory_clock> clock = default_memory_clock(),
                            std::chrono::milliseconds lock_timeout = std::chrono::seconds(10))
        : root_(std::move(root)), clock_(std::move(clock)), lock_timeout_(lock_timeout) {}

    const std::filesystem::path& root() const noexcept { return root_; }

    std::filesystem::path user_dir(std::string_view user_id) const {
        detail::check_memory_user(user_id);
        return root_ / "users" / std::string(user_id);
    }
    std::filesystem::path memory_file(std::string_view user_id) const {
        return user_dir(user_id) / "memory.json";
    }
    std::filesystem::path facts_dir(std::string_view user_id, std::string_view agent) const {
        return user_dir(user_id) / "agents" / detail::memory_agent_dir(agent) / "facts";
    }
    std::filesystem::path fact_file(std::string_view user_id, std::string_view agent,
                                    std::string_view fact_id) const {
        if (!detail::is_valid_fact_id(fact_id))
            throw std::invalid_argument(
                detail::format("invalid fact id {}", detail::quoted_excerpt(fact_id, 64)));
        return facts_dir(user_id, agent) / detail::sha256_hex(fact_id).substr(0, 2) /
               (std::string(fact_id) + ".md");
    }

    /// The user's summaries and the agent's facts (oldest first). A missing
    /// file is an empty memory; a v1 file is migrated first (backup
    /// memory.json.v1.bak); a corrupt one throws memory_storage_error.
    user_memory load(std::string_view user_id, std::string_view agent_name) {
        const std::string agent = detail::memory_agent_dir(agent_name);
        detail::user_file_lock lock(mutex_for(user_id), user_dir(user_id) / ".lock", lock_timeout_);
        migrate_v1_locked(user_id, agent);
        return load_locked(user_id, agent);
    }

    /// Saves `m` (summaries, and the agent's facts as the complete list) if
    /// the stored revision is still m.revision; returns the new revision.
    std::int64_t save(std::string_view user_id, std::string_view agent_name, const user_memory& m) {
        const std::string agent = detail::memory_agent_dir(agent_name);
        detail::user_file_lock lock(mutex_for(user_id), user_dir(user_id) / ".lock", lock_timeout_);
        migrate_v1_locked(user_id, agent);
        const user_memory current = load_locked(user_id, agent);
        if (current.revision != m.revision)
            throw memory_revision_conflict(detail::format("memory of user {} changed (revision {} is now {})",
                                                          user_id, m.revision, current.revision));
        return write_locked(user_id, agent, m, current);
    }

private:
    std::mutex& mutex_for(std::string_view user_id) {
        std::lock_guard lock(map_mutex_);
        auto& p = user_mutexes_[std::string(user_id)];
        if (!p) p = std::make_unique<std::mutex>();
        return *p;
    }

    user_memory load_locked(std::string_view user_id, const std::string& agent) {
        user_memory m;
        const std::filesystem::path file = memory_file(user_id);
        if (auto text = detail::read_whole(file)) {
            boost::system::error_code ec;
            boost::json::value doc = boost::json::parse(*text, ec);
            if (ec || !doc.is_object())
                throw memory_storage_error(detail::format("{}: not a JSON object ({}); left untouched",
                                                          file.string(), ec ? ec.message() : "wrong type"));
            const auto& o = doc.get_object();
            if (const auto* r = o.if_contains("revision"); r && r->is_number())
                m.revision = r->to_number<std::int64_t>();
            if (const auto* l = o.if_contains("lastUpdated"); l && l->is_string())
                m.last_updated = std::string(l->get_string());
            detail::read_summaries(o, "user", memory_user_keys, m.user, file.string());
            detail::read_summaries(o, "history", memory_history_keys, m.history, file.string());
        }
        std::error_code ec;
        const auto dir = facts_dir(user_id, agent);
        if (std::filesystem::is_directory(dir, ec)) {
            std::vector<std::pair<std::string, memory_fact>> found;
            for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
                if (!e.is_regular_file() || e.path().extension() != ".md") continue;
                auto text = detail::read_whole(e.path());
                if (!text) continue;
                memory_fact f = detail::parse_fact_markdown(*text, e.path().string());
                if (f.id.empty()) continue;
                found.emplace_back(f.created_at + "\x1f" + f.id, std::move(f));
            }
            std::sort(found.begin(), found.end(),
                      [](const auto& a, const auto& b) { return a.first < b.first; });
            for (auto& [key, f] : found)
                m.facts.push_back(std::move(f));
        }
        return m;
    }

    std::int64_t write_locked(std::string_view user_id, const std::string& agent, const user_memory& m,
                              const user_memory& current) {
        const std::string now = detail::iso_utc(clock_->now());
        // 1. facts that are new or changed
        for (const auto& f : m.facts) {
            auto old = std::find_if(current.facts.begin(), current.facts.end(),
                                    [&](const memory_fact& c) { return c.id == f.id; });
            if (old != current.facts.end() && *old == f) continue;
            detail::atomic_write(fact_file(user_id, agent, f.id), detail::fact_markdown(f, user_id, agent));
        }
        // 2. memory.json, one revision up
        boost::json::object user, history;
        for (std::size_t i = 0; i < 3; ++i) {
            if (!m.user[i].summary.empty()) user[memory_user_keys[i]] = detail::summary_json(m.user[i]);
            if (!m.history[i].summary.empty())
                history[memory_history_keys[i]] = detail::summary_json(m.history[i]);
        }
        const std::int64_t revision = current.revision + 1;
        boost::json::object doc{{"version", "2.0"},
                                {"revision", revision},
                                {"lastUpdated", now},
                                {"user", std::move(user)},
                                {"history", std::move(history)}};
        detail::atomic_write(memory_file(user_id), boost::json::serialize(doc));
        // 3. facts that went
        for (const auto& c : current.facts)
            if (std::none_of(m.facts.begin(), m.facts.end(),
                             [&](const memory_fact& f) { return f.id == c.id; })) {
                std::error_code ec;
                std::filesystem::remove(fact_file(user_id, agent, c.id), ec);
            }
        return revision;
    }

    // A v1 file keeps its facts in memory.json: they move to Markdown files
    // (of the agent being loaded), the old file is kept as memory.json.v1.bak.
    void migrate_v1_locked(std::string_view user_id, const std::string& agent) {
        const std::filesystem::path file = memory_file(user_id);
        auto text = detail::read_whole(file);
        if (!text) return;
        boost::system::error_code ec;
        boost::json::value doc = boost::json::parse(*text, ec);
        if (ec || !doc.is_object()) return; // load reports it
        const auto& o = doc.get_object();
        const auto* version = o.if_contains("version");
        const bool v2 = version && version->is_string() && version->get_string().starts_with("2");
        const auto* facts = o.if_contains("facts");
        if (v2 && !facts) return;
        detail::atomic_write(file.string() + ".v1.bak", *text);
        user_memory m;
        detail::read_summaries(o, "user", memory_user_keys, m.user, file.string());
        detail::read_summaries(o, "history", memory_history_keys, m.history, file.string());
        if (facts && facts->is_array())
            for (const auto& f : facts->get_array())
                if (f.is_object()) {
                    memory_fact fact = detail::fact_from_v1(f.get_object());
                    if (!detail::is_valid_fact_id(fact.id) || detail::trim(fact.content).empty()) continue;
                    m.facts.push_back(std::move(fact));
                }
        // Facts first, then the v2 memory.json: a crash in between leaves the v1 file (and its backup).
        for (const auto& f : m.facts)
            detail::atomic_write(fact_file(user_id, agent, f.id), detail::fact_markdown(f, user_id, agent));
        user_memory before;
        before.facts = m.facts;
        write_locked(user_id, agent, m, before);
    }

    std::filesystem::path root_;
    std::shared_ptr<memory_clock> clock_;
    std::chrono::milliseconds lock_timeout_;
    std::mutex map_mutex_;
    std::map<std::string, std::unique_ptr<std::mutex>, std::less<>> user_mutexes_;
};

} // namespace agentware

#endif
