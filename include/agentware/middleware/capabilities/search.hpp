#ifndef AGENTWARE_MIDDLEWARE_CAPABILITIES_SEARCH_HPP
#define AGENTWARE_MIDDLEWARE_CAPABILITIES_SEARCH_HPP

// search_tools: the Swift catalog's `search` capability. Tools over a working
// directory on the host (paths relative to it, never outside it): `grep`
// (lines containing a literal text), `glob` (files whose path matches a
// pattern) and `tree` (the directory tree to a depth). Version-control,
// dependency and cache directories are skipped, as the sandbox's tools do.

#include <agentware/detail/format.hpp>
#include <agentware/filesystem/detail/file_search.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/middleware/capabilities/host_capability.hpp>
#include <agentware/middleware/detail/tool_args.hpp>
#include <agentware/tool/make_tool.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>

#include <fmt/core.h>

#include <cstddef>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

struct search_tools_options {
    std::string root_dir = ".";        ///< the working directory
    std::size_t max_results = 1000;    ///< grep's matches and glob's files, at most
    std::size_t max_file_size_mb = 10; ///< grep skips larger files
    std::size_t tree_max_depth = 3;    ///< tree's default depth

    static constexpr std::string_view config_section = "search";
    friend bool operator==(const search_tools_options&, const search_tools_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const search_tools_options& o) {
    jv = boost::json::object{{"root_dir", o.root_dir},
                             {"max_results", o.max_results},
                             {"max_file_size_mb", o.max_file_size_mb},
                             {"tree_max_depth", o.tree_max_depth}};
}

inline search_tools_options tag_invoke(boost::json::value_to_tag<search_tools_options>,
                                       const boost::json::value& jv) {
    json_reader r(jv, std::string(search_tools_options::config_section));
    search_tools_options o;
    r.read("root_dir", o.root_dir)
        .read("max_results", o.max_results)
        .read("max_file_size_mb", o.max_file_size_mb)
        .read("tree_max_depth", o.tree_max_depth)
        .reject_unknown_keys();
    return o;
}

namespace detail {

inline constexpr std::string_view search_truncated = "\n[results truncated at {}; narrow the search]";

inline tool_output search_grep(const working_dir& wd, const search_tools_options& o,
                               const boost::json::object& a, std::optional<arg_error>& err) {
    auto pattern = string_arg(a, "pattern", true, err);
    auto raw = string_arg(a, "path", false, err);
    auto glob = string_arg(a, "glob", false, err);
    if (err) return {};
    if (pattern->empty()) return tool_output::error("Error: the pattern is empty");
    std::string why;
    auto root = wd.resolve(raw.value_or("."), why);
    if (!root) return tool_output::error(why);
    std::string out;
    std::size_t found = 0;
    bool truncated = false;
    auto search_file = [&](const std::filesystem::path& file, const std::string& rel) {
        std::error_code ec;
        if (std::filesystem::file_size(file, ec) > o.max_file_size_mb * 1024 * 1024 || ec) return true;
        std::ifstream in(file, std::ios::binary);
        std::string line;
        for (std::size_t n = 1; std::getline(in, line); ++n) {
            if (line.find('\0') != std::string::npos) return true; // binary
            if (line.find(*pattern) == std::string::npos) continue;
            if (found == o.max_results) {
                truncated = true;
                return false;
            }
            ++found;
            if (!out.empty()) out += '\n';
            out += detail::format("{}:{}: {}", rel, n, line);
        }
        return true;
    };
    std::error_code ec;
    if (std::filesystem::is_regular_file(*root, ec)) {
        search_file(*root, wd.relative(*root));
    } else {
        walk_tree(*root, wd.roots, 0, walk_links::inside_thread, [&](const walk_entry& e) {
            if (e.is_dir) return true;
            if (glob && !glob->empty() && !glob_match(*glob, e.rel) &&
                !wildcard_match(*glob, e.path.filename().string()))
                return true;
            return search_file(e.path, wd.relative(e.path));
        });
    }
    if (found == 0) return std::string("No matches found");
    if (truncated) out += fmt::format(fmt::runtime(search_truncated), o.max_results);
    return out;
}

inline tool_output search_glob(const working_dir& wd, const search_tools_options& o,
                               const boost::json::object& a, std::optional<arg_error>& err) {
    auto pattern = string_arg(a, "pattern", true, err);
    auto raw = string_arg(a, "path", false, err);
    if (err) return {};
    std::string why;
    auto root = wd.resolve(raw.value_or("."), why);
    if (!root) return tool_output::error(why);
    std::string out;
    std::size_t found = 0;
    bool truncated = false;
    walk_tree(*root, wd.roots, 0, walk_links::inside_thread, [&](const walk_entry& e) {
        if (e.is_dir || !glob_match(*pattern, e.rel)) return true;
        if (found == o.max_results) {
            truncated = true;
            return false;
        }
        ++found;
        if (!out.empty()) out += '\n';
        out += wd.relative(e.path);
        return true;
    });
    if (found == 0) return std::string("No files found");
    if (truncated) out += fmt::format(fmt::runtime(search_truncated), o.max_results);
    return out;
}

inline tool_output search_tree(const working_dir& wd, const search_tools_options& o,
                               const boost::json::object& a, std::optional<arg_error>& err) {
    auto raw = string_arg(a, "path", false, err);
    auto depth = int_arg(a, "max_depth", err);
    if (err) return {};
    std::string why;
    auto root = wd.resolve(raw.value_or("."), why);
    if (!root) return tool_output::error(why);
    std::error_code ec;
    if (!std::filesystem::is_directory(*root, ec))
        return tool_output::error(detail::format("Error: {} is not a directory", raw.value_or(".")));
    const std::size_t max_depth = depth && *depth > 0 ? static_cast<std::size_t>(*depth) : o.tree_max_depth;
    std::string out = wd.relative(*root) + "/";
    std::size_t shown = 0;
    walk_tree(*root, wd.roots, max_depth, walk_links::inside_thread, [&](const walk_entry& e) {
        if (shown == o.max_results) return false;
        ++shown;
        out += '\n';
        out.append(2 * e.depth, ' ');
        out += e.path.filename().string();
        if (e.is_dir) out += '/';
        return true;
    });
    if (shown == o.max_results) out += fmt::format(fmt::runtime(search_truncated), o.max_results);
    return out;
}

} // namespace detail

/// The `search` capability: grep, glob and tree in a working directory.
class search_tools : public detail::host_capability<search_tools_options> {
public:
    using options_type = search_tools_options;
    static constexpr std::string_view capability_id = "search"; ///< in the capability catalog

