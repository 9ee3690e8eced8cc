#ifndef AGENTWARE_MIDDLEWARE_FILESYSTEM_HPP
#define AGENTWARE_MIDDLEWARE_FILESYSTEM_HPP

// filesystem: deepagents' FilesystemMiddleware. Offers the tools ls,
// read_file, write_file, edit_file, glob, grep, delete and mkdir over a
// backend (the agent state by default, see filesystem/), plus execute when
// the backend can run commands (hidden from the model otherwise). Every path
// goes through validate_path and the permission rules first. Tool results
// larger than the eviction limit are written to /large_tool_results/ and
// replaced by a preview; human messages larger than theirs go to
// /conversation_history/.
//
// The model-facing texts are deepagents 0.7.8's (reference langchain.md §9).

#include <agentware/agent/requests.hpp>
#include <agentware/agent/runtime.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/core/fields.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/filesystem/backend.hpp>
#include <agentware/filesystem/paths.hpp>
#include <agentware/filesystem/permissions.hpp>
#include <agentware/filesystem/state_backend.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/content.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/message/id.hpp>
#include <agentware/middleware/detail/hook_tool_runtime.hpp>
#include <agentware/middleware/detail/tool_args.hpp>
#include <agentware/state/basic_state.hpp>
#include <agentware/tool/make_tool.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// How read_file numbers lines: deepagents' current form (markers
/// right-aligned to the widest, two spaces) or the older `cat -n` form (six
/// columns and a tab, still deepagentsjs's).
enum class line_number_format { current, cat };

/// Settings of the filesystem middleware (deepagents' FilesystemMiddleware
/// arguments, snake_case as in Python).
struct filesystem_options {
    /// Tool results longer than 4 characters times this are evicted (unset: never).
    std::optional<std::size_t> tool_token_limit_before_evict = 20000;
    /// Human messages longer than 4 characters times this are evicted (unset: never).
    std::optional<std::size_t> human_message_token_limit_before_evict = 50000;
    /// execute's `timeout` may not exceed this.
    std::chrono::seconds max_execute_timeout = std::chrono::seconds(3600);
    /// grep stops after this many matches.
    std::size_t grep_max_count = 1000;
    /// When not empty, every path must start with one of these.
    std::vector<std::string> allowed_prefixes;
    /// Allow and deny rules, the first match deciding.
    std::vector<fs_permission> permissions;
    line_number_format read_file_format = line_number_format::current;
    /// Appended to the system prompt; unset: the built-in text; "": nothing.
    std::optional<std::string> system_prompt;
    /// Tool name -> description replacing the built-in one.
    std::map<std::string, std::string> custom_tool_descriptions;
    /// The tools to offer (empty: all); a list must contain read_file.
    std::vector<std::string> tools;

    static constexpr std::string_view config_section = "filesystem";
    friend bool operator==(const filesystem_options&, const filesystem_options&) = default;

    void validate() const {
        if (!tools.empty() && std::find(tools.begin(), tools.end(), "read_file") == tools.end())
            throw std::invalid_argument("tools: the list must contain read_file");
        static constexpr std::string_view known[] = {"ls",   "read_file", "write_file", "edit_file", "glob",
                                                     "grep", "delete",    "mkdir",      "execute"};
        for (const auto& t : tools)
            if (std::find(std::begin(known), std::end(known), t) == std::end(known))
                throw std::invalid_argument("tools: unknown tool \"" + t + "\"");
    }
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const filesystem_options& o) {
    boost::json::object out;
    out["tool_token_limit_before_evict"] =
        o.tool_token_limit_before_evict ? boost::json::value(*o.tool_token_limit_before_evict) : nullptr;
    out["human_message_token_limit_before_evict"] =
        o.human_message_token_limit_before_evict
            ? boost::json::value(*o.human_message_token_limit_before_evict)
            : nullptr;
    out["max_execute_timeout"] = o.max_execute_timeout.count();
    out["grep_max_count"] = o.grep_max_count;
    out["allowed_prefixes"] = boost::json::value_from(o.allowed_prefixes);
    out["permissions"] = boost::json::value_from(o.permissions);
    out["read_file_format"] = o.read_file_format == line_number_format::current ? "current" : "cat";
    out["system_prompt"] = o.system_prompt ? boost::json::value(*o.system_prompt) : nullptr;
    out["custom_tool_descriptions"] = boost::json::value_from(o.custom_tool_descriptions);
    out["tools"] = boost::json::value_from(o.tools);
    jv = std::move(out);
}

inline filesystem_options tag_invoke(boost::json::value_to_tag<filesystem_options>,
                                     const boost::json::value& jv) {
    json_reader r(jv, std::string(filesystem_options::config_section));
    filesystem_options o;
    // An explicit null switches eviction off, as None does in deepagents.
    if (const auto* v = r.object().if_contains("tool_token_limit_before_evict"); v && v->is_null())
        o.tool_token_limit_before_evict.reset();
    if (const auto* v = r.object().if_contains("human_message_token_limit_before_evict"); v && v->is_null())
        o.human_message_token_limit_before_evict.reset();
    r.read("tool_token_limit_before_evict", o.tool_token_limit_before_evict)
        .read("human_message_token_limit_before_evict", o.human_message_token_limit_before_evict)
        .read("max_execute_timeout", o.max_execute_timeout)
        .read("grep_max_count", o.grep_max_count)
        .read("allowed_prefixes", o.allowed_prefixes)
        .read("permissions", o.permissions)
        .choice("read_file_format", o.read_file_format,
                {{"current", line_number_format::current}, {"cat", line_number_format::cat}})
        .read("system_prompt", o.system_prompt)
        .read("custom_tool_descriptions", o.custom_tool_descriptions)
        .read("tools", o.tools)
        .reject_unknown_keys();
    r.validate(o);
    return o;
}

