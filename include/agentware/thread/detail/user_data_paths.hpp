#ifndef AGENTWARE_THREAD_DETAIL_USER_DATA_PATHS_HPP
#define AGENTWARE_THREAD_DETAIL_USER_DATA_PATHS_HPP

// The thread's directories and the virtual paths the model uses for them:
// /mnt/user-data/{workspace,uploads,outputs} <-> {base}/users/{user}/threads/
// {thread}/user-data/{...}. Shared by thread_data, uploads, sandbox and
// view_image. Every path a model sends goes through resolve_model_path, which
// is the one place that decides what a tool may touch.

#include <agentware/detail/format.hpp>
#include <agentware/thread/fields.hpp>
#include <agentware/thread/id.hpp>

#include <boost/json/object.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace agentware::detail {

inline constexpr std::string_view virtual_user_data = "/mnt/user-data";
inline constexpr std::string_view virtual_workspace = "/mnt/user-data/workspace";
inline constexpr std::string_view virtual_uploads = "/mnt/user-data/uploads";
inline constexpr std::string_view virtual_outputs = "/mnt/user-data/outputs";

inline constexpr std::string_view text_thread_data_missing = "Thread data not available for local sandbox";
inline constexpr std::string_view text_path_traversal = "Access denied: path traversal detected";
inline constexpr std::string_view text_only_allowed_roots =
    "Only paths under /mnt/user-data/, /mnt/skills/, /mnt/acp-workspace/, or configured mount paths are "
    "allowed";

/// True for a user id DeerFlow accepts as a directory name: ^[A-Za-z0-9_\-]+$.
inline bool is_valid_user_id(std::string_view id) noexcept {
    if (id.empty()) return false;
    for (char c : id)
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-'))
            return false;
    return true;
}

/// The run's user: context["user_id"] when it is a non-empty string, else "default".
inline std::string context_user_id(const boost::json::object* context) {
    if (context)
        if (const auto* v = context->if_contains("user_id"); v && v->is_string() && !v->get_string().empty())
            return std::string(v->get_string());
    return "default";
}

/// The run's thread: context["thread_id"] when it is a non-empty string, else the run's own.
inline std::string context_thread_id(const boost::json::object* context, std::string_view fallback) {
    if (context)
        if (const auto* v = context->if_contains("thread_id");
            v && v->is_string() && !v->get_string().empty())
            return std::string(v->get_string());
    return std::string(fallback);
}

/// Throws std::invalid_argument unless the ids are safe as path components.
/// Checked before any path is built, so nothing on disk is touched for a bad id.
inline void validate_ids(std::string_view thread_id, std::string_view user_id) {
    validate_thread_id(thread_id);
    if (!is_valid_user_id(user_id))
        throw std::invalid_argument(
            detail::format("invalid user id {}: use characters from A-Z, a-z, 0-9, '_' and '-'",
                           quoted_excerpt(user_id, 64)));
}

/// The base directory: the option, else $AGENTWARE_HOME, else ./.agentware.
inline std::filesystem::path resolve_base_dir(const std::string& option) {
    if (!option.empty()) return option;
    if (const char* home = std::getenv("AGENTWARE_HOME"); home && *home) return home;
    return std::filesystem::current_path() / ".agentware";
}

/// {base}/users/{user}/threads/{thread}: the thread's directory.
inline std::filesystem::path thread_dir(const std::filesystem::path& base, std::string_view user_id,
                                        std::string_view thread_id) {
    return base / "users" / std::string(user_id) / "threads" / std::string(thread_id);
}

inline thread_paths make_thread_paths(const std::filesystem::path& base, std::string_view user_id,
                                      std::string_view thread_id) {
    const auto data = thread_dir(base, user_id, thread_id) / "user-data";
    return {(data / "workspace").string(), (data / "uploads").string(), (data / "outputs").string()};
}

/// Creates the three directories (mkdir -p); tools call it before their first
/// use of a thread, which is what lazy initialisation defers to.
inline void ensure_thread_dirs(const thread_paths& p) {
    for (const auto* d : {&p.workspace_path, &p.uploads_path, &p.outputs_path})
        std::filesystem::create_directories(*d);
}

