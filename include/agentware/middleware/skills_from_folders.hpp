#ifndef AGENTWARE_MIDDLEWARE_SKILLS_FROM_FOLDERS_HPP
#define AGENTWARE_MIDDLEWARE_SKILLS_FROM_FOLDERS_HPP

// The skills middleware over the skill folders on disk: load_skills (which
// parses SKILL.md's YAML front matter, so this needs yaml-cpp) and the
// middleware in one call.

#include <agentware/middleware/skills.hpp>
#include <agentware/skills/skills.hpp>

#include <utility>

namespace agentware {

/// The skills middleware over the catalog load_skills finds.
inline skills make_skills(skills_options options, const skill_states& states = {}) {
    skill_catalog catalog = load_skills(options, states);
    return skills(std::move(options), std::move(catalog));
}

} // namespace agentware

#endif
