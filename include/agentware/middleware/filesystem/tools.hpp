#ifndef AGENTWARE_MIDDLEWARE_FILESYSTEM_TOOLS_HPP
#define AGENTWARE_MIDDLEWARE_FILESYSTEM_TOOLS_HPP

// The filesystem middleware's tools (deepagents' ls, read_file, write_file,
// edit_file, glob, grep and execute, plus delete and mkdir): their schemas,
// descriptions and handlers over a backend, every path validated and checked
// against the permission rules first.

#include <agentware/detail/format.hpp>
#include <agentware/detail/python_repr.hpp>
#include <agentware/filesystem/backend.hpp>
#include <agentware/filesystem/paths.hpp>
#include <agentware/filesystem/permissions.hpp>
#include <agentware/filesystem/state_backend.hpp>
#include <agentware/middleware/detail/tool_args.hpp>
#include <agentware/middleware/filesystem/options.hpp>
#include <agentware/middleware/filesystem/read_format.hpp>
#include <agentware/tool/make_tool.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/json/object.hpp>

#include <fmt/core.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

namespace detail {

inline constexpr std::size_t fs_chars_per_token = 4;

// Text kept for parity with deepagents (reference langchain.md §9).
inline constexpr std::string_view fs_results_truncated =
    "... [results truncated, try being more specific with your parameters]";
// Text kept for parity with deepagents (reference langchain.md §9).
inline constexpr std::string_view fs_no_files = "No files found";
// Text kept for parity with deepagents (reference langchain.md §9).
inline constexpr std::string_view fs_no_matches = "No matches found";
// Text kept for parity with deepagents (middleware/filesystem.py, NO_LINES_REQUESTED_WARNING); {} is
// the `limit` asked for (0 or less).
inline constexpr std::string_view fs_limit_zero =
    "System reminder: no lines were read because `limit` was {}. The file was not inspected and may have "
    "contents; retry with `limit` >= 1 to read it.";
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

} // namespace agentware

#endif