/// True when `s` starts with `prefix` at a path-segment boundary.
inline bool has_path_prefix(std::string_view s, std::string_view prefix) noexcept {
    if (s.substr(0, prefix.size()) != prefix) return false;
    return s.size() == prefix.size() || s[prefix.size()] == '/' || prefix.ends_with('/');
}

// Characters that continue a path segment: a match that is followed by one of
// them is part of a longer sibling name ("workspace2"), not the directory.
inline bool is_path_char(char c) noexcept {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
}

/// Replaces each `from` with its `to` where it stands as a whole path prefix
/// (not inside a longer name). Pairs are tried longest first.
inline std::string replace_path_prefixes(std::string_view text,
                                         std::vector<std::pair<std::string, std::string>> pairs) {
    std::erase_if(pairs, [](const auto& p) { return p.first.empty(); });
    std::sort(pairs.begin(), pairs.end(),
              [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        bool replaced = false;
        if (i == 0 || !is_path_char(text[i - 1])) {
            for (const auto& [from, to] : pairs) {
                if (text.substr(i, from.size()) != from) continue;
                const std::size_t end = i + from.size();
                if (end < text.size() && is_path_char(text[end])) continue;
                out += to;
                i = end;
                replaced = true;
                break;
            }
        }
        if (!replaced) out += text[i++];
    }
    return out;
}

/// The user-data directory holding all three, when they share one parent.
inline std::string common_parent(const thread_paths& p) {
    namespace fs = std::filesystem;
    const auto w = fs::path(p.workspace_path).parent_path();
    if (w == fs::path(p.uploads_path).parent_path() && w == fs::path(p.outputs_path).parent_path())
        return w.string();
    return {};
}

inline std::string weakly_canonical_string(const std::string& p) {
    std::error_code ec;
    auto c = std::filesystem::weakly_canonical(p, ec);
    return ec ? p : c.string();
}

/// Host -> virtual pairs for masking output, with the canonical spellings too
/// (a base directory under a symlink shows up resolved in some outputs).
inline std::vector<std::pair<std::string, std::string>> host_to_virtual_pairs(const thread_paths& p) {
    std::vector<std::pair<std::string, std::string>> pairs;
    auto add = [&](const std::string& host, std::string_view virt) {
        if (host.empty()) return;
        pairs.emplace_back(host, std::string(virt));
        auto canon = weakly_canonical_string(host);
        if (canon != host) pairs.emplace_back(canon, std::string(virt));
    };
    add(p.workspace_path, virtual_workspace);
    add(p.uploads_path, virtual_uploads);
    add(p.outputs_path, virtual_outputs);
    add(common_parent(p), virtual_user_data);
    return pairs;
}

/// Host paths of the thread's directories in `text`, shown as virtual paths.
inline std::string mask_host_paths(std::string_view text, const thread_paths& p) {
    return replace_path_prefixes(text, host_to_virtual_pairs(p));
}

/// Virtual paths in `text` (a command, a file's content) as host paths.
inline std::string virtual_to_host_text(std::string_view text, const thread_paths& p) {
    std::vector<std::pair<std::string, std::string>> pairs{{std::string(virtual_workspace), p.workspace_path},
                                                           {std::string(virtual_uploads), p.uploads_path},
                                                           {std::string(virtual_outputs), p.outputs_path}};
    if (auto parent = common_parent(p); !parent.empty())
        pairs.emplace_back(std::string(virtual_user_data), parent);
    return replace_path_prefixes(text, std::move(pairs));
}

/// The host path a path under /mnt/user-data stands for (the longest virtual
/// prefix replaced, nothing resolved or checked); empty when it names none
/// of the thread's directories.
inline std::filesystem::path virtual_to_host_path(std::string_view norm, const thread_paths& td) {
    const std::pair<std::string_view, const std::string*> mapping[] = {
        {virtual_workspace, &td.workspace_path},
        {virtual_uploads, &td.uploads_path},
        {virtual_outputs, &td.outputs_path}};
    for (const auto& [virt, real] : mapping)
        if (has_path_prefix(norm, virt))
            return std::filesystem::path(*real + std::string(norm.substr(virt.size())));
    if (!has_path_prefix(norm, virtual_user_data)) return {};
    const auto parent = common_parent(td);
    if (parent.empty()) return {};
    return std::filesystem::path(parent + std::string(norm.substr(virtual_user_data.size())));
}

/// A path the model sent, resolved to the host, or why it may not be used.
struct resolved_path {
    std::filesystem::path host; ///< canonical host path (symlinks resolved), inside the thread's roots
    std::string error;          ///< the reason, without the "Error: " prefix; empty when resolved
    int os_error = 0; ///< the system's errno when the system refused the path itself (a name too long)

    bool ok() const noexcept { return error.empty(); }
};

enum class path_access { read, write };

inline bool is_within(const std::filesystem::path& p, const std::filesystem::path& root) {
    const std::string ps = p.generic_string();
    std::string rs = root.generic_string();
    if (ps == rs) return true;
    if (!rs.ends_with('/')) rs += '/';
    return ps.starts_with(rs);
}

/// The canonical roots of the thread (workspace, uploads, outputs).
inline std::array<std::filesystem::path, 3> canonical_roots(const thread_paths& p) {
    return {std::filesystem::path(weakly_canonical_string(p.workspace_path)),
            std::filesystem::path(weakly_canonical_string(p.uploads_path)),
            std::filesystem::path(weakly_canonical_string(p.outputs_path))};
}

/// True when the canonical host path lies inside one of the thread's roots.
inline bool inside_thread_roots(const std::filesystem::path& canonical, const thread_paths& p) {
    for (const auto& root : canonical_roots(p))
        if (is_within(canonical, root)) return true;
    return false;
}

/// Resolves a virtual path the model sent (DeerFlow's validate_local_tool_path
/// plus replace_virtual_path plus the containment check). Rejects NUL bytes,
/// any ".." segment, paths outside /mnt/user-data/{workspace,uploads,outputs},
/// and paths whose resolution (symlinks followed) leaves those directories,
/// including dangling symlinks that would be followed when a file is created.
inline resolved_path resolve_model_path(std::string_view path, const thread_paths* td, path_access access) {
    namespace fs = std::filesystem;
    if (!td) return {{}, std::string(text_thread_data_missing)};
    if (path.find('\0') != std::string_view::npos)
        return {{}, "Access denied: path contains a NUL character"};
    std::string norm(path);
    std::replace(norm.begin(), norm.end(), '\\', '/');
    for (std::size_t start = 0; start <= norm.size();) {
        std::size_t slash = norm.find('/', start);
        if (slash == std::string::npos) slash = norm.size();
        if (std::string_view(norm).substr(start, slash - start) == "..")
            return {{}, std::string(text_path_traversal)};
        start = slash + 1;
    }
    if (has_path_prefix(norm, "/mnt/skills"))
        return {{},
                access == path_access::write
                    ? detail::format("Write access to skills path is not allowed: {}", path)
                    : detail::format("Path not available in this sandbox: {}", path)};
    if (has_path_prefix(norm, "/mnt/acp-workspace"))
        return {{},
                access == path_access::write
                    ? detail::format("Write access to ACP workspace is not allowed: {}", path)
                    : detail::format("Path not available in this sandbox: {}", path)};
    if (!has_path_prefix(norm, virtual_user_data) || norm == virtual_user_data || norm == "/mnt/user-data/")
        return {{}, std::string(text_only_allowed_roots)};

    fs::path host = virtual_to_host_path(norm, *td);
    if (host.empty()) return {{}, std::string(text_path_traversal)};

    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(host, ec);
    if (ec) return {{}, detail::format("Invalid path {}: {}", path, ec.message()), ec.value()};
    if (!inside_thread_roots(canonical, *td)) return {{}, std::string(text_path_traversal)};
    // weakly_canonical leaves a dangling symlink unresolved; creating a file
    // through it would write wherever it points.
    fs::path walk;
    for (const auto& part : canonical) {
        walk /= part;
        auto st = fs::symlink_status(walk, ec);
        if (!ec && fs::is_symlink(st)) return {{}, std::string(text_path_traversal)};
    }
    return {std::move(canonical), {}};
}

/// The virtual form of a host path inside the thread's roots ("" when outside).
inline std::string to_virtual_path(const std::filesystem::path& host, const thread_paths& p) {
    const std::string virt = mask_host_paths(host.generic_string(), p);
    return virt.starts_with(virtual_user_data) ? virt : std::string();
}

} // namespace agentware::detail

#endif
