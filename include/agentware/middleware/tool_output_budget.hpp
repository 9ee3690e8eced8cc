#ifndef AGENTWARE_MIDDLEWARE_TOOL_OUTPUT_BUDGET_HPP
#define AGENTWARE_MIDDLEWARE_TOOL_OUTPUT_BUDGET_HPP

// tool_output_budget: a huge tool result does not flood the context
// (DeerFlow's ToolOutputBudgetMiddleware). A result longer than
// `externalize_min_chars` is saved under the thread's outputs
// (/mnt/user-data/outputs/.tool-results/{tool}-{id12}.{ext}) and replaced by a
// synopsis: its size and kind, a head and a tail sample, and where to read
// the rest with read_file. When it cannot be saved, a result longer than
// `fallback_max_chars` is cut to its head and tail instead. In every model
// request, tool messages of the history longer than `fallback_max_chars`
// are cut the same way (request only), and the `content` argument of a
// successful write_file call that a later read or change of the same path
// superseded is elided (request only; the newest `keep_recent_writes` stay).

#include <agentware/agent/requests.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/core/fields.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/detail/hash.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/detail/output_limits.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/message/id.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/ai_edit.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>
#include <agentware/thread/fields.hpp>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

struct tool_output_budget_options {
    std::size_t externalize_min_chars = 12000; ///< results longer than this are saved and summarised
    std::size_t preview_head_chars = 2000;
    std::size_t preview_tail_chars = 1000;
    std::size_t fallback_max_chars = 30000; ///< when saving fails: results longer than this are cut
    std::size_t fallback_head_chars = 8000;
    std::size_t fallback_tail_chars = 3000;
    std::string storage_subdir = ".tool-results"; ///< under the thread's outputs directory
    std::vector<std::string> exempt_tools{"read_file", "read_file_tool"};
    std::map<std::string, std::size_t, std::less<>> tool_overrides; ///< per-tool externalize_min_chars
    bool elide_superseded_writes = true;           ///< request only: superseded write_file content is elided
    std::size_t superseded_write_min_chars = 2000; ///< shorter content stays (0: any non-empty content)
    std::size_t keep_recent_writes = 1; ///< the newest successful writes (all paths) keep their content

    static constexpr std::string_view config_section = "tool_output";
    friend bool operator==(const tool_output_budget_options&, const tool_output_budget_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                       const tool_output_budget_options& o) {
    boost::json::array exempt;
    for (const auto& t : o.exempt_tools)
        exempt.emplace_back(t);
    boost::json::object overrides;
    for (const auto& [k, v] : o.tool_overrides)
        overrides[k] = v;
    jv = boost::json::object{{"externalize_min_chars", o.externalize_min_chars},
                             {"preview_head_chars", o.preview_head_chars},
                             {"preview_tail_chars", o.preview_tail_chars},
                             {"fallback_max_chars", o.fallback_max_chars},
                             {"fallback_head_chars", o.fallback_head_chars},
                             {"fallback_tail_chars", o.fallback_tail_chars},
                             {"storage_subdir", o.storage_subdir},
                             {"exempt_tools", std::move(exempt)},
                             {"tool_overrides", std::move(overrides)},
                             {"elide_superseded_writes", o.elide_superseded_writes},
                             {"superseded_write_min_chars", o.superseded_write_min_chars},
                             {"keep_recent_writes", o.keep_recent_writes}};
}
inline tool_output_budget_options tag_invoke(boost::json::value_to_tag<tool_output_budget_options>,
                                             const boost::json::value& jv) {
    json_reader r(jv, std::string(tool_output_budget_options::config_section));
    tool_output_budget_options o;
    r.read("externalize_min_chars", o.externalize_min_chars)
        .read("preview_head_chars", o.preview_head_chars)
        .read("preview_tail_chars", o.preview_tail_chars)
        .read("fallback_max_chars", o.fallback_max_chars)
        .read("fallback_head_chars", o.fallback_head_chars)
        .read("fallback_tail_chars", o.fallback_tail_chars)
        .read("storage_subdir", o.storage_subdir)
        .read("exempt_tools", o.exempt_tools)
        .read("tool_overrides", o.tool_overrides)
        .read("elide_superseded_writes", o.elide_superseded_writes)
        .read("superseded_write_min_chars", o.superseded_write_min_chars)
        .read("keep_recent_writes", o.keep_recent_writes)
        .reject_unknown_keys();
    if (o.storage_subdir.empty() || o.storage_subdir.find("..") != std::string::npos ||
        o.storage_subdir.front() == '/')
        throw json_error(r.path_of("storage_subdir"), "must be a relative directory name without \"..\"");
    return o;
}

namespace detail {

/// The first `head` and last `tail` code points of `text` with a note of what
/// was left out between them (text of at most head + tail code points comes back whole).
inline std::string head_tail_cut(std::string_view text, std::size_t head, std::size_t tail) {
    const std::size_t chars = utf8_chars(text);
    if (chars <= head + tail) return std::string(text);
    const std::size_t head_end = utf8_offset(text, head);
    const std::size_t tail_start = utf8_offset(text, chars - tail);
    return detail::format("{}\n\n... [{} characters omitted] ...\n\n{}", text.substr(0, head_end),
                          chars - head - tail, text.substr(tail_start));
}

/// What kind of text a result is: "json", "text", or "binary" (not UTF-8, or NUL bytes).
inline std::string_view result_kind(std::string_view text) {
    if (!is_utf8_text(text) || text.find('\0') != std::string_view::npos) return "binary";
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
        boost::system::error_code ec;
        (void)boost::json::parse(text, ec);
        if (!ec) return "json";
    }
    return "text";
}

/// A path argument normalised lexically, as POSIX normpath does ("a//b/./c/" is
/// "a/b/c"; ".." steps back over a name; "" is ".").
inline std::string normalized_posix_path(std::string_view p) {
    const bool absolute = !p.empty() && p.front() == '/';
    std::vector<std::string_view> parts;
    std::size_t i = 0;
    while (i <= p.size()) {
        std::size_t j = p.find('/', i);
        if (j == std::string_view::npos) j = p.size();
        const std::string_view part = p.substr(i, j - i);
        if (part == "..") {
            if (!parts.empty() && parts.back() != "..")
                parts.pop_back();
            else if (!absolute)
                parts.push_back(part);
        } else if (!part.empty() && part != ".") {
            parts.push_back(part);
        }
        i = j + 1;
    }
    std::string out = absolute ? "/" : "";
    for (std::size_t k = 0; k < parts.size(); ++k) {
        if (k) out += '/';
        out += parts[k];
    }
    return out.empty() ? "." : out;
}

} // namespace detail

