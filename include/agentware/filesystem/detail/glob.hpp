#ifndef AGENTWARE_FILESYSTEM_DETAIL_GLOB_HPP
#define AGENTWARE_FILESYSTEM_DETAIL_GLOB_HPP

// The glob of the filesystem tools (deepagents' wcmatch with BRACE and
// GLOBSTAR): "{a,b}" alternatives, "**" across directories, a pattern without
// "/" matching the file name at any depth, and names starting with "." only
// matched by a pattern part that starts with "." too (so "**" does not enter
// hidden directories).

#include <agentware/filesystem/detail/file_search.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace agentware::detail {

/// "a{b,c}d{e,f}" -> abde, abdf, acde, acdf (nested braces expand too; at
/// most `cap` results, so a hostile pattern cannot explode).
inline void expand_braces(std::string_view pat, std::vector<std::string>& out, std::size_t cap = 256) {
    std::size_t open = std::string_view::npos, depth = 0;
    for (std::size_t i = 0; i < pat.size(); ++i) {
        if (pat[i] == '{') {
            if (depth++ == 0) open = i;
        } else if (pat[i] == '}' && depth > 0) {
            if (--depth == 0) {
                std::vector<std::string_view> alts;
                std::size_t start = open + 1, d = 0;
                for (std::size_t k = open + 1; k < i; ++k) {
                    if (pat[k] == '{')
                        ++d;
                    else if (pat[k] == '}')
                        --d;
                    else if (pat[k] == ',' && d == 0) {
                        alts.push_back(pat.substr(start, k - start));
                        start = k + 1;
                    }
                }
                alts.push_back(pat.substr(start, i - start));
                if (alts.size() < 2) continue; // "{x}" is literal
                for (auto alt : alts) {
                    if (out.size() >= cap) return;
                    std::string next(pat.substr(0, open));
                    next += alt;
                    next += pat.substr(i + 1);
                    expand_braces(next, out, cap);
                }
                return;
            }
        }
    }
    if (out.size() < cap) out.emplace_back(pat);
}

/// A compiled glob: matches paths relative to the directory searched.
class fs_glob_pattern {
public:
    explicit fs_glob_pattern(std::string_view pattern) {
        std::vector<std::string> alts;
        expand_braces(pattern, alts);
        for (auto& a : alts) {
            std::string_view v = a;
            const bool anchored = v.starts_with('/');
            while (v.starts_with('/'))
                v.remove_prefix(1);
            if (!anchored && v.find('/') == std::string_view::npos)
                patterns_.push_back("**/" + std::string(v));
            else
                patterns_.emplace_back(v);
        }
    }
    bool matches(std::string_view rel_path) const {
        for (const auto& p : patterns_)
            if (glob_match(p, rel_path, hidden_names::need_dot)) return true;
        return false;
    }

private:
    std::vector<std::string> patterns_;
};

} // namespace agentware::detail

#endif
