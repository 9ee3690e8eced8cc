#ifndef AGENTWARE_MIDDLEWARE_SANDBOX_TOOLS_SEARCH_HPP
#define AGENTWARE_MIDDLEWARE_SANDBOX_TOOLS_SEARCH_HPP

// The sandbox's search tools: glob (file names) and grep (file contents),
// each within a time budget.

#include <agentware/detail/format.hpp>
#include <agentware/detail/regex.hpp>
#include <agentware/filesystem/detail/file_search.hpp>
#include <agentware/message/detail/output_limits.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/middleware/detail/tool_args.hpp>
#include <agentware/middleware/sandbox/tools/tool_call.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace agentware {

namespace detail {

/// Lines longer than this (in characters, the newline counted) are not searched.
inline constexpr std::size_t grep_max_line_chars = 2000;

/// The time one glob or grep call may take (sandbox_options::search_timeout);
/// checked between files and lines.
struct search_budget {
    std::chrono::milliseconds limit;
    std::chrono::steady_clock::time_point deadline;
    bool ran_out = false;

    explicit search_budget(std::chrono::milliseconds l)
        : limit(l), deadline(std::chrono::steady_clock::now() + l) {}

    bool spent() {
        if (!ran_out && limit.count() > 0 && std::chrono::steady_clock::now() >= deadline) ran_out = true;
        return ran_out;
    }