struct tool_output_budget {
    using state_fields = fields<thread_data_field>;

    tool_output_budget_options options;

    tool_output_budget() = default;
    explicit tool_output_budget(tool_output_budget_options o) : options(std::move(o)) {}

    std::size_t threshold_for(std::string_view tool) const {
        if (auto it = options.tool_overrides.find(tool); it != options.tool_overrides.end())
            return it->second;
        return options.externalize_min_chars;
    }
    bool exempt(std::string_view tool) const {
        return std::find(options.exempt_tools.begin(), options.exempt_tools.end(), tool) !=
               options.exempt_tools.end();
    }

    auto wrap_tool_call(auto& req, auto&& next) -> decltype(next(req)) {
        if (exempt(req.call->name)) return next(req);
        std::optional<thread_paths> td;
        if (req.state)
            if (const auto& t = get<thread_data_field>(*req.state)) td = *t;
        return map_response(req, next, [this, td = std::move(td)](tool_response r) {
            apply(r.msg, td ? &*td : nullptr);
            return r;
        });
    }

    /// Oversized tool messages of the history are cut in the request, and the
    /// content of superseded writes is elided there.
    auto wrap_model_call(auto& req, auto&& next) -> decltype(next(req)) {
        cut_history(req);
        if (options.elide_superseded_writes) elide_superseded_writes(req);
        return next(req);
    }

    // Text kept for parity with DeerFlow's ToolOutputBudgetMiddleware
    static constexpr std::string_view elided_write_format =
        "[content elided: {} chars; this write_file call succeeded and the file was read or modified again "
        "afterwards, so the on-disk file is the current version; call read_file on its path to see it]";

    /// What the history holds about file calls, kept per run and extended by
    /// the messages new since the last request (rebuilt when the request's
    /// history is not the one indexed: summarised, edited or without ids).
    struct write_index {
        struct write {
            std::size_t msg;  ///< the ai message holding the call
            std::size_t call; ///< the call's position in it
            std::string path;
            std::size_t chars; ///< of its content (0 when not a string)
        };
        struct pending_call {
            std::size_t msg;
            std::size_t call;
            std::string name;
            std::string path;
        };
        std::size_t scanned = 0;
        std::string first_id, last_id; ///< of messages 0 and scanned-1, to check the prefix
        std::map<std::string, pending_call, std::less<>> pending; ///< by call id, awaiting their result
        std::vector<write> writes; ///< successful write_file calls, oldest first
        std::map<std::string, std::size_t, std::less<>>
            latest_touch; ///< path -> message of its newest successful touch

