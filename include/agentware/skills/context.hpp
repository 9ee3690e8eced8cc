#ifndef AGENTWARE_SKILLS_CONTEXT_HPP
#define AGENTWARE_SKILLS_CONTEXT_HPP

// The `skill_context` state field: the skills whose SKILL.md the agent has
// read in this thread (DeerFlow's SkillEntry and merge_skill_context,
// reference §2). Without YAML: any middleware may declare the field.

#include <agentware/json/reader.hpp>
#include <agentware/message/detail/text.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// One skill the agent loaded by reading its SKILL.md.
struct skill_entry {
    std::string name;        ///< the skill's name (front matter)
    std::string path;        ///< the SKILL.md path the model read (/mnt/skills/...)
    std::string description; ///< whitespace collapsed, at most 500 characters
    std::string loaded_at;   ///< ISO 8601, UTC (`Z`)
    friend bool operator==(const skill_entry&, const skill_entry&) = default;
};

namespace detail {

/// Runs of whitespace as one space, no leading or trailing space, at most
/// `max` characters (whole UTF-8 sequences).
inline std::string collapse_whitespace(std::string_view text, std::size_t max) {
    std::string out;
    bool space = false;
    for (char c : text) {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            space = !out.empty();
            continue;
        }
        if (space) out += ' ';
        space = false;
        out += c;
    }
    return std::string(first_code_points(out, max));
}

} // namespace detail

/// The `skill_context` state field. An update's entries are normalised
/// (description collapsed and cut to 500 characters), then folded in by path:
/// a skill read again moves to the end; the last 8 are kept.
struct skill_context_field {
    static constexpr std::string_view name = "skill_context";
    using value_type = std::vector<skill_entry>;
    static constexpr std::size_t max_entries = 8;
    static constexpr std::size_t max_description_chars = 500;

    static void merge(value_type& current, value_type&& update) {
        for (auto& e : update) {
            e.description = detail::collapse_whitespace(e.description, max_description_chars);
            std::erase_if(current, [&](const skill_entry& c) { return c.path == e.path; });
            current.push_back(std::move(e));
        }
        if (current.size() > max_entries)
            current.erase(current.begin(), current.end() - static_cast<std::ptrdiff_t>(max_entries));
    }
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const skill_entry& e) {
    jv = boost::json::object{
        {"name", e.name}, {"path", e.path}, {"description", e.description}, {"loaded_at", e.loaded_at}};
}

/// Reads an entry; other keys (DeerFlow's dropped body keys) are ignored, as
/// its reducer drops them.
inline skill_entry tag_invoke(boost::json::value_to_tag<skill_entry>, const boost::json::value& jv) {
    json_reader r(jv);
    skill_entry e;
    e.path = r.required<std::string>("path");
    r.read("name", e.name).read("description", e.description).read("loaded_at", e.loaded_at);
    return e;
}

} // namespace agentware

#endif