namespace detail {

inline constexpr std::size_t fs_chars_per_token = 4;
inline constexpr std::size_t fs_max_line_length = 5000;
inline constexpr std::size_t fs_preview_line_chars = 1000;

// Text kept for parity with deepagents (reference langchain.md §9).
inline constexpr std::string_view fs_results_truncated =
    "... [results truncated, try being more specific with your parameters]";
// Text kept for parity with deepagents (reference langchain.md §9).
inline constexpr std::string_view fs_no_files = "No files found";
// Text kept for parity with deepagents (reference langchain.md §9).
inline constexpr std::string_view fs_no_matches = "No matches found";
// Text kept for parity with deepagents (reference langchain.md §9).
inline constexpr std::string_view fs_empty_file = "System reminder: File exists but has empty contents";
// Text kept for parity with deepagents (middleware/filesystem.py, NO_LINES_REQUESTED_WARNING); {} is
// the `limit` asked for (0 or less).
inline constexpr std::string_view fs_limit_zero =
    "System reminder: no lines were read because `limit` was {}. The file was not inspected and may have "
    "contents; retry with `limit` >= 1 to read it.";
// Text kept for parity with deepagents (reference langchain.md §9).
inline constexpr std::string_view fs_read_truncation =
    "\n\n[Output was truncated due to size limits. The file content is very large. Consider reformatting the "
    "file to make it easier to navigate. For example, if this is JSON, use execute(command='jq . {}') to "
    "pretty-print it with line breaks. For other formats, you can use appropriate formatting tools to split "
    "long lines.]";
// Text kept for parity with deepagents (middleware/filesystem.py, GREP_TRUNCATION_NOTE).
inline constexpr std::string_view fs_grep_stopped =
    "Note: the search stopped early (it hit its time limit or the maximum match count). The matches above "
    "are valid but incomplete. Narrow the search (a more specific pattern or a narrower path), or raise "
    "max_count, to see the rest.";
// Text kept for parity with deepagents (backends/utils.py, regex_literal_hint).
inline constexpr std::string_view fs_grep_regex_hint =
    "Note: grep matches literal text, not regex, so characters like `|`, `.*`, and `\\.` are searched "
    "verbatim. Search for the literal text you need instead; for `|` alternation, run a separate search per "
    "alternative.";
// Text kept for parity with deepagents (reference langchain.md §9).
inline constexpr std::string_view fs_too_large_tool =
    "Tool result too large, the result of this tool call {} was saved in the filesystem at this path: {}\n\n"
    "You can read the result from the filesystem by using the read_file tool, but make sure to only read "
    "part "
    "of the result at a time.\n\n"
    "You can do this by specifying an offset and limit in the read_file tool call. For example, to read the "
    "first 100 lines, you can use the read_file tool with offset=0 and limit=100.\n\n"
    "Here is a preview showing the head and tail of the result (lines of the form `... [N lines truncated] "
    "...` indicate omitted lines in the middle of the content):\n\n{}\n";
// Text kept for parity with deepagents (middleware/filesystem.py's TOO_LARGE_HUMAN_MSG).
inline constexpr std::string_view fs_too_large_human =
    "Message content too large and was saved to the filesystem at: {}\n\n"
    "You can read the full content using the read_file tool with pagination (offset and limit "
    "parameters).\n\n"
    "Here is a preview showing the head and tail of the content:\n\n{}\n";

inline constexpr std::string_view fs_default_system_prompt =
    "## Filesystem tools\n\n"
    "You have a filesystem: ls lists a directory, read_file reads a file a window of lines at a time (offset "
    "and limit), write_file creates or replaces a file, edit_file replaces exact text in a file, glob finds "
    "files by name pattern, grep finds files containing a literal text, delete removes a file or a directory "
    "and mkdir creates a directory. Paths are absolute and start with /. Read a file before you edit it.";
inline constexpr std::string_view fs_execute_prompt =
    "\n\nThe execute tool runs a shell command in the sandbox and returns its output and exit code.";

/// Tools whose results are never evicted (deepagents' TOOLS_EXCLUDED_FROM_EVICTION, plus mkdir).
inline bool fs_excluded_from_eviction(std::string_view name) {
    static constexpr std::string_view names[] = {"ls",        "glob",       "grep",   "read_file",
                                                 "edit_file", "write_file", "delete", "mkdir"};
    return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

/// Python's str.splitlines() for \n, \r\n and \r (without the line ends).
inline std::vector<std::string_view> fs_split_lines(std::string_view text) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\n' || text[i] == '\r') {
            out.push_back(text.substr(start, i - start));
            if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
            start = i + 1;
        }
    }
    if (start < text.size()) out.push_back(text.substr(start));
    return out;
}

/// One output row: its marker ("12", "12.1") and text.
struct fs_row {
    std::string marker;
    std::string_view text;
};