        void add(std::span<const message> view, std::size_t from) {
            for (std::size_t i = from; i < view.size(); ++i) {
                const message& m = view[i];
                if (m.is_ai()) {
                    for (std::size_t k = 0; k < m.tool_calls.size(); ++k) {
                        const tool_call& c = m.tool_calls[k];
                        if (c.name != "write_file" && c.name != "str_replace" && c.name != "read_file")
                            continue;
                        const auto* p = c.args.if_contains("path");
                        if (!p || !p->is_string() || p->get_string().empty()) continue;
                        pending[c.id] = {i, k, c.name, detail::normalized_posix_path(p->get_string())};
                    }
                } else if (m.is_tool() && !pending.empty()) {
                    auto it = pending.find(m.tool_call_id());
                    if (it == pending.end()) continue;
                    pending_call pc = std::move(it->second);
                    pending.erase(it);
                    if (m.is_error()) continue; // a failed call changed and showed nothing
                    if (pc.name == "write_file") {
                        std::size_t chars = 0;
                        if (const auto* c = view[pc.msg].tool_calls[pc.call].args.if_contains("content"))
                            if (c->is_string()) chars = detail::utf8_chars(c->get_string());
                        writes.push_back({pc.msg, pc.call, pc.path, chars});
                    }
                    auto& t = latest_touch[pc.path];
                    t = std::max(t, pc.msg);
                }
            }
        }
    };

    /// Elides, in the request only, the content of each successful write_file
    /// call that a successful read_file, write_file or str_replace of the same
    /// path in a later message superseded, unless it is among the
    /// `keep_recent_writes` newest successful writes or shorter than
    /// `superseded_write_min_chars`.
    void elide_superseded_writes(auto& req) const {
        const std::span<const message> view = req.messages;
        struct plan {
            std::size_t msg, call, chars;
        };
        std::vector<plan> todo;
        auto decide = [&](const write_index& ix) {
            const std::size_t n = ix.writes.size();
            const std::size_t cutoff = n > options.keep_recent_writes ? n - options.keep_recent_writes : 0;
            for (std::size_t w = 0; w < cutoff; ++w) {
                const auto& wr = ix.writes[w];
                if (wr.chars == 0 || wr.chars < options.superseded_write_min_chars) continue;
                auto t = ix.latest_touch.find(wr.path);
                if (t == ix.latest_touch.end() || t->second <= wr.msg) continue;
                todo.push_back({wr.msg, wr.call, wr.chars});
            }
        };
        const bool cacheable = req.rt != nullptr && !view.empty() && !view.front().id.empty();
        if (!cacheable) {
            write_index ix;
            ix.add(view, 0);
            decide(ix);
        } else {
            const detail::run_key key = detail::run_key::of(*req.rt);
            std::lock_guard lock(cache_->mutex);
            auto it = cache_->runs.find(key);
            if (it == cache_->runs.end()) {
                if (cache_->runs.size() >= max_indexed_runs) cache_->runs.erase(cache_->runs.begin());
                it = cache_->runs.emplace(key, write_index{}).first;
            }
            write_index& ix = it->second;
            const bool same_prefix = ix.scanned > 0 && ix.scanned <= view.size() &&
                                     view.front().id == ix.first_id &&
                                     view[ix.scanned - 1].id == ix.last_id && !ix.last_id.empty();
            if (!same_prefix) ix = write_index{};
            ix.add(view, ix.scanned);
            ix.scanned = view.size();
            ix.first_id = view.front().id;
            ix.last_id = view.back().id;
            decide(ix);
        }
        if (todo.empty()) return;
        auto& msgs = req.messages.edit();
        for (const plan& p : todo) {
            auto& args = msgs[p.msg].tool_calls[p.call].args;
            // Text kept for parity with DeerFlow's ToolOutputBudgetMiddleware
            args["content"] = detail::format(elided_write_format, p.chars);
        }
    }

    void cut_history(auto& req) const {
        const auto& msgs = req.messages;
        for (std::size_t i = 0; i < msgs.size(); ++i) {
            const message& m = msgs[i];
            if (!m.is_tool() || exempt(m.name)) continue;
            std::size_t bytes = 0;
            for (const auto& b : m.content)
                bytes += b.text.size();
            if (bytes <= options.fallback_max_chars)
                continue; // fewer bytes than the limit: fewer characters too
            const std::string text = m.text();
            if (detail::utf8_chars(text) <= options.fallback_max_chars) continue;
            message& e = req.messages.edit()[i];
            e.content = detail::text_content(
                detail::head_tail_cut(text, options.fallback_head_chars, options.fallback_tail_chars));
        }
    }

