// Loading skills: SKILL.md front matter and its errors, the public and custom
// roots, the enabled states from the extensions config.
#include <agentware/skills/skills.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <string>
#include <string_view>
#include <vector>

using namespace agentware;

TEST_CASE("SKILL.md front matter: name, description, license, allowed tools, body", "[skills]") {
    auto s = parse_skill_md("---\nname: pdf\ndescription: Fill PDF forms.\nlicense: Apache-2.0\n"
                            "allowed-tools: [read_file, bash]\nversion: 2\n---\n# PDF\nStep one.\n");
    CHECK(s.name == "pdf");
    CHECK(s.description == "Fill PDF forms.");
    CHECK(s.license == "Apache-2.0");
    REQUIRE(s.allowed_tools);
    CHECK(*s.allowed_tools == std::vector<std::string>{"read_file", "bash"});
    CHECK(s.instructions == "# PDF\nStep one.\n");
    auto none = parse_skill_md("---\nname: a\ndescription: b\nallowed-tools: []\n---");
    REQUIRE(none.allowed_tools);
    CHECK(none.allowed_tools->empty());
    CHECK(none.instructions.empty());
    CHECK_FALSE(parse_skill_md("---\nname: a\ndescription: b\n---\n").allowed_tools);
    // $NAME in a skill stays text: a skill cannot pull the environment into the prompt.
    CHECK(parse_skill_md("---\nname: a\ndescription: $HOME\n---\n").description == "$HOME");
}

TEST_CASE("bad SKILL.md front matter is an error that says what is wrong", "[skills]") {
    auto error = [](std::string_view text) {
        try {
            parse_skill_md(text, "public/x/SKILL.md");
        } catch (const skill_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(error("# no front matter\n") ==
          "public/x/SKILL.md: no front matter (a first line ---, YAML, then a line ---)");
    CHECK(error("---\nname: a\ndescription: b\n") ==
          "public/x/SKILL.md: the front matter has no closing line ---");
    CHECK(error("---\ndescription: b\n---\n") ==
          "public/x/SKILL.md: front matter: `name` is missing or empty");
    CHECK(error("---\nname: '  '\ndescription: b\n---\n") ==
          "public/x/SKILL.md: front matter: `name` is missing or empty");
    CHECK(error("---\nname: a\n---\n") ==
          "public/x/SKILL.md: front matter: `description` is missing or empty");
    CHECK(error("---\nname: 3\ndescription: b\n---\n") ==
          "public/x/SKILL.md: front matter.name: expected a string, got 3");
    CHECK(error("---\nname: a\ndescription: b\nallowed-tools: bash\n---\n") ==
          "public/x/SKILL.md: front matter.allowed-tools: expected an array, got \"bash\"");
    CHECK(error("---\nname: a\ndescription: b\nallowed-tools: [1]\n---\n") ==
          "public/x/SKILL.md: front matter.allowed-tools[0]: expected a string, got 1");
    CHECK(error("---\n- a\n- b\n---\n") ==
          "public/x/SKILL.md: the front matter must be a mapping of keys, got [\"a\",\"b\"]");
    CHECK(error("---\n---\n").find("the front matter must be a mapping") != std::string::npos);
    const std::string malformed = error("---\nname: [a\ndescription: b\n---\n");
    CHECK(malformed.starts_with("public/x/SKILL.md:"));
    CHECK(malformed.find("end of sequence flow") != std::string::npos);
}

TEST_CASE(
    "the catalog: public then custom skills, bad folders as warnings, states from the extensions config",
    "[skills]") {
    auto catalog = load_skills(skillstest::fixture_options());
    CHECK(skillstest::names(catalog) ==
          std::vector<std::string>{"data-analysis", "deep-research", "my-notes"});
    REQUIRE(catalog.warnings.size() == 1);
    CHECK(catalog.warnings[0] == "public/broken/SKILL.md: the front matter has no closing line ---; skipped");
    CHECK(catalog.skills[2].category == skill_category::custom_skill);
    CHECK(catalog.skills[0].description == "Analyse tabular data\nwith pandas.");

    auto states = read_skill_states(boost::json::parse(
        R"({"mcpServers": {}, "skills": {"data-analysis": {"enabled": false}, "my-notes": {"enabled": true}}})"));
    auto switched = load_skills(skillstest::fixture_options(), states);
    CHECK(skillstest::names(switched) ==
          std::vector<std::string>{"data-analysis (off)", "deep-research", "my-notes"});

    // The extensions config's bad values name their path.
    CHECK_THROWS_WITH(read_skill_states(boost::json::parse(R"({"skills": {"x": {"enabled": "no"}}})")),
                      "skills.x.enabled: expected true or false, got \"no\"");
    CHECK_THROWS_WITH(read_skill_states(boost::json::parse(R"({"skills": {"x": {"enable": false}}})")),
                      Catch::Matchers::StartsWith("skills.x.enable: unknown key"));
    CHECK(read_skill_states(boost::json::parse(R"({"mcpServers": {}})")).empty());

    // A custom root elsewhere; missing roots are no error.
    auto o = skillstest::fixture_options();
    o.custom_path = o.path + "/nowhere";
    CHECK(skillstest::names(load_skills(o)) == std::vector<std::string>{"data-analysis", "deep-research"});
    o.path = "/nonexistent/agentware/skills";
    CHECK(load_skills(o).skills.empty());
}
