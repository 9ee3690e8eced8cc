#ifndef AGENTWARE_MIDDLEWARE_SANDBOX_TOOLS_FILES_HPP
#define AGENTWARE_MIDDLEWARE_SANDBOX_TOOLS_FILES_HPP

// The sandbox's file tools: ls, read_file, write_file and str_replace.

#include <agentware/detail/format.hpp>
#include <agentware/detail/write_nofollow.hpp>
#include <agentware/filesystem/detail/file_search.hpp>
#include <agentware/message/detail/output_limits.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/middleware/detail/tool_args.hpp>
#include <agentware/middleware/sandbox/tools/tool_call.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>

#include <boost/json/object.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace agentware {

namespace detail {

// ---- ls ---------------------------------------------------------------------

inline tool_output ls_body(sandbox_tool_context& ctx, const boost::json::object& args,
                           const sandbox_call& call) {
    std::optional<arg_error> err;
    auto path = string_arg(args, "path", true, err);
    if (err) return error_output(err->text);
    auto r = resolve_model_path(*path, call.paths, path_access::read);
    if (!r.ok()) return refused(r, denied_list, *path);
    std::error_code ec;
    if (!std::filesystem::is_directory(r.host, ec))
        return error_output(detail::format("Error: Directory not found: {}", *path));
    if (::access(r.host.c_str(), R_OK | X_OK) != 0)
        return error_output(detail::format("Error: Permission denied: {}", *path));
    std::string out;
    walk_tree(r.host, *call.paths, 2, walk_links::inside_walk_root, [&](const walk_entry& e) {
        std::string virt = to_virtual_path(e.path, *call.paths);
        if (virt.empty()) return true;
        if (!out.empty()) out += '\n';
        out += virt;
        if (e.is_dir) out += '/';
        return true;
    });
    if (out.empty()) return tool_output("(empty)");
    return tool_output(
        head_truncate(out, ctx.options.ls_output_max_chars, "Use a more specific path to see fewer results"));
}

// ---- read_file ----------------------------------------------------------------

inline tool_output read_file_body(sandbox_tool_context& ctx, const boost::json::object& args,
                                  const sandbox_call& call) {
    std::optional<arg_error> err;
    auto path = string_arg(args, "path", true, err);
    auto start = int_arg(args, "start_line", err);
    auto end = int_arg(args, "end_line", err);
    if (err) return error_output(err->text);
    if (start && *start < 1) return tool_output("(start_line must be >= 1)");
    if (end && *end < 1) return tool_output("(end_line must be >= 1)");
    if (start && end && *start > *end) return tool_output("(start_line > end_line — no lines in range)");
    auto r = resolve_model_path(*path, call.paths, path_access::read);
    if (!r.ok()) return refused(r, denied_read, *path);
    if (auto problem = not_a_regular_file(r.host, *path)) return error_output(std::move(*problem));
    std::string content;
    int open_errno = 0;
    if (read_whole_file(r.host, content, open_errno)) {
        if (open_errno == EACCES || open_errno == EPERM)
            return error_output(detail::format("Error: Permission denied reading file: {}", *path));
        return error_output(detail::format("Error: File not found: {}", *path));
    }
    if (!is_utf8_text(content))
        return error_output(detail::format("Error: cannot read '{}' as text — it appears to be a binary file "
                                           "(e.g. .xlsx, .pdf, or an image). "
                                           "read_file only supports UTF-8 text. Use bash with a suitable "
                                           "library instead (pandas/openpyxl for "
                                           "spreadsheets), or view_image for images.",
                                           *path));
    if (ctx.was_written(call.sandbox_id, r.host)) content = mask_host_paths(content, *call.paths);
    if (content.empty()) return tool_output("(empty)");
    if (start || end) {
        // Lines keep their endings, so a range reads exactly as the file has it.
        std::vector<std::string_view> lines;
        std::string_view rest = content;
        while (!rest.empty()) {
            std::size_t nl = rest.find('\n');
            std::size_t len = nl == std::string_view::npos ? rest.size() : nl + 1;
            lines.push_back(rest.substr(0, len));
            rest.remove_prefix(len);
        }
        const auto first = static_cast<std::size_t>(start.value_or(1));
        const auto last =
            std::min<std::size_t>(end ? static_cast<std::size_t>(*end) : lines.size(), lines.size());
        if (first > lines.size()) return tool_output("(start_line exceeds file length)");
        std::string selected;
        for (std::size_t i = first - 1; i < last; ++i)
            selected += lines[i];
        content = std::move(selected);
        if (content.empty()) return tool_output("(empty)");
    }
    return tool_output(head_truncate(content, ctx.options.read_file_output_max_chars,
                                     "Use start_line/end_line to read a specific range"));
}

// ---- write_file / str_replace ------------------------------------------------

inline std::string bounded_error(std::string text) { return excerpt(text, 2000); }

inline tool_output write_file_body(sandbox_tool_context& ctx, const boost::json::object& args,
                                   const sandbox_call& call) {
    std::optional<arg_error> err;
    auto path = string_arg(args, "path", true, err);
    auto content = string_arg(args, "content", true, err);
    const bool append = bool_arg(args, "append", false, err);
    if (err) return error_output(err->text);
    const std::size_t max = ctx.options.write_file_max_bytes;
    if (!append && max > 0 && content->size() > max)
        return error_output(detail::format("Error: write_file content ({} bytes) exceeds the {}-byte "
                                           "single-call limit. Split the content into "
                                           "smaller pieces: either (a) write the first section now, then use "
                                           "`str_replace` for further edits, or "
                                           "(b) call write_file again with append=True carrying the next "
                                           "section. See SIZE POLICY in the tool "
                                           "docstring or issue #3189 for the rationale.",
                                           content->size(), max));
    auto r = resolve_model_path(*path, call.paths, path_access::write);
    // The system's own refusal of the name (too long) is reported as the open()
    // that DeerFlow's tool makes would report it, not as a denied permission.
    if (r.os_error == ENAMETOOLONG)
        return error_output(bounded_error(detail::format("Error: Failed to write file '{}': OSError: {}",
                                                         *path, std::strerror(r.os_error))));
    if (!r.ok()) return refused(r, denied_write, *path);
    // A virtual path in the content is written as the host path it stands for;
    // one that climbs out of the thread's directories refuses the write.
    if (content_escapes_user_data(*content))
        return error_output(fmt::format(fmt::runtime(denied_write), *path));
    std::error_code ec;
    if (std::filesystem::is_directory(r.host, ec))
        return error_output(detail::format("Error: Path is a directory, not a file: {}", *path));
    std::lock_guard lock(path_lock(r.host));
    std::filesystem::create_directories(r.host.parent_path(), ec);
    if (ec)
        return error_output(bounded_error(
            detail::format("Error: Failed to write file '{}': OSError: {}", *path, ec.message())));
    const int e = write_file_nofollow(r.host, virtual_to_host_text(*content, *call.paths), append);
    if (e == EACCES || e == EPERM)
        return error_output(detail::format("Error: Permission denied writing to file: {}", *path));
    if (e == ELOOP) return error_output(fmt::format(fmt::runtime(denied_write), *path));
    if (e != 0)
        return error_output(bounded_error(
            detail::format("Error: Failed to write file '{}': OSError: {}", *path, std::strerror(e))));
    ctx.remember_written(call.sandbox_id, r.host);
    return tool_output("OK");
}

inline tool_output str_replace_body(sandbox_tool_context& ctx, const boost::json::object& args,
                                    const sandbox_call& call) {
    std::optional<arg_error> err;
    auto path = string_arg(args, "path", true, err);
    auto old_str = string_arg(args, "old_str", true, err);
    auto new_str = string_arg(args, "new_str", true, err);
    const bool all = bool_arg(args, "replace_all", false, err);
    if (err) return error_output(err->text);
    auto r = resolve_model_path(*path, call.paths, path_access::write);
    if (!r.ok()) return refused(r, denied_access, *path);
    if (content_escapes_user_data(*new_str))
        return error_output(fmt::format(fmt::runtime(denied_access), *path));
    std::lock_guard lock(path_lock(r.host));
    if (auto problem = not_a_regular_file(r.host, *path)) return error_output(std::move(*problem));
    std::string content;
    int open_errno = 0;
    if (read_whole_file(r.host, content, open_errno))
        return error_output(fmt::format(fmt::runtime(denied_access), *path));
    if (old_str->empty()) return tool_output("OK");
    // The model saw an agent-written file with virtual paths; match it that
    // way. The new text's virtual paths are written as host paths, as
    // write_file writes them, and the file is the agent's from now on.
    std::string from = *old_str;
    const std::string to = virtual_to_host_text(*new_str, *call.paths);
    if (ctx.was_written(call.sandbox_id, r.host)) from = virtual_to_host_text(from, *call.paths);
    std::size_t pos = content.find(from);
    if (pos == std::string::npos)
        return error_output(detail::format("Error: String to replace not found in file: {}", *path));
    while (pos != std::string::npos) {
        content.replace(pos, from.size(), to);
        if (!all) break;
        pos = content.find(from, pos + to.size());
    }
    const int e = write_file_nofollow(r.host, content, false);
    if (e == EACCES || e == EPERM || e == ELOOP)
        return error_output(fmt::format(fmt::runtime(denied_access), *path));
    if (e != 0)
        return error_output(bounded_error(
            detail::format("Error: Failed to write file '{}': OSError: {}", *path, std::strerror(e))));
    ctx.remember_written(call.sandbox_id, r.host);
    return tool_output("OK");
}

} // namespace detail

} // namespace agentware

#endif
