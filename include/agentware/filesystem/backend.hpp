#ifndef AGENTWARE_FILESYSTEM_BACKEND_HPP
#define AGENTWARE_FILESYSTEM_BACKEND_HPP

// Where the filesystem tools keep files (deepagents' BackendProtocol): the
// `filesystem_backend` concept, its result types, `sandbox_backend` (a
// backend that also runs commands), `any_backend` (any of them behind one
// type) and `backend_factory` (a backend chosen per call from the tool's
// runtime, as deepagents' callable backends are).
//
// Backends receive paths already validated by validate_path ("/a/b"), and
// report failures as values: `error` holds the text the tool shows after
// "Error: ". A backend that keeps its files in the agent state (state_backend)
// cannot change the state itself: its writes return `files_update`, the
// `files` state update the tool hands to the agent.

#include <agentware/detail/format.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/tool/tool.hpp>

#include <boost/json/object.hpp>

#include <fmt/chrono.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// A file or a directory as ls and glob report it (directories' paths end in "/" in ls).
struct fs_entry {
    std::string path;
    bool is_dir = false;
    std::uint64_t size = 0;
    std::string modified_at; ///< ISO 8601, when known
};

struct fs_ls_result {
    std::string error;
    std::vector<fs_entry> entries;
};

struct fs_read_result {
    std::string error;
    std::string content;
    std::string encoding = "utf-8"; ///< or "base64"
};

/// What write, edit, delete and mkdir report.
struct fs_write_result {
    std::string error;
    std::string path;
    std::size_t occurrences = 0; ///< edit: how many were replaced
    /// For backends in the agent state: the `files` update (path -> file data, null = deleted).
    std::optional<boost::json::object> files_update;
};

struct fs_glob_result {
    std::string error;
    std::vector<fs_entry> entries;
};

struct fs_grep_match {
    std::string path;
    std::size_t line = 0; ///< 1-based
    std::string text;
};

struct fs_grep_result {
    std::string error;
    std::vector<fs_grep_match> matches;
    bool truncated = false; ///< stopped at max_count
};

/// What a command run by a sandbox backend produced (deepagents' ExecuteResponse).
struct execute_response {
    std::string output;           ///< stdout then stderr
    std::optional<int> exit_code; ///< none when it could not run
    bool truncated = false;
};

/// A place the filesystem tools can list, read, write, edit, search and
/// delete files in. `grep` is a literal substring search (`glob_filter`
/// empty: every file) stopping after `max_count` matches.
template <class B>
concept filesystem_backend =
    requires(B& b, std::string_view path, std::string_view text, bool flag, std::size_t n) {
        { b.ls(path) } -> std::same_as<fs_ls_result>;
        { b.read(path) } -> std::same_as<fs_read_result>;
        { b.write(path, text) } -> std::same_as<fs_write_result>;
        { b.edit(path, text, text, flag) } -> std::same_as<fs_write_result>;
        { b.glob(text, path) } -> std::same_as<fs_glob_result>;
        { b.grep(text, path, text, n) } -> std::same_as<fs_grep_result>;
        { b.remove(path) } -> std::same_as<fs_write_result>;
        { b.mkdir(path) } -> std::same_as<fs_write_result>;
    };

/// A backend that also runs shell commands (deepagents' SandboxBackendProtocol):
/// with one, the filesystem middleware offers the `execute` tool.
template <class B>
concept sandbox_backend = filesystem_backend<B> && requires(B& b, std::string_view command,
                                                            std::optional<std::chrono::seconds> timeout) {
    { b.execute(command, timeout) } -> std::same_as<execute_response>;
};