/// The rows of source line `number` (1-based); a line longer than `max_len`
/// code points (Python's len, as deepagents counts) becomes chunks of
/// `max_len` code points marked N, N.1, N.2, ..., never splitting a UTF-8 sequence.
inline void fs_rows_of(std::string_view line, std::size_t number, std::vector<fs_row>& rows,
                       std::size_t max_len = fs_max_line_length) {
    if (line.size() <= max_len || detail::utf8_chars(line) <= max_len) {
        rows.push_back(fs_row{std::to_string(number), line});
        return;
    }
    for (std::size_t k = 0; !line.empty(); ++k) {
        const std::size_t cut = detail::utf8_offset(line, max_len);
        rows.push_back(fs_row{k == 0 ? std::to_string(number) : detail::format("{}.{}", number, k),
                              line.substr(0, cut)});
        line.remove_prefix(cut);
    }
}

inline std::string fs_render_rows(const std::vector<fs_row>& rows, line_number_format format) {
    std::size_t width = 0;
    for (const auto& r : rows)
        width = std::max(width, r.marker.size());
    std::string out;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (i) out += '\n';
        if (format == line_number_format::current)
            out += detail::format("{:>{}}  {}", rows[i].marker, width, rows[i].text);
        else
            out += detail::format("{:>6}\t{}", rows[i].marker, rows[i].text);
    }
    return out;
}

/// Lines numbered from `first` as read_file shows them.
inline std::string fs_number_lines(const std::vector<std::string_view>& lines, std::size_t first,
                                   line_number_format format, std::size_t max_len = fs_max_line_length) {
    std::vector<fs_row> rows;
    for (std::size_t i = 0; i < lines.size(); ++i)
        fs_rows_of(lines[i], first + i, rows, max_len);
    return fs_render_rows(rows, format);
}

inline std::string_view fs_plural(std::size_t n) { return n == 1 ? "line" : "lines"; }

/// Empty or only white space: deepagents' empty-file reminder applies.
inline bool fs_is_blank(std::string_view content) {
    return content.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos;
}

/// Whether a grep pattern looks written as a regular expression (deepagents'
/// conservative signals: `|`, `.*`, `.+`, or a backslash before a regex
/// metacharacter or class letter), for the hint after no match.
inline bool fs_looks_like_regex(std::string_view pattern) {
    static constexpr std::string_view escaped = ".wWdDsSbB(){}[]|+*?^$";
    if (pattern.find('|') != std::string_view::npos || pattern.find(".*") != std::string_view::npos ||
        pattern.find(".+") != std::string_view::npos)
        return true;
    for (std::size_t i = 0; i + 1 < pattern.size(); ++i)
        if (pattern[i] == '\\' && escaped.find(pattern[i + 1]) != std::string_view::npos) return true;
    return false;
}

/// read_file's notice when lines remain after source lines first..last (1-based) of `total`.
inline std::string fs_remaining_notice(std::size_t first, std::size_t last, std::size_t total) {
    if (last >= total) return {};
    const std::size_t read = last - first + 1, remaining = total - last;
    // Text kept for parity with deepagents (reference langchain.md §9).
    return detail::format("\n\n[Read {} {} (lines {}-{} of {} total). {} {} remaining from offset {}.]", read,
                          fs_plural(read), first, last, total, remaining, fs_plural(remaining), last);
}

/// read_file's answer for a file's text (deepagents' read_file formatting).
/// `offset` and `limit` are already clamped to zero or more; `cap` is the
/// character budget of the answer (0: none).
///
/// Over the budget it is cut as deepagents' _truncate_paginated_read cuts
/// it: after the last source line whose rows all fit with the size notice
/// and the recomputed remaining-lines notice (in that order, the rows keeping
/// the full window's marker width), else at the budget, with the size notice
/// only. Characters are code points, as Python counts them.
inline std::string fs_format_read(std::string_view content, std::string_view path, std::size_t offset,
                                  std::size_t limit, std::size_t cap, line_number_format format,
                                  bool& error) {
    error = false;
    if (fs_is_blank(content)) return std::string(fs_empty_file);
    const auto lines = fs_split_lines(content);
    const std::size_t total = lines.size();
    if (offset >= total) {
        error = true;
        // Text kept for parity with deepagents (reference langchain.md §9).
        return detail::format("Error: Line offset {} exceeds file length ({} lines)", offset, total);
    }
    const std::size_t end = std::min(total, offset + std::min(limit, total - offset));
    // The rows, and after each source line's last row where the answer may be
    // cut: its end in bytes and in characters, and the line's number.
    struct cut_point {
        std::size_t bytes, chars, line;
    };
    std::vector<fs_row> rows;
    std::vector<cut_point> cuts;
    std::vector<std::size_t> last_row_of; // per source line, its last row's index
    for (std::size_t i = offset; i < end; ++i) {
        fs_rows_of(lines[i], i + 1, rows);
        last_row_of.push_back(rows.size() - 1);
    }
    std::size_t width = 0;
    for (const auto& r : rows)
        width = std::max(width, r.marker.size());
    std::string body;
    std::size_t chars = 0;
    for (std::size_t i = 0, line = 0; i < rows.size(); ++i) {
        const std::size_t from = body.size();
        if (i) body += '\n';
        if (format == line_number_format::current)
            body += detail::format("{:>{}}  {}", rows[i].marker, width, rows[i].text);
        else
            body += detail::format("{:>6}\t{}", rows[i].marker, rows[i].text);
        chars += detail::utf8_chars(std::string_view(body).substr(from));
        if (i == last_row_of[line]) {
            cuts.push_back(cut_point{body.size(), chars, offset + line + 1});
            ++line;
        }
    }
    std::string notice = fs_remaining_notice(offset + 1, end, total);
    if (cap == 0 || chars + detail::utf8_chars(notice) < cap) return body + notice;
    const std::string size_notice = fmt::format(fmt::runtime(fs_read_truncation), path);
    const std::size_t size_notice_chars = detail::utf8_chars(size_notice);
    for (auto it = cuts.rbegin(); it != cuts.rend(); ++it) {
        notice = fs_remaining_notice(offset + 1, it->line, total);
        if (it->chars + size_notice_chars + detail::utf8_chars(notice) <= cap)
            return body.substr(0, it->bytes) + size_notice + notice;
    }
    // Not one whole source line fits: no remaining-lines notice, whose offset would be wrong.
    const std::size_t keep = cap > size_notice_chars ? cap - size_notice_chars : 0;
    return body.substr(0, detail::utf8_offset(body, keep)) + size_notice;
}

