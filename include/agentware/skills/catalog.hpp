#ifndef AGENTWARE_SKILLS_CATALOG_HPP
#define AGENTWARE_SKILLS_CATALOG_HPP

// Skills as the rest of agentware sees them, without reading any file
// (reference next.md §3.4): the skill record, the `skills:` settings, the
// on/off switches, the catalog, the prompt block, and how a path under
// /mnt/skills resolves against a catalog. Loading a catalog from the roots
// (it parses YAML front matter) is <agentware/skills/skills.hpp>; the
// middlewares that use a catalog are <agentware/middleware/skills.hpp> and
// <agentware/middleware/skill_tool_policy.hpp>. This header does not need
// yaml-cpp.

#include <agentware/agent/requests.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/detail/prompt_text.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/detail/output_limits.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/message/message.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace agentware {

/// Where a skill comes from: bundled (public) or the user's own (custom).
enum class skill_category { public_skill, custom_skill };

inline std::string_view skill_category_name(skill_category c) noexcept {
    return c == skill_category::custom_skill ? "custom" : "public";
}

/// One skill folder.
struct skill {
    std::string name;        ///< front matter `name`
    std::string description; ///< front matter `description`
    std::string license;     ///< front matter `license` (may be empty)
    /// front matter `allowed-tools`: absent = no restriction; empty = no tools.
    std::optional<std::vector<std::string>> allowed_tools;
    std::string instructions; ///< the body after the front matter
    skill_category category = skill_category::public_skill;
    std::filesystem::path directory; ///< the folder on the host
    bool enabled = true;

    /// The folder's name (what the sandbox path uses).
    std::string folder() const { return directory.filename().string(); }
    /// `{container_path}/{public|custom}/{folder}/SKILL.md`: where the model reads it.
    std::string location(std::string_view container_path) const {
        return detail::format("{}/{}/{}/SKILL.md", container_path, skill_category_name(category), folder());
    }
};

/// A SKILL.md that cannot be used; what() is "<source>: <problem>".
class skill_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The skills settings (DeerFlow's `skills:` section of config.yaml).
struct skills_options {
    /// The host folder holding `public/` and `custom/` (DeerFlow's `skills.path`).
    std::string path = "skills";
    /// Where the model sees them (DeerFlow's `skills.container_path`).
    std::string container_path = "/mnt/skills";
    /// The custom skills' folder when it is not `{path}/custom` (DeerFlow keeps
    /// them per user elsewhere).
    std::string custom_path;
    /// Tools whose reads of a SKILL.md are recorded in `skill_context`
    /// (DeerFlow's summarization.skill_file_read_tool_names).
    std::vector<std::string> read_tool_names{"read_file", "read", "view", "cat"};
    /// A SKILL.md larger than this is skipped with a warning.
    std::size_t max_skill_file_bytes = 1024 * 1024;

    static constexpr std::string_view config_section = "skills";
    friend bool operator==(const skills_options&, const skills_options&) = default;

    /// Throws std::invalid_argument for a container path that is not absolute.
    void validate() const {
        if (!container_path.starts_with('/') || container_path.size() < 2 || container_path.ends_with('/'))
            throw std::invalid_argument(
                "container_path: an absolute path without a trailing / is expected, got \"" + container_path +
                "\"");
    }
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const skills_options& o) {
    jv = boost::json::object{{"path", o.path},
                             {"container_path", o.container_path},
                             {"custom_path", o.custom_path},
                             {"read_tool_names", boost::json::value_from(o.read_tool_names)},
                             {"max_skill_file_bytes", o.max_skill_file_bytes}};
}

inline skills_options tag_invoke(boost::json::value_to_tag<skills_options>, const boost::json::value& jv) {
    json_reader r(jv, std::string(skills_options::config_section));
    skills_options o;
    r.read("path", o.path)
        .read("container_path", o.container_path)
        .read("custom_path", o.custom_path)
        .read("read_tool_names", o.read_tool_names)
        .read("max_skill_file_bytes", o.max_skill_file_bytes)
        .reject_unknown_keys();
    r.validate(o);
    return o;
}

/// Which skills are switched on or off, by name (DeerFlow's extensions
/// config: `"skills": {"<name>": {"enabled": false}}`). A skill not named is on.
using skill_states = std::map<std::string, bool, std::less<>>;

/// The skill states of an extensions config (the whole extensions_config.json
/// object; only its `skills` key is read). Errors name their path
/// (`skills.web-research.enabled: expected true or false, got "no"`).
inline skill_states read_skill_states(const boost::json::value& extensions) {
    skill_states out;
    if (extensions.is_null()) return out;
    json_reader top(extensions);
    auto skills = top.object("skills");
    if (!skills) return out;
    for (const auto& kv : skills->object()) {
        json_reader one(kv.value(), skills->path_of(kv.key()));
        bool enabled = true;
        one.read("enabled", enabled).reject_unknown_keys();
        out.emplace(std::string(kv.key()), enabled);
    }
    return out;
}

/// The skills found under the roots.
struct skill_catalog {
    std::vector<skill> skills;         ///< public first, then custom; each by folder name
    std::vector<std::string> warnings; ///< folders skipped, and why

    /// The skill in `folder` of `category`, or null.
    const skill* find(skill_category category, std::string_view folder) const {
        for (const auto& s : skills)
            if (s.category == category && s.folder() == folder) return &s;
        return nullptr;
    }
};

namespace detail {

inline bool skill_within(const std::filesystem::path& p, const std::filesystem::path& root) {
    const std::string ps = p.generic_string();
    std::string rs = root.generic_string();
    if (ps == rs) return true;
    if (!rs.ends_with('/')) rs += '/';
    return ps.starts_with(rs);
}

inline std::filesystem::path skill_canonical(const std::filesystem::path& p) {
    std::error_code ec;
    auto c = std::filesystem::weakly_canonical(p, ec);
    return ec ? p : c;
}

inline bool skill_read_file(const std::filesystem::path& p, std::string& out) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return false;
    std::ostringstream ss;
    ss << in.rdbuf();
    out = std::move(ss).str();
    return true;
}

} // namespace detail