namespace detail {

/// Counts non-overlapping occurrences of `needle` (not empty) in `hay`.
inline std::size_t count_occurrences(std::string_view hay, std::string_view needle) {
    std::size_t n = 0;
    for (std::size_t pos = hay.find(needle); pos != std::string_view::npos;
         pos = hay.find(needle, pos + needle.size()))
        ++n;
    return n;
}

/// The edit every backend applies (deepagents' perform_string_replacement):
/// `old_text` must occur exactly once unless `replace_all`. Returns the error
/// text (after "Error: "), or empty with `content` changed and `occurrences` set.
///
/// An empty `old_text` counts as Python's `str.count("")` does, once before
/// each code point and once at the end: on an empty file it occurs once (the
/// file becomes `new_text`), on a file of n code points n + 1 times (so it is
/// ambiguous unless `replace_all`, which puts `new_text` at every position).
inline std::string apply_edit(std::string& content, std::string_view old_text, std::string_view new_text,
                              bool replace_all, std::size_t& occurrences) {
    const std::size_t n =
        old_text.empty() ? detail::utf8_chars(content) + 1 : count_occurrences(content, old_text);
    if (n == 0) {
        const std::string_view stripped = old_text.substr(0, old_text.size() - 1);
        if (old_text.size() > 1 && old_text.back() == '\n' && content.ends_with(stripped)) {
            const std::size_t stripped_count = count_occurrences(content, stripped);
            if (stripped_count == 1)
                // Text kept for parity with deepagents (reference langchain.md §9).
                return "old_string ends with a newline, but the file does not end with a newline. Retry with "
                       "the trailing newline removed from old_string (and from new_string if it also ends "
                       "with "
                       "a newline).";
            // Text kept for parity with deepagents (backends/utils.py, perform_string_replacement).
            return detail::format(
                "old_string ends with a newline, but the file does not end with a newline. "
                "With the trailing newline removed, old_string would appear {} times in the "
                "file. Retry with the trailing newline removed and add surrounding context so "
                "the match is unique.",
                stripped_count);
        }
        // Text kept for parity with deepagents (reference langchain.md §9).
        return detail::format("String not found in file: '{}'", old_text);
    }
    if (n > 1 && !replace_all)
        // Text kept for parity with deepagents (reference langchain.md §9).
        return detail::format(
            "String '{}' appears {} times in file. Use replace_all=True to replace all instances, "
            "or provide a more specific string with surrounding context.",
            old_text, n);
    std::string out;
    out.reserve(content.size() + n * new_text.size());
    if (old_text.empty()) {
        // Only reached with one occurrence (an empty file) or replace_all.
        for (std::size_t i = 0; i < content.size(); ++i) {
            if ((static_cast<unsigned char>(content[i]) & 0xC0) != 0x80) out.append(new_text);
            out += content[i];
        }
        out.append(new_text);
    } else {
        std::size_t last = 0;
        for (std::size_t pos = content.find(old_text); pos != std::string::npos;
             pos = content.find(old_text, pos + old_text.size())) {
            out.append(content, last, pos - last);
            out.append(new_text);
            last = pos + old_text.size();
            if (!replace_all) break;
        }
        out.append(content, last, std::string::npos);
    }
    content = std::move(out);
    occurrences = n;
    return {};
}

// Text kept for parity with deepagents (reference langchain.md §9).
inline std::string file_not_found(std::string_view path) {
    return detail::format("File '{}' not found", path);
}

/// The literal search every backend runs over one file's text, appending at
/// most `budget` matches (lines containing `pattern`) to `out`. Returns
/// false when the budget ran out before the end of the text.
inline bool grep_text(std::string_view path, std::string_view text, std::string_view pattern,
                      std::vector<fs_grep_match>& out, std::size_t& budget) {
    if (pattern.empty()) return true;
    std::size_t line_no = 1, counted_to = 0, pos = 0;
    while ((pos = text.find(pattern, pos)) != std::string_view::npos) {
        line_no +=
            static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(counted_to),
                                                text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
        std::size_t begin = text.rfind('\n', pos);
        begin = begin == std::string_view::npos ? 0 : begin + 1;
        std::size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        if (budget == 0) return false;
        --budget;
        std::string_view line = text.substr(begin, end - begin);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        out.push_back(fs_grep_match{std::string(path), line_no, std::string(line)});
        counted_to = end;
        pos = end;
        if (end < text.size()) {
            ++line_no;
            counted_to = end + 1;
            pos = end + 1;
        } else {
            break;
        }
    }
    return true;
}

/// The current time as deepagents stores it (ISO 8601, UTC, microseconds).
inline std::string iso_now() {
    const auto now = std::chrono::system_clock::now();
    const auto secs = std::chrono::floor<std::chrono::seconds>(now);
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now - secs).count();
    return detail::format("{:%Y-%m-%dT%H:%M:%S}.{:06d}+00:00", secs, micros);
}

} // namespace detail

