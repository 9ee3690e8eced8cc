#ifndef AGENTWARE_SKILLS_SKILLS_HPP
#define AGENTWARE_SKILLS_SKILLS_HPP

// Skills (DeerFlow's skills, reference next.md §3.4): a skill is a folder
// with a SKILL.md whose YAML front matter gives its name, description and,
// optionally, its license and allowed tools; the rest of the file is its
// instructions. Skills live under two host roots, public and custom, which
// the model sees read-only at /mnt/skills/public and /mnt/skills/custom.
//
//  * load_skills scans the roots into a skill_catalog (a folder whose
//    SKILL.md is bad becomes a warning, not an error);
//  * skills_prompt_section renders the index of the enabled skills (and the
//    names of the disabled ones) in DeerFlow's <skill_system> block, for the
//    lead agent's system prompt;
//  * the `skills` middleware (<agentware/middleware/skills.hpp>; with
//    make_skills, <agentware/middleware/skills_from_folders.hpp>) serves
//    read_file and ls under /mnt/skills from the roots.
//
// Needs yaml-cpp (the package's optional component `yaml`).

#include <agentware/config/yaml.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/skills/catalog.hpp>

#include <boost/json/value.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace agentware {

/// Parses a SKILL.md: front matter between a first line `---` and the next
/// line `---`, YAML with a non-empty `name` and `description` (strings),
/// optional `license` (a string) and `allowed-tools` (a list of strings);
/// other keys are allowed and ignored. `$NAME` values stay text. Throws
/// skill_error naming `source`.
inline skill parse_skill_md(std::string_view text, std::string_view source = "SKILL.md") {
    auto fail = [&](const std::string& problem) -> skill_error {
        return skill_error(detail::format("{}: {}", source, problem));
    };
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3); // a byte-order mark
    auto line_end = [&](std::size_t from) {
        const std::size_t nl = text.find('\n', from);
        return nl == std::string_view::npos ? text.size() : nl;
    };
    auto is_fence = [&](std::size_t from, std::size_t to) {
        return detail::trim(text.substr(from, to - from)) == "---" && text.substr(from, 3) == "---";
    };
    const std::size_t first_end = line_end(0);
    if (!is_fence(0, first_end)) throw fail("no front matter (a first line ---, YAML, then a line ---)");
    std::size_t at = first_end + 1;
    std::optional<std::size_t> front_end;
    std::size_t body_at = text.size();
    while (at < text.size()) {
        const std::size_t end = line_end(at);
        if (is_fence(at, end)) {
            front_end = at;
            body_at = std::min(end + 1, text.size());
            break;
        }
        at = end + 1;
    }
    if (!front_end) throw fail("the front matter has no closing line ---");
    const std::size_t front_begin = std::min(first_end + 1, *front_end);
    yaml_read_options yo;
    yo.source = std::string(source);
    yo.expand_env = false;
    boost::json::value front;
    try {
        front = yaml_to_json(text.substr(front_begin, *front_end - front_begin), yo);
    } catch (const json_error& e) {
        throw skill_error(e.path().empty() ? e.problem() : detail::format("{}: {}", source, e.what()));
    }
    if (!front.is_object())
        throw fail(
            detail::format("the front matter must be a mapping of keys, got {}", detail::json_shown(front)));
    skill s;
    try {
        json_reader r(front.get_object(), "front matter");
        auto name = r.optional<std::string>("name");
        auto description = r.optional<std::string>("description");
        if (!name || detail::trim(*name).empty()) throw fail("front matter: `name` is missing or empty");
        if (!description || detail::trim(*description).empty())
            throw fail("front matter: `description` is missing or empty");
        s.name = std::string(detail::trim(*name));
        if (s.name.find_first_of("\r\n") != std::string::npos) throw fail("front matter: `name` spans lines");
        s.description = std::string(detail::trim(*description));
        s.license = r.optional<std::string>("license").value_or("");
        s.allowed_tools = r.optional<std::vector<std::string>>("allowed-tools");
    } catch (const json_error& e) {
        throw fail(e.what());
    }
    s.instructions = std::string(text.substr(body_at));
    return s;
}

namespace detail {

inline void scan_skill_root(const std::filesystem::path& root, skill_category category,
                            const skills_options& options, const skill_states& states, skill_catalog& out) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(root, ec)) return;
    const fs::path canonical_root = skill_canonical(root);
    std::vector<fs::path> folders;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
        folders.push_back(it->path());
    std::sort(folders.begin(), folders.end());
    for (const auto& dir : folders) {
        const std::string folder = dir.filename().string();
        const std::string shown = detail::format("{}/{}/SKILL.md", skill_category_name(category), folder);
        if (folder.starts_with('.') || !fs::is_directory(dir, ec)) continue;
        if (!skill_within(skill_canonical(dir), canonical_root)) {
            out.warnings.push_back(
                detail::format("{}: the folder leads outside the skills root; skipped", shown));
            continue;
        }
        const fs::path file = dir / "SKILL.md";
        if (!fs::is_regular_file(file, ec)) continue; // not a skill
        if (!skill_within(skill_canonical(file), skill_canonical(dir))) {
            out.warnings.push_back(detail::format("{}: the file leads outside its folder; skipped", shown));
            continue;
        }
        const auto size = fs::file_size(file, ec);
        if (ec || size > options.max_skill_file_bytes) {
            out.warnings.push_back(
                detail::format("{}: larger than {} bytes; skipped", shown, options.max_skill_file_bytes));
            continue;
        }
        std::string text;
        if (!skill_read_file(file, text)) {
            out.warnings.push_back(detail::format("{}: cannot be read; skipped", shown));
            continue;
        }
        try {
            skill s = parse_skill_md(text, shown);
            s.category = category;
            s.directory = dir;
            if (auto st = states.find(s.name); st != states.end()) s.enabled = st->second;
            out.skills.push_back(std::move(s));
        } catch (const skill_error& e) {
            out.warnings.push_back(std::string(e.what()) + "; skipped");
        }
    }
}

} // namespace detail

/// Scans `{path}/public` and the custom root (`custom_path`, else
/// `{path}/custom`): each folder with a SKILL.md is a skill, enabled unless
/// `states` says otherwise. Hidden folders are passed over; a folder whose
/// SKILL.md is bad, too large, or reached through a link that leaves the root
/// becomes a warning. A missing root is no error (no skills there).
inline skill_catalog load_skills(const skills_options& options, const skill_states& states = {}) {
    options.validate();
    skill_catalog out;
    const std::filesystem::path base(options.path);
    detail::scan_skill_root(base / "public", skill_category::public_skill, options, states, out);
    detail::scan_skill_root(options.custom_path.empty() ? base / "custom"
                                                        : std::filesystem::path(options.custom_path),
                            skill_category::custom_skill, options, states, out);
    return out;
}

} // namespace agentware

#endif
