#ifndef AGENTWARE_MIDDLEWARE_READ_BEFORE_WRITE_HPP
#define AGENTWARE_MIDDLEWARE_READ_BEFORE_WRITE_HPP

// read_before_write: the model may change an existing file only if it has
// read the file's current version (DeerFlow's ReadBeforeWriteMiddleware).
// Every successful read_file result carries a read mark, the file's path and
// the SHA-256 of its whole current content (also for a ranged read). A
// write_file or str_replace on an existing file is refused, with DeerFlow's
// text, unless the newest read mark for that path matches the file as it is
// now; since every write changes the hash, every write needs a fresh read.
// New files, files that cannot be read, and reads that failed let the call
// through (fail open).
//
// One gate per (thread, path): the check, the tool and the mark happen under
// it, so a write cannot slip between a parallel read and its mark. In the
// blocking loop it is a mutex (striped); in the coroutine loop an
// asynchronous lock (detail/async_gates.hpp), held across the tool's
// suspension while a waiting coroutine holds no thread. Its
// wrap_tool_call must stand outside tool_error_handling's (it lists
// tool_error_handling in `must_come_before`).
//
// A refusal carries metadata["deerflow_write_block"] = {path, tool}. In every
// model request (wrap_model_call) the payload arguments of the calls so
// refused (write_file `content`, str_replace `old_str`/`new_str`) of at least
// `elide_min_chars` characters become a short placeholder: the call never ran
// and must be made again after a read. Only the request's copy changes; the
// stored messages keep the arguments. Which calls were refused is kept in an
// index per thread that scans only the messages added since the last request.

#include <agentware/agent/requests.hpp>
#include <agentware/core/fields.hpp>
#include <agentware/core/type_list.hpp>
#include <agentware/detail/awaitable.hpp>
#include <agentware/detail/hash.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/async_gates.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>
#include <agentware/thread/fields.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace agentware {

struct tool_error_handling;

struct read_before_write_options {
    std::string read_tool = "read_file";
    std::vector<std::string> write_tools{"write_file", "str_replace"};
    std::string mark_key = "deerflow_read_mark"; ///< where the read mark goes in the message metadata
    bool elide_blocked_payloads = true; ///< model requests carry a placeholder for refused calls' payloads
    std::size_t elide_min_chars =
        2000; ///< shortest payload elided, in characters; 0 elides every non-empty one

    static constexpr std::string_view config_section = "read_before_write";
    friend bool operator==(const read_before_write_options&, const read_before_write_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                       const read_before_write_options& o) {
    boost::json::array w;
    for (const auto& t : o.write_tools)
        w.emplace_back(t);
    jv = boost::json::object{{"read_tool", o.read_tool},
                             {"write_tools", std::move(w)},
                             {"mark_key", o.mark_key},
                             {"elide_blocked_payloads", o.elide_blocked_payloads},
                             {"elide_min_chars", o.elide_min_chars}};
}
inline read_before_write_options tag_invoke(boost::json::value_to_tag<read_before_write_options>,
                                            const boost::json::value& jv) {
    json_reader r(jv, std::string(read_before_write_options::config_section));
    read_before_write_options o;
    r.read("read_tool", o.read_tool).read("write_tools", o.write_tools).read("mark_key", o.mark_key);
    r.read("elide_blocked_payloads", o.elide_blocked_payloads).read("elide_min_chars", o.elide_min_chars);
    r.reject_unknown_keys();
    return o;
}

namespace detail {

/// Python's os.path.normpath for the paths models send.
inline std::string normalize_model_path(std::string_view p) {
    if (p.empty()) return ".";
    std::string s = std::filesystem::path(std::string(p)).lexically_normal().generic_string();
    while (s.size() > 1 && s.back() == '/')
        s.pop_back();
    return s.empty() ? "." : s;
}

/// The whole file, or nullopt when it cannot be read.
inline std::optional<std::string> slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) return std::nullopt;
    return std::move(ss).str();
}

/// Which tool calls of a history a read_before_write refusal answered, kept
/// up to date one request after the other: only the messages added since the
/// last scan are read. Calls and results pair per occurrence (the k-th call
/// with an id gets the k-th result with that id: ids may repeat across
/// turns). A history that no longer starts with the messages scanned (edited,
/// summarised) is scanned again from the start.
class blocked_call_index {
public:
    struct call_at {
        std::size_t message;
        std::size_t call;
        std::string id;
    };

    /// The refused calls of `ms`, after reading its new messages.
    const std::vector<call_at>& update(const std::vector<message>& ms, std::string_view block_key) {
        if (!continues(ms)) reset();
        for (; scanned_ < ms.size(); ++scanned_)
            add(ms[scanned_], scanned_, block_key);
        if (!ms.empty()) {
            first_id_ = ms.front().id;
            last_id_ = ms.back().id;
        }
        for (const auto& b : blocked_)
            if (b.message >= ms.size() || b.call >= ms[b.message].tool_calls.size() ||
                ms[b.message].tool_calls[b.call].id != b.id) {
                reset(); // positions moved under the same ids: start over
                return update(ms, block_key);
            }
        return blocked_;
    }

private:
    struct occurrences {
        std::vector<std::pair<std::size_t, std::size_t>> calls; // (message, call) in history order
        std::vector<bool> refused;                              // per result, in history order
    };