/// The head and tail of a text, numbered (deepagents' eviction preview).
inline std::string fs_preview(std::string_view text) {
    const auto lines = fs_split_lines(text);
    auto clip = [](std::vector<std::string_view> ls) {
        for (auto& l : ls)
            l = l.substr(0, detail::utf8_offset(l, fs_preview_line_chars));
        return ls;
    };
    if (lines.size() <= 10)
        return fs_number_lines(clip(lines), 1, line_number_format::current, fs_preview_line_chars);
    std::vector<std::string_view> head(lines.begin(), lines.begin() + 5), tail(lines.end() - 5, lines.end());
    return fs_number_lines(clip(head), 1, line_number_format::current, fs_preview_line_chars) +
           detail::format("\n... [{} lines truncated] ...\n", lines.size() - 10) +
           fs_number_lines(clip(tail), lines.size() - 4, line_number_format::current, fs_preview_line_chars);
}

/// The tool call id as a file name: ".", "/" and "\" become "_".
inline std::string fs_sanitise_id(std::string_view id) {
    std::string out(id);
    for (char& c : out)
        if (c == '.' || c == '/' || c == '\\' || c == '\0') c = '_';
    if (out.empty()) out = "_";
    return out;
}

inline std::string fs_uuid4() {
    const std::uint64_t a = next_unique_id_bits(), b = next_unique_id_bits();
    return detail::format("{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xfff,
                          0x8000 | (b >> 48 & 0x3fff), b & 0xffffffffffffULL);
}

inline std::string fs_list_output(const std::vector<std::string>& paths) {
    if (paths.empty()) return std::string(fs_no_files);
    std::string out = python_list(paths);
    const std::size_t cap = fs_chars_per_token * 20000;
    if (out.size() > cap) {
        out.resize(cap);
        out += '\n';
        out += fs_results_truncated;
    }
    return out;
}

/// What every filesystem tool shares: the options and the backend of a call.
struct fs_context {
    filesystem_options options;
    backend_factory factory;

    any_backend backend(const tool_runtime& rt) const { return factory(rt); }

    /// The validated path, or the error output.
    std::optional<std::string> check(std::string_view raw, fs_operation op, tool_output& error) const {
        path_check p = validate_path(raw, options.allowed_prefixes);
        if (!p) {
            error = tool_output::error("Error: " + p.error);
            return std::nullopt;
        }
        if (!fs_permitted(options.permissions, op, p.path)) {
            // Text kept for parity with deepagents (reference langchain.md §9).
            error = tool_output::error(detail::format("Error: permission denied for {} on {}",
                                                      op == fs_operation::read ? "read" : "write", p.path));
            return std::nullopt;
        }
        return std::move(p.path);
    }
    bool readable(std::string_view path) const {
        return options.permissions.empty() || fs_permitted(options.permissions, fs_operation::read, path);
    }
    std::string description(std::string_view tool, std::string_view fallback) const {
        auto it = options.custom_tool_descriptions.find(std::string(tool));
        return it != options.custom_tool_descriptions.end() ? it->second : std::string(fallback);
    }
};

inline tool_output fs_error(std::string_view text) {
    return tool_output::error("Error: " + std::string(text));
}

inline std::shared_ptr<tool_interface> fs_ls_tool(std::shared_ptr<const fs_context> ctx) {
    return share_tool(make_tool(
        "ls",
        ctx->description("ls",
                         "Lists the files and directories directly inside a directory (absolute path)."),
        R"({"type":"object","properties":{"path":{"type":"string","description":"Absolute path of the directory to list."}},"required":[]})",
        [ctx](const boost::json::object& args, const tool_runtime& rt) {
            return call_reading_args(
                args, [&](const boost::json::object& a, std::optional<arg_error>& err) -> tool_output {
                    auto raw = string_arg(a, "path", false, err);
                    if (err) return {};
                    tool_output bad;
                    auto path = ctx->check(raw.value_or("/"), fs_operation::read, bad);
                    if (!path) return bad;
                    auto res = ctx->backend(rt).ls(*path);
                    if (!res.error.empty()) return fs_error(res.error);
                    std::vector<std::string> paths;
                    for (auto& e : res.entries)
                        if (ctx->readable(e.path)) paths.push_back(std::move(e.path));
                    return fs_list_output(paths);
                });
        }));
}