/// Any backend behind one type (what the middleware and the factories hand
/// around). `can_execute()` tells whether the backend inside is a sandbox.
class any_backend {
    struct iface {
        virtual ~iface() = default;
        virtual fs_ls_result ls(std::string_view) = 0;
        virtual fs_read_result read(std::string_view) = 0;
        virtual fs_write_result write(std::string_view, std::string_view) = 0;
        virtual fs_write_result edit(std::string_view, std::string_view, std::string_view, bool) = 0;
        virtual fs_glob_result glob(std::string_view, std::string_view) = 0;
        virtual fs_grep_result grep(std::string_view, std::string_view, std::string_view, std::size_t) = 0;
        virtual fs_write_result remove(std::string_view) = 0;
        virtual fs_write_result mkdir(std::string_view) = 0;
        virtual bool can_execute() const noexcept = 0;
        virtual execute_response execute(std::string_view, std::optional<std::chrono::seconds>) = 0;
    };
    template <class B>
    struct model final : iface {
        B b;
        explicit model(B x) : b(std::move(x)) {}
        fs_ls_result ls(std::string_view p) override { return b.ls(p); }
        fs_read_result read(std::string_view p) override { return b.read(p); }
        fs_write_result write(std::string_view p, std::string_view c) override { return b.write(p, c); }
        fs_write_result edit(std::string_view p, std::string_view o, std::string_view n, bool all) override {
            return b.edit(p, o, n, all);
        }
        fs_glob_result glob(std::string_view pat, std::string_view p) override { return b.glob(pat, p); }
        fs_grep_result grep(std::string_view pat, std::string_view p, std::string_view g,
                            std::size_t max) override {
            return b.grep(pat, p, g, max);
        }
        fs_write_result remove(std::string_view p) override { return b.remove(p); }
        fs_write_result mkdir(std::string_view p) override { return b.mkdir(p); }
        bool can_execute() const noexcept override {
            if constexpr (requires(const B& cb) { cb.can_execute(); })
                return b.can_execute();
            else
                return sandbox_backend<B>;
        }
        execute_response execute(std::string_view cmd, std::optional<std::chrono::seconds> t) override {
            if constexpr (sandbox_backend<B>)
                return b.execute(cmd, t);
            else
                return execute_response{"Execution not available for this backend.", std::nullopt, false};
        }
    };
    std::shared_ptr<iface> p_;

public:
    any_backend() = default;
    template <filesystem_backend B>
        requires(!std::same_as<std::decay_t<B>, any_backend>)
    any_backend(B b) : p_(std::make_shared<model<B>>(std::move(b))) {} // NOLINT: implicit on purpose

    explicit operator bool() const noexcept { return p_ != nullptr; }
    bool can_execute() const noexcept { return p_ && p_->can_execute(); }

    fs_ls_result ls(std::string_view p) { return p_->ls(p); }
    fs_read_result read(std::string_view p) { return p_->read(p); }
    fs_write_result write(std::string_view p, std::string_view c) { return p_->write(p, c); }
    fs_write_result edit(std::string_view p, std::string_view o, std::string_view n, bool all) {
        return p_->edit(p, o, n, all);
    }
    fs_glob_result glob(std::string_view pat, std::string_view p) { return p_->glob(pat, p); }
    fs_grep_result grep(std::string_view pat, std::string_view p, std::string_view g, std::size_t max) {
        return p_->grep(pat, p, g, max);
    }
    fs_write_result remove(std::string_view p) { return p_->remove(p); }
    fs_write_result mkdir(std::string_view p) { return p_->mkdir(p); }
    execute_response execute(std::string_view cmd, std::optional<std::chrono::seconds> t = std::nullopt) {
        return p_->execute(cmd, t);
    }
};

static_assert(filesystem_backend<any_backend>);

/// Chooses the backend of one call from the tool's runtime (its state, thread
/// and context): deepagents' `Callable[[ToolRuntime], BackendProtocol]`.
using backend_factory = std::function<any_backend(const tool_runtime&)>;

} // namespace agentware

#endif