    search_tools() : search_tools(search_tools_options{}) {}
    explicit search_tools(search_tools_options o) : host_capability(std::move(o)) {
        add_tool(
            "grep",
            "Finds the lines that contain a literal text in the files under a directory of the working "
            "directory (or in one file). Answers path:line: text.",
            R"({"type":"object","properties":{"pattern":{"type":"string","description":"The literal text."},"path":{"type":"string","description":"A directory or file, relative to the working directory (default: all of it)."},"glob":{"type":"string","description":"Only files whose path or name matches this pattern, e.g. *.py"}},"required":["pattern"]})",
            &detail::search_grep);
        add_tool(
            "glob", "Lists the files whose path matches a glob pattern (** for any directories).",
            R"({"type":"object","properties":{"pattern":{"type":"string","description":"E.g. src/**/*.cpp"},"path":{"type":"string","description":"Where to start, relative to the working directory."}},"required":["pattern"]})",
            &detail::search_glob);
        add_tool(
            "tree", "Shows the directory tree, to a depth.",
            R"({"type":"object","properties":{"path":{"type":"string","description":"The directory, relative to the working directory."},"max_depth":{"type":"integer","description":"How deep to go (default 3)."}}})",
            &detail::search_tree);
    }
};

} // namespace agentware

#endif