    std::string message(std::string_view tool, std::size_t found, std::string_view what) const {
        const auto ms = limit.count();
        const std::string span = ms % 1000 == 0
                                     ? detail::format("{} second{}", ms / 1000, ms == 1000 ? "" : "s")
                                     : detail::format("{} ms", ms);
        return detail::format(
            "Error: {} stopped after {}, its time limit, with {} {} found so far. Narrow the "
            "path, add a glob filter or simplify the pattern.",
            tool, span, found, what);
    }
};

inline tool_output glob_body(sandbox_tool_context& ctx, const boost::json::object& args,
                             const sandbox_call& call) {
    std::optional<arg_error> err;
    auto pattern = string_arg(args, "pattern", true, err);
    auto path = string_arg(args, "path", true, err);
    const bool include_dirs = bool_arg(args, "include_dirs", false, err);
    auto max_arg = int_arg(args, "max_results", err);
    if (err) return error_output(err->text);
    const std::size_t max = clamp_results(max_arg, 200, ctx.options.glob_max_results);
    auto r = resolve_model_path(*path, call.paths, path_access::read);
    if (!r.ok()) return refused(r, denied_list, *path);
    std::error_code ec;
    if (!std::filesystem::is_directory(r.host, ec))
        return error_output(detail::format("Error: Directory not found: {}", *path));
    std::vector<std::string> found;
    bool truncated = false;
    search_budget budget(ctx.options.search_timeout);
    walk_tree(r.host, *call.paths, 0, walk_links::inside_thread, [&](const walk_entry& e) {
        if (budget.spent()) return false;
        if (e.is_dir && !include_dirs) return true;
        if (!glob_match(*pattern, e.rel)) return true;
        if (found.size() == max) {
            truncated = true;
            return false;
        }
        found.push_back(to_virtual_path(e.path, *call.paths));
        return true;
    });
    if (budget.ran_out) return error_output(budget.message("glob", found.size(), "paths"));
    if (found.empty()) return tool_output(detail::format("No files matched under {}", *path));
    std::string out =
        detail::format("Found {} paths under {}{}", found.size(), *path,
                       truncated ? detail::format(" (showing first {})", found.size()) : std::string());
    for (std::size_t i = 0; i < found.size(); ++i)
        out += detail::format("\n{}. {}", i + 1, found[i]);
    if (truncated) out += "\nResults truncated. Narrow the path or pattern to see fewer matches.";
    return tool_output(std::move(out));
}

inline tool_output grep_body(sandbox_tool_context& ctx, const boost::json::object& args,
                             const sandbox_call& call) {
    std::optional<arg_error> err;
    auto pattern = string_arg(args, "pattern", true, err);
    auto path = string_arg(args, "path", true, err);
    auto file_glob = string_arg(args, "glob", false, err);
    const bool literal = bool_arg(args, "literal", false, err);
    const bool case_sensitive = bool_arg(args, "case_sensitive", false, err);
    auto max_arg = int_arg(args, "max_results", err);
    if (err) return error_output(err->text);
    const std::size_t max = clamp_results(max_arg, 100, ctx.options.grep_max_results);
    std::optional<std::regex> re;
    if (!literal) {
        try {
            re.emplace(*pattern, search_regex_flags(case_sensitive));
        } catch (const std::regex_error& e) {
            return error_output(detail::format("Error: Invalid regex pattern: {}", e.what()));
        }
    }
    const std::string needle = case_sensitive ? *pattern : lower(*pattern);
    auto r = resolve_model_path(*path, call.paths, path_access::read);
    if (!r.ok()) return refused(r, denied_list, *path);
    std::error_code ec;
    const bool single_file = std::filesystem::is_regular_file(r.host, ec);
    if (!single_file && !std::filesystem::is_directory(r.host, ec))
        return error_output(detail::format("Error: Directory not found: {}", *path));

    std::vector<std::string> hits;
    bool truncated = false;
    search_budget budget(ctx.options.search_timeout);
    auto search_file = [&](const std::filesystem::path& file, std::string_view rel) {
        if (file_glob && !file_glob->empty()) {
            const bool by_path = file_glob->find('/') != std::string::npos;
            const std::string name = std::filesystem::path(std::string(rel)).filename().string();
            if (!(by_path ? glob_match(*file_glob, rel) : wildcard_match(*file_glob, name))) return true;
        }
        std::error_code fec;
        if (std::filesystem::file_size(file, fec) > 1024 * 1024 || fec) return true; // big files are skipped
        std::string content;
        int e = 0;
        if (read_whole_file(file, content, e) || !is_utf8_text(content)) return true; // so are binaries
        const std::string virt = to_virtual_path(file, *call.paths);
        std::size_t line_no = 0;
        std::string_view rest = content;
        while (!rest.empty()) {
            ++line_no;
            if (budget.spent()) return false;
            std::size_t nl = rest.find('\n');
            const bool ended = nl != std::string_view::npos;
            std::string_view line = rest.substr(0, nl);
            rest.remove_prefix(ended ? nl + 1 : rest.size());
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            // DeerFlow skips lines longer than 2,000 characters (its newline
            // counted), which keeps a regex's cost per line bounded.
            if (utf8_chars(line) + (ended ? 1 : 0) > grep_max_line_chars) continue;
            const std::string probe(line);
            const bool match = re ? detail::regex_search(probe, *re)
                                  : (case_sensitive ? probe : lower(probe)).find(needle) != std::string::npos;
            if (!match) continue;
            if (hits.size() == max) {
                truncated = true;
                return false;
            }
            hits.push_back(detail::format("{}:{}: {}", virt, line_no, excerpt(line, utf8_offset(line, 200))));
        }
        return true;
    };
    if (single_file) {
        search_file(r.host, r.host.filename().string());
    } else {
        walk_tree(r.host, *call.paths, 0, walk_links::inside_thread, [&](const walk_entry& e) {
            if (budget.spent()) return false;
            if (e.is_dir) return true;
            std::error_code fec;
            if (!std::filesystem::is_regular_file(e.path, fec)) return true;
            return search_file(e.path, e.rel);
        });
    }
    if (budget.ran_out) return error_output(budget.message("grep", hits.size(), "matches"));
    if (hits.empty()) return tool_output(detail::format("No matches found under {}", *path));
    std::string out =
        detail::format("Found {} matches under {}{}", hits.size(), *path,
                       truncated ? detail::format(" (showing first {})", hits.size()) : std::string());
    for (const auto& h : hits)
        out += "\n" + h;
    if (truncated) out += "\nResults truncated. Narrow the path or add a glob filter.";
    return tool_output(std::move(out));
}

} // namespace detail

} // namespace agentware

#endif