inline std::shared_ptr<tool_interface> fs_read_tool(std::shared_ptr<const fs_context> ctx) {
    return share_tool(make_tool(
        "read_file",
        ctx->description("read_file", "Reads a file's lines with line numbers: `offset` is the first line "
                                      "(0-based, default 0) and `limit` how many lines (default 100)."),
        R"({"type":"object","properties":{"file_path":{"type":"string","description":"Absolute path of the file."},"offset":{"type":"integer","description":"First line to read, 0-based.","default":0},"limit":{"type":"integer","description":"Most lines to read.","default":100}},"required":["file_path"]})",
        [ctx](const boost::json::object& args, const tool_runtime& rt) {
            return call_reading_args(
                args, [&](const boost::json::object& a, std::optional<arg_error>& err) -> tool_output {
                    auto raw = string_arg(a, "file_path", true, err);
                    const std::int64_t offset_arg = int_arg(a, "offset", err).value_or(0);
                    const std::int64_t limit_arg = int_arg(a, "limit", err).value_or(100);
                    if (err) return {};
                    tool_output bad;
                    auto path = ctx->check(*raw, fs_operation::read, bad);
                    if (!path) return bad;
                    std::string negative_note;
                    if (offset_arg < 0)
                        // Text kept for parity with deepagents (reference langchain.md §9).
                        negative_note = detail::format("\n\n[Requested offset {} is before the start of the "
                                                       "file; read from line 1 instead.]",
                                                       offset_arg);
                    const std::size_t offset = offset_arg < 0 ? 0 : static_cast<std::size_t>(offset_arg);
                    const std::size_t limit = limit_arg < 0 ? 0 : static_cast<std::size_t>(limit_arg);
                    auto res = ctx->backend(rt).read(*path);
                    if (!res.error.empty()) return fs_error(res.error);
                    // As deepagents: a missing file is an error and an empty one says so
                    // whatever the limit; only a file with contents gets the limit reminder.
                    if (fs_is_blank(res.content)) return std::string(fs_empty_file);
                    if (limit == 0) return detail::format(fs_limit_zero, limit_arg);
                    if (res.encoding != "utf-8")
                        return fs_error(
                            detail::format("'{}' holds binary data ({}), which read_file cannot show as text",
                                           *path, res.encoding));
                    const std::size_t cap =
                        ctx->options.tool_token_limit_before_evict
                            ? fs_chars_per_token * *ctx->options.tool_token_limit_before_evict
                            : 0;
                    bool is_error = false;
                    std::string text = fs_format_read(res.content, *path, offset, limit, cap,
                                                      ctx->options.read_file_format, is_error);
                    if (is_error) return tool_output::error(std::move(text));
                    return text + negative_note;
                });
        }));
}

inline std::shared_ptr<tool_interface> fs_write_tool(std::shared_ptr<const fs_context> ctx) {
    return share_tool(make_tool(
        "write_file",
        ctx->description("write_file",
                         "Writes a file (absolute path), creating it or replacing its content."),
        R"({"type":"object","properties":{"file_path":{"type":"string","description":"Absolute path of the file."},"content":{"type":"string","description":"The whole new content."}},"required":["file_path","content"]})",
        [ctx](const boost::json::object& args, const tool_runtime& rt) {
            return call_reading_args(
                args, [&](const boost::json::object& a, std::optional<arg_error>& err) -> tool_output {
                    auto raw = string_arg(a, "file_path", true, err);
                    auto content = string_arg(a, "content", true, err);
                    if (err) return {};
                    tool_output bad;
                    auto path = ctx->check(*raw, fs_operation::write, bad);
                    if (!path) return bad;
                    auto res = ctx->backend(rt).write(*path, *content);
                    if (!res.error.empty()) return fs_error(res.error);
                    // Text kept for parity with deepagents (reference langchain.md §9).
                    tool_output out(detail::format("Updated file {}", res.path));
                    fs_merge_files_update(out.update, res.files_update);
                    return out;
                });
        }));
}

inline std::shared_ptr<tool_interface> fs_edit_tool(std::shared_ptr<const fs_context> ctx) {
    return share_tool(make_tool(
        "edit_file",
        ctx->description("edit_file", "Replaces exact text in a file. `old_string` must occur exactly once "
                                      "unless `replace_all` is true."),
        R"({"type":"object","properties":{"file_path":{"type":"string","description":"Absolute path of the file."},"old_string":{"type":"string","description":"The exact text to replace."},"new_string":{"type":"string","description":"The text to put in its place."},"replace_all":{"type":"boolean","description":"Replace every occurrence.","default":false}},"required":["file_path","old_string","new_string"]})",
        [ctx](const boost::json::object& args, const tool_runtime& rt) {
            return call_reading_args(
                args, [&](const boost::json::object& a, std::optional<arg_error>& err) -> tool_output {
                    auto raw = string_arg(a, "file_path", true, err);
                    auto old_text = string_arg(a, "old_string", true, err);
                    auto new_text = string_arg(a, "new_string", true, err);
                    const bool all = bool_arg(a, "replace_all", false, err);
                    if (err) return {};
                    tool_output bad;
                    auto path = ctx->check(*raw, fs_operation::write, bad);
                    if (!path) return bad;
                    auto res = ctx->backend(rt).edit(*path, *old_text, *new_text, all);
                    if (!res.error.empty()) return fs_error(res.error);
                    // Text kept for parity with deepagents (reference langchain.md §9).
                    tool_output out(
                        detail::format("Successfully replaced {} instance(s) of the string in '{}'",
                                       res.occurrences, res.path));
                    fs_merge_files_update(out.update, res.files_update);
                    return out;
                });
        }));
}