    bool continues(const std::vector<message>& ms) const {
        if (scanned_ == 0) return true;
        if (ms.size() < scanned_ || first_id_.empty() || last_id_.empty()) return false;
        return ms.front().id == first_id_ && ms[scanned_ - 1].id == last_id_;
    }
    void reset() {
        scanned_ = 0;
        first_id_.clear();
        last_id_.clear();
        by_id_.clear();
        blocked_.clear();
    }
    void add(const message& m, std::size_t at, std::string_view block_key) {
        if (m.is_ai()) {
            for (std::size_t c = 0; c < m.tool_calls.size(); ++c) {
                const std::string& id = m.tool_calls[c].id;
                if (id.empty()) continue;
                occurrences& o = by_id_[id];
                const std::size_t k = o.calls.size();
                o.calls.emplace_back(at, c);
                if (k < o.refused.size() && o.refused[k]) blocked_.push_back({at, c, id});
            }
        } else if (m.is_tool()) {
            const std::string id(m.tool_call_id());
            if (id.empty()) return;
            occurrences& o = by_id_[id];
            const std::size_t k = o.refused.size();
            const auto* mark = m.metadata.if_contains(block_key);
            const bool refused = mark != nullptr && mark->is_object();
            o.refused.push_back(refused);
            if (refused && k < o.calls.size()) blocked_.push_back({o.calls[k].first, o.calls[k].second, id});
        }
    }

    std::size_t scanned_ = 0;
    std::string first_id_, last_id_;
    std::unordered_map<std::string, occurrences> by_id_;
    std::vector<call_at> blocked_;
};

/// The per-thread indexes of one read_before_write.
struct blocked_call_indexes {
    std::mutex mutex;
    std::unordered_map<std::string, blocked_call_index> threads;
};

} // namespace detail

struct read_before_write {
    using state_fields = fields<thread_data_field>;
    /// Its wrap_tool_call stands outside tool_error_handling's.
    using must_come_before = type_list<tool_error_handling>;

    // Text kept for parity with DeerFlow (reference §5.16i).
    static constexpr std::string_view blocked_format =
        "Error: {} blocked — {} already exists and you have not read its current version. Any write "
        "invalidates "
        "earlier reads, so re-read before every modification. Call read_file on it (a ranged read of the "
        "relevant section is enough, e.g. the last ~30 lines before an append), check what is already there, "
        "then retry.";

    // Text kept for parity with DeerFlow's ReadBeforeWriteMiddleware
    static constexpr std::string_view elided_format =
        "[payload elided: {} chars; this {} call was blocked by the "
        "read-before-write gate and nothing was written]";
    /// Where a refusal is marked in its tool message's metadata: {path, tool}.
    static constexpr std::string_view write_block_key = "deerflow_write_block";

    read_before_write() : read_before_write(read_before_write_options{}) {}
    explicit read_before_write(read_before_write_options o)
        : options_(std::move(o)), gates_(std::make_shared<std::array<std::mutex, 128>>()),
          async_gates_(std::make_shared<detail::async_gates>()),
          indexes_(std::make_shared<detail::blocked_call_indexes>()) {}

    const read_before_write_options& options() const noexcept { return options_; }

    /// The payloads of refused calls become placeholders in the request (its
    /// copy only; the stored messages keep them).
    auto wrap_model_call(auto& req, auto&& next) -> decltype(next(req)) {
        if (options_.elide_blocked_payloads) elide(req);
        return next(req);
    }

    /// The payload arguments of a gated tool: what a refusal makes dead weight.
    static std::vector<std::string_view> payload_fields(std::string_view tool) {
        if (tool == "write_file") return {"content"};
        if (tool == "str_replace") return {"old_str", "new_str"};
        return {};
    }

    auto wrap_tool_call(auto& req, auto&& next) -> decltype(next(req)) {
        const std::string& name = req.call->name;
        const bool is_read = name == options_.read_tool;
        const bool is_write = std::find(options_.write_tools.begin(), options_.write_tools.end(), name) !=
                              options_.write_tools.end();
        if (!is_read && !is_write) return next(req);
        const auto* p = req.call->args.if_contains("path");
        if (!p || !p->is_string()) return next(req);
        const std::string path = detail::normalize_model_path(p->get_string());
        std::optional<std::filesystem::path> host = host_path(req, path);
        if (!host) return next(req); // not a sandbox path: the tool will say so

        using R = decltype(next(req));
        const std::string thread = req.rt ? req.rt->thread_id : std::string();
        if constexpr (detail::is_awaitable_v<R>) {
            // The same gate, asynchronous: held across the tool's suspension, no thread waiting for it.
            return gated_awaited<R>(req, next, is_read, is_write, std::string(name), path, std::move(*host),
                                    thread + '\0' + path);
        } else {
            std::lock_guard lock(gate(thread, path));
            if (is_write) {
                if (auto refusal = check_write(req, name, path, *host)) return std::move(*refusal);
                return next(req);
            }
            tool_response r = next(req);
            mark(r, path, *host);
            return r;
        }
    }

