#ifndef AGENTWARE_FILESYSTEM_DETAIL_FILE_SEARCH_HPP
#define AGENTWARE_FILESYSTEM_DETAIL_FILE_SEARCH_HPP

// Walking a thread's directories for ls, glob and grep: shell-style wildcard
// matching, "**" across directories, the names search skips (VCS, caches,
// build output), and symlinks that leave the thread's roots are not followed
// or listed.

#include <agentware/thread/detail/user_data_paths.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace agentware::detail {

/// grep's regex: ECMAScript, case-folded unless asked otherwise. With
/// libstdc++ it runs on the breadth-first (polynomial) matcher, so a pattern
/// like (a+)+b costs at most (line length)^2 x (pattern size) per line, not
/// an exponential backtracking search; back-references are then refused
/// when the pattern is compiled.
inline std::regex::flag_type search_regex_flags(bool case_sensitive) {
    auto flags = std::regex::ECMAScript;
    if (!case_sensitive) flags |= std::regex::icase;
#if defined(__GLIBCXX__)
    flags |= std::regex_constants::__polynomial;
#endif
    return flags;
}

/// How many results a glob or grep call returns: what it asked for (at least
/// one), else the fallback, never more than the cap.
inline std::size_t clamp_results(std::optional<std::int64_t> asked, std::size_t fallback, std::size_t cap) {
    std::size_t n = asked ? static_cast<std::size_t>(std::max<std::int64_t>(*asked, 1)) : fallback;
    return std::min(n, cap);
}

/// fnmatch-style match of one name: '*', '?', '[abc]', '[a-z]', '[!x]'.
inline bool wildcard_match(std::string_view pat, std::string_view s) noexcept {
    std::size_t p = 0, i = 0, star_p = std::string_view::npos, star_i = 0;
    auto class_match = [&](std::size_t& pp, char c) {
        // pp at '['; returns whether c matches and moves pp past ']'
        std::size_t q = pp + 1;
        bool negate = q < pat.size() && (pat[q] == '!' || pat[q] == '^');
        if (negate) ++q;
        bool matched = false, first = true;
        while (q < pat.size() && (first || pat[q] != ']')) {
            first = false;
            if (q + 2 < pat.size() && pat[q + 1] == '-' && pat[q + 2] != ']') {
                if (pat[q] <= c && c <= pat[q + 2]) matched = true;
                q += 3;
            } else {
                if (pat[q] == c) matched = true;
                ++q;
            }
        }
        if (q >= pat.size()) return std::pair{false, false}; // unterminated: not a class
        pp = q + 1;
        return std::pair{true, matched != negate};
    };
    while (i < s.size()) {
        if (p < pat.size() && pat[p] == '*') {
            star_p = p++;
            star_i = i;
            continue;
        }
        if (p < pat.size()) {
            if (pat[p] == '?') {
                ++p;
                ++i;
                continue;
            }
            if (pat[p] == '[') {
                std::size_t pp = p;
                auto [is_class, ok] = class_match(pp, s[i]);
                if (is_class && ok) {
                    p = pp;
                    ++i;
                    continue;
                }
                if (!is_class && s[i] == '[') {
                    ++p;
                    ++i;
                    continue;
                }
            } else if (pat[p] == s[i]) {
                ++p;
                ++i;
                continue;
            }
        }
        if (star_p == std::string_view::npos) return false;
        p = star_p + 1;
        i = ++star_i;
    }
    while (p < pat.size() && pat[p] == '*')
        ++p;
    return p == pat.size();
}

inline std::vector<std::string_view> split_segments(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    while (start <= s.size()) {
        std::size_t slash = s.find('/', start);
        if (slash == std::string_view::npos) slash = s.size();
        if (slash > start) out.push_back(s.substr(start, slash - start));
        start = slash + 1;
    }
    return out;
}

/// Whether a wildcard may match a name that starts with ".": the sandbox's
/// search matches any name; deepagents' glob leaves hidden names to pattern
/// parts that start with "." themselves (so "**" does not enter them).
enum class hidden_names { match_any, need_dot };