/// The block of the lead agent's system prompt that presents the skills
/// (DeerFlow's <skill_system>): how to load a skill, where skills are, the
/// enabled skills (name, description with its mutability label, SKILL.md
/// location; HTML-escaped) and the names of the disabled ones, which must not
/// be read. `available` (a subagent's `skills`) keeps only the skills it
/// names. Empty when there is no skill to show. The block depends only on the
/// catalog, so a prompt built from it stays the same across runs (providers'
/// prompt caches hit).
inline std::string
skills_prompt_section(const skill_catalog& catalog, std::string_view container_path = "/mnt/skills",
                      const std::optional<std::vector<std::string>>& available = std::nullopt) {
    auto wanted = [&](const skill& s) {
        return !available || std::find(available->begin(), available->end(), s.name) != available->end();
    };
    std::string enabled, disabled;
    for (const auto& s : catalog.skills) {
        if (!wanted(s)) continue;
        if (s.enabled) {
            // Text kept for parity with DeerFlow (reference next.md §3.4): the tags and the mutability
            // labels.
            enabled += detail::format(
                "    <skill>\n        <name>{}</name>\n        <description>{} {}</description>\n"
                "        <location>{}</location>\n    </skill>\n",
                detail::escape_html(s.name), detail::escape_html(s.description),
                s.category == skill_category::custom_skill ? "[custom, editable]" : "[built-in]",
                detail::escape_html(s.location(container_path)));
        } else {
            disabled += detail::format("- {}\n", detail::escape_html(s.name));
        }
    }
    if (enabled.empty() && disabled.empty()) return {};
    std::string out =
        "<skill_system>\n"
        "Skills are folders of instructions and resources for particular kinds of task.\n\n"
        "**Progressive Loading Pattern:**\n"
        "1. When the request matches a skill's description, first call `read_file` on that skill's "
        "SKILL.md (its location below).\n"
        "2. Follow the workflow it describes.\n"
        "3. It may name other files in its folder: read each only when a step needs it.\n\n";
    // Text kept for parity with DeerFlow (reference next.md §3.4).
    out += detail::format("**Skills are located at:** {}\n", container_path);
    if (!enabled.empty()) out += "\n<available_skills>\n" + enabled + "</available_skills>\n";
    if (!disabled.empty())
        // "INSTALLED but DISABLED. You MUST NOT read" kept for parity with DeerFlow (reference next.md §3.4).
        out += "\n<disabled_skills>\nThese skills are INSTALLED but DISABLED. You MUST NOT read their files "
               "or follow "
               "their instructions; if one would help, tell the user it can be enabled in settings.\n" +
               disabled + "</disabled_skills>\n";
    out += "</skill_system>";
    return out;
}