inline std::shared_ptr<tool_interface> fs_glob_tool(std::shared_ptr<const fs_context> ctx) {
    return share_tool(make_tool(
        "glob",
        ctx->description("glob", "Finds files by a glob pattern (`*`, `**`, `?`, `{a,b}`) under `path` "
                                 "(default /). A pattern without / matches file names at any depth."),
        R"({"type":"object","properties":{"pattern":{"type":"string","description":"The glob pattern."},"path":{"type":"string","description":"Absolute path of the directory to search.","default":"/"}},"required":["pattern"]})",
        [ctx](const boost::json::object& args, const tool_runtime& rt) {
            return call_reading_args(
                args, [&](const boost::json::object& a, std::optional<arg_error>& err) -> tool_output {
                    auto pattern = string_arg(a, "pattern", true, err);
                    auto raw = string_arg(a, "path", false, err);
                    if (err) return {};
                    tool_output bad;
                    auto path = ctx->check(raw.value_or("/"), fs_operation::read, bad);
                    if (!path) return bad;
                    auto res = ctx->backend(rt).glob(*pattern, *path);
                    if (!res.error.empty()) return fs_error(res.error);
                    std::vector<std::string> paths;
                    for (auto& e : res.entries)
                        if (ctx->readable(e.path)) paths.push_back(std::move(e.path));
                    return fs_list_output(paths);
                });
        }));
}

inline std::shared_ptr<tool_interface> fs_grep_tool(std::shared_ptr<const fs_context> ctx) {
    return share_tool(make_tool(
        "grep",
        ctx->description("grep",
                         "Searches files for a literal text (not a regular expression). `output_mode`: "
                         "files_with_matches (default), content (matching lines with numbers) or count."),
        R"({"type":"object","properties":{"pattern":{"type":"string","description":"The literal text to find."},"path":{"type":"string","description":"Absolute path of a file or directory (default /)."},"glob":{"type":"string","description":"Only files matching this glob."},"output_mode":{"type":"string","enum":["files_with_matches","content","count"],"default":"files_with_matches"}},"required":["pattern"]})",
        [ctx](const boost::json::object& args, const tool_runtime& rt) {
            return call_reading_args(
                args, [&](const boost::json::object& a, std::optional<arg_error>& err) -> tool_output {
                    auto pattern = string_arg(a, "pattern", true, err);
                    auto raw = string_arg(a, "path", false, err);
                    auto glob = string_arg(a, "glob", false, err);
                    auto mode = string_arg(a, "output_mode", false, err).value_or("files_with_matches");
                    if (err) return {};
                    if (mode != "files_with_matches" && mode != "content" && mode != "count")
                        return fs_error(detail::format(
                            "output_mode must be files_with_matches, content or count, not '{}'", mode));
                    tool_output bad;
                    auto path = ctx->check(raw.value_or("/"), fs_operation::read, bad);
                    if (!path) return bad;
                    auto res = ctx->backend(rt).grep(*pattern, *path, glob.value_or(""),
                                                     ctx->options.grep_max_count);
                    if (!res.error.empty()) return fs_error(res.error);
                    // Files sorted; matches in line order within a file.
                    std::map<std::string, std::vector<const fs_grep_match*>> by_file;
                    for (const auto& m : res.matches)
                        if (ctx->readable(m.path)) by_file[m.path].push_back(&m);
                    std::string out;
                    if (by_file.empty()) out = fs_no_matches;
                    for (const auto& [file, matches] : by_file) {
                        if (!out.empty()) out += '\n';
                        if (mode == "files_with_matches") {
                            out += file;
                        } else if (mode == "count") {
                            out += detail::format("{}: {}", file, matches.size());
                        } else {
                            out += file + ":";
                            for (const auto* m : matches)
                                out += detail::format("\n  {}: {}", m->line, m->text);
                        }
                    }
                    const std::size_t cap = fs_chars_per_token * 20000;
                    if (out.size() > cap) {
                        out.resize(cap);
                        out += '\n';
                        out += fs_results_truncated;
                    }
                    // deepagents' notes after the matches (or the no-match text): the stop
                    // note, or, when nothing at all was found, the hint for a regex.
                    if (res.truncated) {
                        out += "\n\n";
                        out += fs_grep_stopped;
                    } else if (res.matches.empty() && fs_looks_like_regex(*pattern)) {
                        out += "\n\n";
                        out += fs_grep_regex_hint;
                    }
                    return out;
                });
        }));
}

