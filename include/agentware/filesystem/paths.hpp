#ifndef AGENTWARE_FILESYSTEM_PATHS_HPP
#define AGENTWARE_FILESYSTEM_PATHS_HPP

// Virtual paths of the filesystem tools (deepagents' validate_path): every
// path a model names is checked and normalised here before any backend sees
// it. ".." components, a leading "~" and Windows drive paths are refused;
// backslashes become slashes, "." and repeated slashes go, and the result
// always starts with "/". A NUL byte or a name longer than the platforms
// allow is refused too (deepagents does not check either).

#include <agentware/detail/format.hpp>
#include <agentware/detail/python_repr.hpp>

#include <fmt/core.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentware {

/// A validated path, or the reason it was refused (the text the tool shows
/// after "Error: ").
struct path_check {
    std::string path;  ///< the normalised path ("/a/b"), when valid
    std::string error; ///< empty when valid

    explicit operator bool() const noexcept { return error.empty(); }
};

namespace detail {

inline bool has_dotdot_component(std::string_view p) {
    std::size_t start = 0;
    while (start <= p.size()) {
        std::size_t end = p.find_first_of("/\\", start);
        if (end == std::string_view::npos) end = p.size();
        if (p.substr(start, end - start) == "..") return true;
        start = end + 1;
    }
    return false;
}

/// "/a//b/./c/" -> "/a/b/c"; "" and "." -> "/". Backslashes are separators.
inline std::string normalise_virtual_path(std::string_view p) {
    std::vector<std::string_view> parts;
    std::string tmp(p);
    for (char& c : tmp)
        if (c == '\\') c = '/';
    std::string_view v = tmp;
    std::size_t start = 0;
    while (start <= v.size()) {
        std::size_t end = v.find('/', start);
        if (end == std::string_view::npos) end = v.size();
        std::string_view part = v.substr(start, end - start);
        if (!part.empty() && part != ".") parts.push_back(part);
        start = end + 1;
    }
    std::string out;
    for (auto part : parts) {
        out += '/';
        out += part;
    }
    if (out.empty()) out = "/";
    return out;
}

} // namespace detail

/// Longest path and path component the tools accept (Linux's PATH_MAX and NAME_MAX).
inline constexpr std::size_t max_virtual_path_length = 4096;
inline constexpr std::size_t max_virtual_name_length = 255;

/// Checks and normalises a path a model gave; `allowed_prefixes`, when not
/// empty, are the prefixes the normalised path must start with.
inline path_check validate_path(std::string_view path,
                                const std::vector<std::string>& allowed_prefixes = {}) {
    path_check r;
    if (path.find('\0') != std::string_view::npos) {
        r.error = "Path contains a NUL byte";
        return r;
    }
    if (detail::has_dotdot_component(path) || (!path.empty() && path.front() == '~')) {
        // Text kept for parity with deepagents (reference langchain.md §9).
        r.error = detail::format("Path traversal not allowed: {}", path);
        return r;
    }
    if (path.size() >= 2 && path[1] == ':' &&
        ((path[0] >= 'a' && path[0] <= 'z') || (path[0] >= 'A' && path[0] <= 'Z'))) {
        // Text kept for parity with deepagents (reference langchain.md §9).
        r.error =
            detail::format("Windows absolute paths are not supported: {}. Please use virtual paths starting "
                           "with / (e.g., /workspace/file.txt)",
                           path);
        return r;
    }
    std::string normalised = detail::normalise_virtual_path(path);
    if (detail::has_dotdot_component(normalised)) {
        // Text kept for parity with deepagents (reference langchain.md §9).
        r.error = detail::format("Path traversal not allowed: {}", path);
        return r;
    }
    if (normalised.size() > max_virtual_path_length) {
        r.error = detail::format("Path is longer than {} characters", max_virtual_path_length);
        return r;
    }
    for (std::size_t start = 1; start < normalised.size();) {
        std::size_t end = normalised.find('/', start);
        if (end == std::string::npos) end = normalised.size();
        if (end - start > max_virtual_name_length) {
            r.error =
                detail::format("A path component is longer than {} characters", max_virtual_name_length);
            return r;
        }
        start = end + 1;
    }
    if (!allowed_prefixes.empty()) {
        bool ok = false;
        for (const auto& prefix : allowed_prefixes)
            if (normalised.starts_with(prefix) || normalised + "/" == prefix) ok = true;
        if (!ok) {
            // Text kept for parity with deepagents (reference langchain.md §9).
            r.error = detail::format("Path must start with one of {}: {}",
                                     detail::python_list(allowed_prefixes), path);
            return r;
        }
    }
    r.path = std::move(normalised);
    return r;
}

} // namespace agentware

#endif