namespace detail {

// Text kept for parity with DeerFlow (reference deerflow.md §5.3).
inline constexpr std::string_view text_skill_disabled =
    "Error: Skill '{}' is disabled. Access to its files is blocked. Enable the skill in settings before "
    "using it.";

/// A path under the container path, resolved against the catalog.
struct skill_path {
    std::string error;                   ///< the tool result to give instead, when not empty
    const skill* owner = nullptr;        ///< the skill whose folder it is in (null above the folders)
    std::filesystem::path host;          ///< inside owner's folder (when owner)
    std::optional<skill_category> level; ///< set when it names a category folder itself
    bool is_root = false;                ///< the container path itself
    bool is_skill_md = false;            ///< the owner's SKILL.md
};

/// `path` relative to `container`, or nullopt when it is not under it.
inline std::optional<std::string> under_container(std::string_view path, std::string_view container) {
    std::string norm(path);
    std::replace(norm.begin(), norm.end(), '\\', '/');
    if (norm.substr(0, container.size()) != container) return std::nullopt;
    if (norm.size() > container.size() && norm[container.size()] != '/') return std::nullopt;
    return norm.substr(container.size());
}

inline skill_path resolve_skill_path(std::string_view path, std::string_view rel,
                                     const skill_catalog& catalog, bool for_listing) {
    namespace fs = std::filesystem;
    skill_path out;
    const std::string not_found = fmt::format(
        fmt::runtime(for_listing ? "Error: Directory not found: {}" : "Error: File not found: {}"), path);
    if (path.find('\0') != std::string_view::npos) {
        out.error = "Error: Access denied: path contains a NUL character";
        return out;
    }
    std::vector<std::string> parts;
    for (std::size_t start = 0; start <= rel.size();) {
        std::size_t slash = rel.find('/', start);
        if (slash == std::string_view::npos) slash = rel.size();
        std::string_view part = rel.substr(start, slash - start);
        if (part == "..") {
            // Text kept for parity with DeerFlow (reference deerflow.md §5.3).
            out.error = "Error: Access denied: path traversal detected";
            return out;
        }
        if (!part.empty() && part != ".") parts.emplace_back(part);
        start = slash + 1;
    }
    if (parts.empty()) {
        out.is_root = true;
        return out;
    }
    skill_category category;
    if (parts[0] == "public")
        category = skill_category::public_skill;
    else if (parts[0] == "custom")
        category = skill_category::custom_skill;
    else {
        out.error = not_found;
        return out;
    }
    if (parts.size() == 1) {
        out.level = category;
        return out;
    }
    out.owner = catalog.find(category, parts[1]);
    if (!out.owner) {
        out.error = not_found;
        return out;
    }
    if (!out.owner->enabled) {
        out.error = fmt::format(fmt::runtime(text_skill_disabled), out.owner->name);
        return out;
    }
    fs::path host = out.owner->directory;
    for (std::size_t i = 2; i < parts.size(); ++i)
        host /= parts[i];
    const fs::path canonical = skill_canonical(host);
    if (!skill_within(canonical, skill_canonical(out.owner->directory))) {
        out.error = "Error: Access denied: path traversal detected"; // a link out of the folder
        return out;
    }
    out.host = canonical;
    out.is_skill_md = parts.size() == 3 && parts[2] == "SKILL.md";
    return out;
}

/// DeerFlow's read_file answers for a file under a skill folder: line range,
/// UTF-8 check, head truncation (texts of reference deerflow.md §5.3).
inline tool_status read_skill_file(const skill_path& p, std::string_view shown,
                                   const boost::json::object& args, std::string& text) {
    std::string_view bad;
    auto line_arg = [&](std::string_view key) -> std::optional<std::int64_t> {
        const auto* v = args.if_contains(key);
        if (!v || v->is_null()) return std::nullopt;
        if (v->is_int64()) return v->get_int64();
        if (v->is_uint64())
            return static_cast<std::int64_t>(std::min<std::uint64_t>(v->get_uint64(), INT64_MAX));
        if (v->is_string()) { // models send "5" as often as 5
            const auto& s = v->get_string();
            std::int64_t n = 0;
            auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
            if (ec == std::errc() && p == s.data() + s.size()) return n;
        }
        bad = key;
        return std::nullopt;
    };
    auto give = [&](std::string t, tool_status status) {
        text = std::move(t);
        return status;
    };
    const auto start = line_arg("start_line");
    const auto end = line_arg("end_line");
    if (!bad.empty())
        return give(detail::format("Error: argument '{}' must be an integer", bad), tool_status::error);
    if (start && *start < 1) return give("(start_line must be >= 1)", tool_status::ok);
    if (end && *end < 1) return give("(end_line must be >= 1)", tool_status::ok);
    if (start && end && *start > *end)
        return give("(start_line > end_line — no lines in range)", tool_status::ok);
    std::error_code ec;
    if (p.owner == nullptr || p.is_root || std::filesystem::is_directory(p.host, ec))
        return give(detail::format("Error: Path is a directory, not a file: {}", shown), tool_status::error);
    std::string content;
    if (!std::filesystem::is_regular_file(p.host, ec) || !skill_read_file(p.host, content))
        return give(detail::format("Error: File not found: {}", shown), tool_status::error);
    if (!is_utf8_text(content))
        return give(
            detail::format("Error: cannot read '{}' as text — it appears to be a binary file (e.g. .xlsx, "
                           ".pdf, or an image). read_file only supports UTF-8 text. Use bash with a "
                           "suitable library instead (pandas/openpyxl for spreadsheets), or view_image for "
                           "images.",
                           shown),
            tool_status::error);
    if (start || end) {
        std::vector<std::string_view> lines;
        std::string_view rest = content;
        while (!rest.empty()) {
            const std::size_t nl = rest.find('\n');
            const std::size_t len = nl == std::string_view::npos ? rest.size() : nl + 1;
            lines.push_back(rest.substr(0, len));
            rest.remove_prefix(len);
        }
        const auto first = static_cast<std::size_t>(start.value_or(1));
        if (first > lines.size()) return give("(start_line exceeds file length)", tool_status::ok);
        const auto last =
            std::min<std::size_t>(end ? static_cast<std::size_t>(*end) : lines.size(), lines.size());
        std::string selected;
        for (std::size_t i = first - 1; i < last; ++i)
            selected += lines[i];
        content = std::move(selected);
    }
    if (content.empty()) return give("(empty)", tool_status::ok);
    text = head_truncate(content, 50000, "Use start_line/end_line to read a specific range");
    return tool_status::ok;
}

/// ls under the container path: two levels, sorted, folders with a trailing
/// `/`, links not followed.
inline std::string list_skill_path(const skill_path& p, std::string_view container,
                                   const skill_catalog& catalog) {
    namespace fs = std::filesystem;
    std::vector<std::string> lines;
    if (p.is_root || p.level) {
        for (auto category : {skill_category::public_skill, skill_category::custom_skill}) {
            if (p.level && *p.level != category) continue;
            const std::string dir = detail::format("{}/{}", container, skill_category_name(category));
            if (p.is_root) lines.push_back(dir + "/");
            for (const auto& s : catalog.skills)
                if (s.category == category) lines.push_back(detail::format("{}/{}/", dir, s.folder()));
        }
    } else {
        std::error_code ec;
        const fs::path root = p.host;
        if (!fs::is_directory(root, ec)) return {};
        const fs::path folder = skill_canonical(p.owner->directory);
        const std::string base =
            detail::format("{}/{}/{}", container, skill_category_name(p.owner->category), p.owner->folder());
        for (fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
             !ec && it != end; it.increment(ec)) {
            if (it.depth() >= 1) it.disable_recursion_pending();
            const auto st = it->symlink_status(ec);
            const bool dir = fs::is_directory(st);
            const std::string rel = it->path().lexically_relative(folder).generic_string();
            lines.push_back(detail::format("{}/{}{}", base, rel, dir ? "/" : ""));
        }
    }
    std::sort(lines.begin(), lines.end());
    std::string out;
    for (const auto& l : lines)
        out += (out.empty() ? "" : "\n") + l;
    return out;
}

} // namespace detail

} // namespace agentware

#endif