inline std::shared_ptr<tool_interface> fs_delete_tool(std::shared_ptr<const fs_context> ctx) {
    return share_tool(make_tool(
        "delete", ctx->description("delete", "Deletes a file, or a directory with everything in it."),
        R"({"type":"object","properties":{"file_path":{"type":"string","description":"Absolute path to delete."}},"required":["file_path"]})",
        [ctx](const boost::json::object& args, const tool_runtime& rt) {
            return call_reading_args(
                args, [&](const boost::json::object& a, std::optional<arg_error>& err) -> tool_output {
                    auto raw = string_arg(a, "file_path", true, err);
                    if (err) return {};
                    tool_output bad;
                    auto path = ctx->check(*raw, fs_operation::write, bad);
                    if (!path) return bad;
                    auto res = ctx->backend(rt).remove(*path);
                    if (!res.error.empty()) return fs_error(res.error);
                    tool_output out(detail::format("Deleted {}", res.path));
                    fs_merge_files_update(out.update, res.files_update);
                    return out;
                });
        }));
}

inline std::shared_ptr<tool_interface> fs_mkdir_tool(std::shared_ptr<const fs_context> ctx) {
    return share_tool(make_tool(
        "mkdir", ctx->description("mkdir", "Creates a directory and any missing parents."),
        R"({"type":"object","properties":{"path":{"type":"string","description":"Absolute path of the directory."}},"required":["path"]})",
        [ctx](const boost::json::object& args, const tool_runtime& rt) {
            return call_reading_args(
                args, [&](const boost::json::object& a, std::optional<arg_error>& err) -> tool_output {
                    auto raw = string_arg(a, "path", true, err);
                    if (err) return {};
                    tool_output bad;
                    auto path = ctx->check(*raw, fs_operation::write, bad);
                    if (!path) return bad;
                    auto res = ctx->backend(rt).mkdir(*path);
                    if (!res.error.empty()) return fs_error(res.error);
                    tool_output out(detail::format("Created directory {}", res.path));
                    fs_merge_files_update(out.update, res.files_update);
                    return out;
                });
        }));
}

inline std::shared_ptr<tool_interface> fs_execute_tool(std::shared_ptr<const fs_context> ctx) {
    return share_tool(make_tool(
        "execute",
        ctx->description("execute", "Runs a shell command in the sandbox and returns its output (stdout and "
                                    "stderr) and exit code."),
        R"({"type":"object","properties":{"command":{"type":"string","description":"The shell command."},"timeout":{"type":"integer","description":"Seconds before the command is stopped."}},"required":["command"]})",
        [ctx](const boost::json::object& args, const tool_runtime& rt) {
            return call_reading_args(
                args, [&](const boost::json::object& a, std::optional<arg_error>& err) -> tool_output {
                    auto command = string_arg(a, "command", true, err);
                    auto timeout = int_arg(a, "timeout", err);
                    if (err) return {};
                    const auto max = ctx->options.max_execute_timeout.count();
                    if (timeout && (*timeout > max || *timeout < 0))
                        // Text kept for parity with deepagents (reference langchain.md §9).
                        return tool_output::error(detail::format(
                            "Error: timeout {}s exceeds maximum allowed ({}s).", *timeout, max));
                    any_backend b = ctx->backend(rt);
                    if (!b.can_execute())
                        // Text kept for parity with deepagents (reference langchain.md §9; the reference
                        // elides the end).
                        return tool_output::error(
                            "Error: Execution not available. This backend cannot run commands.");
                    std::optional<std::chrono::seconds> t;
                    if (timeout) t = std::chrono::seconds(*timeout);
                    execute_response r = b.execute(*command, t);
                    std::string out = r.output;
                    if (r.exit_code)
                        out += detail::format("\n[Command {} with exit code {}]",
                                              *r.exit_code == 0 ? "succeeded" : "failed", *r.exit_code);
                    if (r.truncated) out += "\n[Output was truncated due to size limits]";
                    tool_output o(std::move(out));
                    if (r.exit_code) o.metadata["exit_code"] = *r.exit_code;
                    return o;
                });
        }));
}

} // namespace detail

/// The filesystem middleware (deepagents' FilesystemMiddleware).
class filesystem {
public:
    using options_type = filesystem_options;
    using state_fields = fields<files_field>;

    /// Files in the agent state.
    filesystem() : filesystem(filesystem_options{}) {}
    explicit filesystem(filesystem_options o)
        : filesystem([](const tool_runtime& rt) { return any_backend(state_backend(rt)); }, std::move(o)) {}

    /// One backend for every call.
    template <filesystem_backend B>
        requires(!std::is_convertible_v<B, backend_factory>)
    explicit filesystem(B backend, filesystem_options o = {})
        : filesystem([b = any_backend(std::move(backend))](const tool_runtime&) { return b; }, std::move(o)) {
    }

    /// A backend chosen per call from the tool's runtime.
    explicit filesystem(backend_factory factory, filesystem_options o) {
        o.validate();
        auto ctx = std::make_shared<detail::fs_context>();
        ctx->options = std::move(o);
        ctx->factory = std::move(factory);
        ctx_ = ctx;
        auto wanted = [&](std::string_view name) {
            return ctx_->options.tools.empty() ||
                   std::find(ctx_->options.tools.begin(), ctx_->options.tools.end(), name) !=
                       ctx_->options.tools.end();
        };
        if (wanted("ls")) tools_.push_back(detail::fs_ls_tool(ctx_));
        if (wanted("read_file")) tools_.push_back(detail::fs_read_tool(ctx_));
        if (wanted("write_file")) tools_.push_back(detail::fs_write_tool(ctx_));
        if (wanted("edit_file")) tools_.push_back(detail::fs_edit_tool(ctx_));
        if (wanted("glob")) tools_.push_back(detail::fs_glob_tool(ctx_));
        if (wanted("grep")) tools_.push_back(detail::fs_grep_tool(ctx_));
        if (wanted("delete")) tools_.push_back(detail::fs_delete_tool(ctx_));
        if (wanted("mkdir")) tools_.push_back(detail::fs_mkdir_tool(ctx_));
        if (wanted("execute")) tools_.push_back(detail::fs_execute_tool(ctx_));
    }