    /// The hash of the newest read mark for `path` in `messages`, if any.
    std::optional<std::string> newest_mark(const auto& messages, std::string_view path) const {
        for (std::size_t i = messages.size(); i > 0; --i) {
            const message& m = messages[i - 1];
            if (!m.is_tool()) continue;
            const auto* mk = m.metadata.if_contains(options_.mark_key);
            if (!mk || !mk->is_object()) continue;
            const auto* mp = mk->get_object().if_contains("path");
            const auto* mh = mk->get_object().if_contains("hash");
            if (mp && mh && mp->is_string() && mh->is_string() && mp->get_string() == path)
                return std::string(mh->get_string());
        }
        return std::nullopt;
    }

private:
    template <class Req>
    void elide(Req& req) const {
        const std::vector<message>& ms = req.messages.get();
        if (ms.empty()) return;
        std::vector<detail::blocked_call_index::call_at> refused;
        {
            std::lock_guard lock(indexes_->mutex);
            auto& threads = indexes_->threads;
            const std::string key = req.rt ? req.rt->thread_id : std::string();
            if (threads.size() >= 1024 && !threads.contains(key)) threads.clear(); // bound the memory
            refused = threads[key].update(ms, write_block_key);
        }
        for (const auto& at : refused) {
            const tool_call& tc = ms[at.message].tool_calls[at.call];
            for (std::string_view field : payload_fields(tc.name)) {
                const auto* v = req.messages.get()[at.message].tool_calls[at.call].args.if_contains(field);
                if (!v || !v->is_string() || v->get_string().empty()) continue;
                const std::size_t chars = detail::utf8_chars(v->get_string());
                if (chars < options_.elide_min_chars) continue;
                std::string text = fmt::format(fmt::runtime(elided_format), chars, tc.name);
                req.messages.edit()[at.message].tool_calls[at.call].args[field] = std::move(text);
            }
        }
    }

    // The coroutine form: request and continuation copied into the frame
    // (it may outlive the caller's), the gate held from the check to the mark.
    template <class R, class Req, class Next>
    R gated_awaited(Req req, Next next, bool is_read, bool is_write, std::string tool, std::string path,
                    std::filesystem::path host, std::string key) const {
        const std::shared_ptr<detail::async_gates> gates = async_gates_;
        const auto held = co_await gates->acquire<typename R::executor_type>(std::move(key));
        if (is_write)
            if (auto refusal = check_write(req, tool, path, host)) co_return std::move(*refusal);
        tool_response r = co_await next(req);
        if (is_read) mark(r, path, host);
        co_return r;
    }

    template <class Req>
    static std::optional<std::filesystem::path> host_path(const Req& req, const std::string& path) {
        if (!req.state) return std::nullopt;
        const auto& td = get<thread_data_field>(*req.state);
        if (!td) return std::nullopt;
        auto resolved = detail::resolve_model_path(path, &*td, detail::path_access::read);
        if (!resolved.ok()) return std::nullopt;
        return resolved.host;
    }

    std::mutex& gate(std::string_view thread, std::string_view path) const {
        const std::size_t h = std::hash<std::string_view>{}(thread)*31 + std::hash<std::string_view>{}(path);
        return (*gates_)[h % gates_->size()];
    }

    template <class Req>
    std::optional<tool_response> check_write(const Req& req, const std::string& tool, const std::string& path,
                                             const std::filesystem::path& host) const {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(host, ec)) return std::nullopt; // a new file
        const auto content = detail::slurp(host);
        if (!content) return std::nullopt; // unreadable: fail open
        const std::string current = detail::sha256_hex(*content);
        const auto seen = newest_mark(req.state->messages, path);
        if (seen && *seen == current) return std::nullopt;
        message m = tool_message(req.call->id, tool, fmt::format(fmt::runtime(blocked_format), tool, path),
                                 tool_status::error);
        m.metadata[write_block_key] = boost::json::object{{"path", path}, {"tool", tool}};
        return tool_response{std::move(m), {}, false};
    }

    void mark(tool_response& r, const std::string& path, const std::filesystem::path& host) const {
        if (r.msg.is_error() || std::string_view(r.msg.text()).starts_with("Error:")) return;
        const auto content = detail::slurp(host);
        if (!content) return;
        std::string hash = detail::sha256_hex(*content);
        r.msg.metadata[options_.mark_key] = boost::json::object{{"path", path}, {"hash", std::move(hash)}};
    }

    read_before_write_options options_;
    std::shared_ptr<std::array<std::mutex, 128>> gates_; // the blocking loop's, striped
    std::shared_ptr<detail::async_gates> async_gates_;   // the coroutine loop's, one per (thread, path) held
    std::shared_ptr<detail::blocked_call_indexes>
        indexes_; // refused calls per thread, for the model requests
};

} // namespace agentware

#endif
