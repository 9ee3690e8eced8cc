#ifndef AGENTWARE_TESTS_SKILLS_SUPPORT_HPP
#define AGENTWARE_TESTS_SKILLS_SUPPORT_HPP

// The skills of the tests' fixture (tests/skills/public and tests/skills/custom),
// and the names in a catalog.

#include <agentware/skills/catalog.hpp>

#include <string>
#include <vector>

namespace skillstest {

using namespace agentware;

inline skills_options fixture_options() {
    skills_options o;
    o.path = std::string(AGENTWARE_TEST_DATA_DIR) + "/skills";
    return o;
}

// The catalog's skill names, a disabled one marked " (off)".
inline std::vector<std::string> names(const skill_catalog& c) {
    std::vector<std::string> out;
    for (const auto& s : c.skills)
        out.push_back(s.name + (s.enabled ? "" : " (off)"));
    return out;
}

} // namespace skillstest

#endif // AGENTWARE_TESTS_SKILLS_SUPPORT_HPP