    const filesystem_options& options() const noexcept { return ctx_->options; }

    /// The tools, execute included: wrap_model_call hides it when the run's backend cannot execute.
    const std::vector<std::shared_ptr<tool_interface>>& tools() const noexcept { return tools_; }

    /// Evicts oversized human messages to /conversation_history/ (once: the
    /// replacement is small).
    void before_model(auto& state, runtime& rt) {
        if (!ctx_->options.human_message_token_limit_before_evict) return;
        const std::size_t limit =
            detail::fs_chars_per_token * *ctx_->options.human_message_token_limit_before_evict;
        std::optional<any_backend> backend;
        for (auto& m : state.messages) {
            if (!m.is_human()) continue;
            std::size_t size = 0;
            for (const auto& b : m.content)
                if (b.is_text()) size += b.text.size();
            if (size <= limit) continue;
            std::string text = m.text();
            if (!backend) {
                const tool_runtime trt = detail::hook_tool_runtime(state, &rt);
                backend = ctx_->backend(trt);
            }
            const std::string path = "/conversation_history/" + detail::fs_uuid4() + ".md";
            auto res = backend->write(path, text);
            if (!res.error.empty()) continue; // keep the message as it is
            if (res.files_update) {
                file_map update =
                    boost::json::value_to<file_map>(boost::json::value(std::move(*res.files_update)));
                files_field::merge(agentware::get<files_field>(state), std::move(update));
            }
            std::vector<content_block> blocks;
            blocks.push_back(text_block(
                fmt::format(fmt::runtime(detail::fs_too_large_human), path, detail::fs_preview(text))));
            for (auto& b : m.content)
                if (!b.is_text()) blocks.push_back(std::move(b));
            m.content = std::move(blocks);
        }
    }

    /// Adds the filesystem's part of the system prompt; hides execute when
    /// the run's backend cannot run commands.
    auto wrap_model_call(auto& req, auto&& next) {
        bool offers_execute = false;
        for (const auto& t : req.tools.get())
            if (t.name == "execute") offers_execute = true;
        bool can_execute = false;
        if (offers_execute && req.state) {
            const tool_runtime trt = detail::hook_tool_runtime(*req.state, req.rt);
            can_execute = ctx_->backend(trt).can_execute();
            if (!can_execute) {
                auto& tools = req.tools.edit();
                tools.erase(std::remove_if(tools.begin(), tools.end(),
                                           [](const tool_schema& s) { return s.name == "execute"; }),
                            tools.end());
            }
        }
        std::string prompt = ctx_->options.system_prompt ? *ctx_->options.system_prompt
                                                         : std::string(detail::fs_default_system_prompt);
        if (!ctx_->options.system_prompt && can_execute) prompt += detail::fs_execute_prompt;
        if (!prompt.empty()) {
            if (!std::string_view(req.system_prompt).empty()) req.system_prompt += "\n\n";
            req.system_prompt += prompt;
        }
        return next(req);
    }

    /// Evicts oversized tool results to /large_tool_results/.
    auto wrap_tool_call(auto& req, auto&& next) {
        auto ctx = ctx_;
        const auto* state = req.state;
        const runtime* rt = req.rt;
        return map_response(req, next, [ctx, state, rt](tool_response r) {
            if (!ctx->options.tool_token_limit_before_evict || !state) return r;
            if (detail::fs_excluded_from_eviction(r.msg.name)) return r;
            const std::size_t limit =
                detail::fs_chars_per_token * *ctx->options.tool_token_limit_before_evict;
            std::string text = r.msg.text();
            if (text.size() <= limit) return r;
            const std::string id(r.msg.tool_call_id());
            const std::string path = "/large_tool_results/" + detail::fs_sanitise_id(id);
            const tool_runtime trt = detail::hook_tool_runtime(*state, rt, id);
            auto res = ctx->backend(trt).write(path, text);
            if (!res.error.empty()) return r; // keep the original
            detail::fs_merge_files_update(r.update, res.files_update);
            std::vector<content_block> blocks;
            blocks.push_back(text_block(
                fmt::format(fmt::runtime(detail::fs_too_large_tool), id, path, detail::fs_preview(text))));
            for (auto& b : r.msg.content)
                if (!b.is_text()) blocks.push_back(std::move(b));
            r.msg.content = std::move(blocks);
            return r;
        });
    }

    /// The text a tool result of `text` is replaced by, `path` being where it was saved.
    static std::string eviction_message(std::string_view tool_call_id, std::string_view path,
                                        std::string_view text) {
        return fmt::format(fmt::runtime(detail::fs_too_large_tool), tool_call_id, path,
                           detail::fs_preview(text));
    }

private:
    std::shared_ptr<const detail::fs_context> ctx_;
    std::vector<std::shared_ptr<tool_interface>> tools_;
};

} // namespace agentware

#endif
