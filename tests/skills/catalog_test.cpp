// The skills catalog: DeerFlow's skills settings and the <skill_system> prompt block.
#include <agentware/skills/catalog.hpp>

#include "support.hpp"

#include <agentware/middleware/skills.hpp>
#include <agentware/skills/skills.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <string>
#include <vector>

using namespace agentware;

TEST_CASE("the skills options read DeerFlow's skills section, bad values name their path", "[skills]") {
    auto o = boost::json::value_to<skills_options>(
        boost::json::parse(R"({"path": "/srv/skills", "container_path": "/mnt/skills"})"));
    CHECK(o.path == "/srv/skills");
    CHECK(boost::json::value_to<skills_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(boost::json::value_to<skills_options>(boost::json::parse(R"({"paths": "x"})")),
                      Catch::Matchers::StartsWith("skills.paths: unknown key (known: path, container_path"));
    CHECK_THROWS_WITH(
        boost::json::value_to<skills_options>(boost::json::parse(R"({"container_path": "mnt"})")),
        "skills: container_path: an absolute path without a trailing / is expected, got \"mnt\"");
    CHECK_THROWS_WITH(boost::json::value_to<skills_options>(boost::json::parse(R"({"path": 3})")),
                      "skills.path: expected a string, got 3");
}

TEST_CASE("the prompt block lists the enabled skills, escaped, and names the disabled ones", "[skills]") {
    auto catalog = load_skills(skillstest::fixture_options(), skill_states{{"data-analysis", false}});
    const std::string block = skills_prompt_section(catalog);
    INFO(block);
    CHECK(block.starts_with("<skill_system>\n"));
    CHECK(block.ends_with("</skill_system>"));
    CHECK(block.find("**Progressive Loading Pattern:**") != std::string::npos);
    CHECK(block.find("**Skills are located at:** /mnt/skills\n") != std::string::npos);
    CHECK(block.find(
              "<available_skills>\n    <skill>\n        <name>deep-research</name>\n"
              "        <description>Research a question in depth &lt;with sources&gt; &amp; cite each "
              "claim. [built-in]</description>\n"
              "        <location>/mnt/skills/public/deep-research/SKILL.md</location>\n    </skill>\n") !=
          std::string::npos);
    CHECK(block.find("<description>$HOME stays text in a skill [custom, editable]</description>") !=
          std::string::npos);
    CHECK(block.find("<location>/mnt/skills/custom/my-notes/SKILL.md</location>") != std::string::npos);
    CHECK(block.find("<disabled_skills>\nThese skills are INSTALLED but DISABLED. You MUST NOT read") !=
          std::string::npos);
    CHECK(block.find("- data-analysis\n</disabled_skills>") != std::string::npos);
    CHECK(block.find("<name>data-analysis</name>") == std::string::npos);

    // A subagent's skills list narrows it; nothing to show is an empty block.
    const std::string narrowed =
        skills_prompt_section(catalog, "/mnt/skills", std::vector<std::string>{"my-notes"});
    CHECK(narrowed.find("deep-research") == std::string::npos);
    CHECK(narrowed.find("my-notes") != std::string::npos);
    CHECK(skills_prompt_section(catalog, "/mnt/skills", std::vector<std::string>{}).empty());
    CHECK(skills_prompt_section(skill_catalog{}).empty());
    // The same catalog gives the same block (the system prompt stays cacheable).
    CHECK(skills(skillstest::fixture_options(), skill_states{{"data-analysis", false}}).prompt_section() ==
          block);
}