    /// Externalises or cuts one tool result in place; the outcome ("externalized",
    /// "truncated" or "" when untouched) is also stamped into metadata["tool_output"].
    std::string apply(message& m, const thread_paths* td) const {
        std::size_t bytes = 0;
        for (const auto& b : m.content)
            bytes += b.text.size();
        const std::size_t limit = threshold_for(m.name);
        if (bytes <= limit) return {};
        const std::string text = m.text();
        const std::size_t chars = detail::utf8_chars(text);
        if (chars <= limit) return {};
        const std::string_view kind = detail::result_kind(text);
        if (td) {
            if (auto saved = save(text, m.name, kind, *td)) {
                m.content = detail::text_content(synopsis(text, chars, kind, m.name, *saved));
                m.metadata["tool_output"] =
                    boost::json::object{{"externalized", true}, {"path", *saved}, {"original_chars", chars}};
                return "externalized";
            }
        }
        if (chars <= options.fallback_max_chars) return {};
        m.content = detail::text_content(
            kind == "binary"
                ? detail::format("[binary output of {} bytes omitted: it could not be saved]", text.size())
                : detail::head_tail_cut(text, options.fallback_head_chars, options.fallback_tail_chars));
        m.metadata["tool_output"] = boost::json::object{{"truncated", true}, {"original_chars", chars}};
        return "truncated";
    }

    /// Saves the result; its virtual path, or nullopt when it could not be written.
    std::optional<std::string> save(std::string_view text, std::string_view tool, std::string_view kind,
                                    const thread_paths& td) const {
        namespace fs = std::filesystem;
        if (td.outputs_path.empty()) return std::nullopt;
        std::string safe_tool;
        for (char c : tool)
            safe_tool += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
        if (safe_tool.empty()) safe_tool = "tool";
        // Named by its content: the same output gives the same name on every run
        // (a replay reads back what the model read), and is kept once.
        const std::string id(detail::sha256_hex_digits(text).data(), 12);
        const std::string ext = kind == "json" ? "json" : kind == "binary" ? "bin" : "txt";
        const std::string name = detail::format("{}-{}.{}", safe_tool, id, ext);
        std::error_code ec;
        const fs::path dir = fs::path(td.outputs_path) / options.storage_subdir;
        fs::create_directories(dir, ec);
        if (ec) return std::nullopt;
        {
            std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
            if (!out) return std::nullopt;
            out.write(text.data(), static_cast<std::streamsize>(text.size()));
            if (!out) return std::nullopt;
        }
        return detail::format("{}/{}/{}", detail::virtual_outputs, options.storage_subdir, name);
    }

    /// The text that replaces an externalised result (our wording; see the docs page).
    std::string synopsis(std::string_view text, std::size_t chars, std::string_view kind,
                         std::string_view tool, std::string_view path) const {
        std::string out =
            detail::format("[Tool output saved] The {} result is {} characters of {} — too large to show "
                           "in full. The complete output is at {}.\n",
                           tool, chars,
                           kind == "json"     ? "JSON"
                           : kind == "binary" ? "binary data"
                                              : "text",
                           path);
        if (kind != "binary") {
            const std::size_t head_end = detail::utf8_offset(text, options.preview_head_chars);
            const std::size_t tail_start = detail::utf8_offset(
                text, chars > options.preview_tail_chars ? chars - options.preview_tail_chars : 0);
            out += detail::format("\n--- first {} characters ---\n{}\n", options.preview_head_chars,
                                  text.substr(0, head_end));
            if (options.preview_tail_chars > 0)
                out += detail::format("\n--- last {} characters ---\n{}\n", options.preview_tail_chars,
                                      text.substr(std::max(tail_start, head_end)));
        }
        out += detail::format(
            "\nTo see more, call read_file with path \"{}\" and a start_line/end_line range.", path);
        return out;
    }

private:
    static constexpr std::size_t max_indexed_runs = 256; // abandoned runs are dropped oldest first
    struct index_cache {
        std::mutex mutex;
        std::map<detail::run_key, write_index> runs;
    };
    std::shared_ptr<index_cache> cache_ = std::make_shared<index_cache>();
};

} // namespace agentware

#endif