/// Matches a relative path against a glob pattern segment by segment; "**"
/// stands for any number of directories (none included). The set of path
/// positions reachable after each pattern segment is carried forward, so
/// many "**" cost (segments x depth), never a search over their combinations.
inline bool glob_match(std::string_view pattern, std::string_view rel_path,
                       hidden_names hidden = hidden_names::match_any) {
    const auto pat = split_segments(pattern);
    const auto path = split_segments(rel_path);
    const auto is_hidden = [&](std::size_t k) {
        return hidden == hidden_names::need_dot && path[k].starts_with('.');
    };
    std::vector<char> reach(path.size() + 1, 0), next(path.size() + 1, 0);
    reach[0] = 1;
    for (std::string_view part : pat) {
        std::fill(next.begin(), next.end(), 0);
        bool any = false;
        if (part == "**") {
            // Every position from a reachable one onwards, up to and including
            // the first hidden name on the way (which "**" does not enter).
            bool open = false;
            for (std::size_t k = 0; k <= path.size(); ++k) {
                open = open || reach[k];
                if (open) next[k] = any = 1;
                if (k < path.size() && is_hidden(k)) open = false;
            }
        } else {
            const bool dot_ok = part.starts_with('.');
            for (std::size_t k = 0; k < path.size(); ++k)
                if (reach[k] && (dot_ok || !is_hidden(k)) && wildcard_match(part, path[k]))
                    next[k + 1] = any = 1;
        }
        if (!any) return false;
        reach.swap(next);
    }
    return reach[path.size()] != 0;
}

/// Names that ls, glob and grep skip: version control, dependency and cache
/// directories, build output, logs and editor litter.
inline constexpr std::string_view ignored_names[] = {".git",          ".svn",         ".hg",
                                                     ".bzr",          "node_modules", "bower_components",
                                                     "__pycache__",   ".venv",        "venv",
                                                     ".tox",          ".nox",         ".mypy_cache",
                                                     ".pytest_cache", ".ruff_cache",  ".ipynb_checkpoints",
                                                     "dist",          "build",        ".next",
                                                     ".nuxt",         ".cache",       ".parcel-cache",
                                                     ".turbo",        "coverage",     ".coverage",
                                                     "htmlcov",       ".gradle",      ".idea",
                                                     ".vscode",       ".DS_Store",    "Thumbs.db",
                                                     "*.pyc",         "*.pyo",        "*.log",
                                                     "*.swp",         "*.swo",        "*~",
                                                     "*.egg-info",    ".eggs",        ".terraform",
                                                     ".serverless",   ".sass-cache",  ".tool-results"};

inline bool is_ignored_name(std::string_view name) noexcept {
    for (auto pat : ignored_names)
        if (wildcard_match(pat, name)) return true;
    return false;
}

/// One entry met while walking.
struct walk_entry {
    std::filesystem::path path; ///< host path
    std::string rel;            ///< relative to the walk's root, '/'-separated
    bool is_dir = false;
    std::size_t depth = 1; ///< 1 for the root's children
};

/// Which symlinks a walk shows: those whose target stays inside the thread's
/// directories (glob, grep), or only those whose target stays inside the
/// directory being walked (ls, as DeerFlow's list_dir).
enum class walk_links { inside_thread, inside_walk_root };

/// Visits the tree under `root` in sorted order, depth first, down to
/// `max_depth` (0 = unlimited). Skips ignored names, and symlinks whose target
/// does not exist or lies outside what `links` allows; symlinked directories
/// are listed but not entered. `visit` returns false to stop.
inline void walk_tree(const std::filesystem::path& root, const thread_paths& td, std::size_t max_depth,
                      walk_links links, const std::function<bool(const walk_entry&)>& visit) {
    namespace fs = std::filesystem;
    std::function<bool(const fs::path&, const std::string&, std::size_t)> rec =
        [&](const fs::path& dir, const std::string& rel, std::size_t depth) -> bool {
        std::error_code ec;
        std::vector<fs::directory_entry> entries;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
            entries.push_back(*it);
        std::sort(entries.begin(), entries.end(),
                  [](const auto& a, const auto& b) { return a.path().filename() < b.path().filename(); });
        for (const auto& e : entries) {
            const std::string name = e.path().filename().string();
            if (is_ignored_name(name)) continue;
            bool is_link = e.is_symlink(ec);
            bool is_dir = e.is_directory(ec);
            if (is_link) {
                auto target = fs::weakly_canonical(e.path(), ec);
                if (ec || !fs::exists(target, ec) || !inside_thread_roots(target, td)) continue;
                if (links == walk_links::inside_walk_root && !is_within(target, root)) continue;
            }
            walk_entry w{e.path(), rel.empty() ? name : rel + "/" + name, is_dir, depth};
            if (!visit(w)) return false;
            if (is_dir && !is_link && (max_depth == 0 || depth < max_depth))
                if (!rec(e.path(), w.rel, depth + 1)) return false;
        }
        return true;
    };
    rec(root, "", 1);
}

} // namespace agentware::detail

#endif
