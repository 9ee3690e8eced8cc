// Skills: SKILL.md front matter, the public and custom roots, enabled state
// from the extensions config, the <skill_system> prompt block, the
// read-only /mnt/skills paths (disabled skills refused with DeerFlow's text,
// hostile paths refused), glob and grep there, skill_context recording, and
// the skill tool policy (allowed-tools of the loaded skills).
#include "deerflow_support.hpp"

#include <agentware/middleware/durable_context.hpp>
#include <agentware/middleware/skill_tool_policy.hpp>
#include <agentware/skills/skills.hpp>

#include <catch2/catch.hpp>

#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace agentware;

namespace skillstest {

namespace fs = std::filesystem;

inline skills_options fixture_options() {
    skills_options o;
    o.path = std::string(AGENTWARE_TEST_DATA_DIR) + "/skills";
    return o;
}

inline std::vector<std::string> names(const skill_catalog& c) {
    std::vector<std::string> out;
    for (const auto& s : c.skills)
        out.push_back(s.name + (s.enabled ? "" : " (off)"));
    return out;
}

// One wrap_tool_call with a `next` that plays the sandbox's tool.
inline tool_response call(skills& mw, std::string name, std::string args_json, bool* ran = nullptr) {
    runtime rt;
    tool_request<basic_state<type_list<skill_context_field>>> req{
        tool_call{"c1", name, boost::json::parse(args_json).as_object()}, nullptr, nullptr, &rt};
    return mw.wrap_tool_call(req, [&](auto& r) {
        if (ran) *ran = true;
        return tool_response{tool_message(r.call->id, r.call->name, "from the sandbox"), {}, false};
    });
}

inline std::string text(skills& mw, std::string name, std::string args_json) {
    return call(mw, std::move(name), std::move(args_json)).msg.text();
}

} // namespace skillstest

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

TEST_CASE("the skills options read DeerFlow's skills section; bad values name their path", "[skills]") {
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

TEST_CASE("read_file and ls under /mnt/skills read the skill folders; a SKILL.md read lands in skill_context",
          "[skills]") {
    skills mw(skillstest::fixture_options());
    mw.clock = [] {
        return std::chrono::sys_days(std::chrono::year(2026) / 11 / 24) + std::chrono::hours(8);
    };
    auto r = skillstest::call(mw, "read_file",
                              R"({"description":"d","path":"/mnt/skills/public/deep-research/SKILL.md"})");
    CHECK(r.msg.text().starts_with("---\nname: deep-research\n"));
    CHECK_FALSE(r.msg.is_error());
    REQUIRE(r.update.fields.contains("skill_context"));
    auto entries = boost::json::value_to<std::vector<skill_entry>>(r.update.fields.at("skill_context"));
    REQUIRE(entries.size() == 1);
    CHECK(entries[0] == skill_entry{"deep-research", "/mnt/skills/public/deep-research/SKILL.md",
                                    "Research a question in depth <with sources> & cite each claim.",
                                    "2026-11-24T08:00:00Z"});

    // Another file of the skill is read, and not recorded.
    auto ref = skillstest::call(
        mw, "read_file",
        R"({"description":"d","path":"/mnt/skills/public/deep-research/references/method.md"})");
    CHECK(ref.msg.text() == "Cite every source you use.\n");
    CHECK(ref.update.empty());
    CHECK(
        skillstest::text(
            mw, "read_file",
            R"({"path":"/mnt/skills/public/deep-research/SKILL.md","start_line":2,"end_line":3})") ==
        "name: deep-research\ndescription: Research a question in depth <with sources> & cite each claim.\n");
    CHECK(skillstest::text(mw, "read_file",
                           R"({"path":"/mnt/skills/public/deep-research/SKILL.md","start_line":0})") ==
          "(start_line must be >= 1)");
    CHECK(skillstest::text(
              mw, "read_file",
              R"({"path":"/mnt/skills/public/deep-research/SKILL.md","start_line":"2","end_line":"2"})") ==
          "name: deep-research\n");
    CHECK(skillstest::text(mw, "read_file",
                           R"({"path":"/mnt/skills/public/deep-research/SKILL.md","end_line":true})") ==
          "Error: argument 'end_line' must be an integer");
    CHECK(skillstest::text(mw, "read_file", R"({"path":"/mnt/skills/public/deep-research/nope.md"})") ==
          "Error: File not found: /mnt/skills/public/deep-research/nope.md");
    CHECK(skillstest::text(mw, "read_file", R"({"path":"/mnt/skills/public/deep-research"})") ==
          "Error: Path is a directory, not a file: /mnt/skills/public/deep-research");

    CHECK(skillstest::text(mw, "ls", R"({"path":"/mnt/skills"})") ==
          "/mnt/skills/custom/\n/mnt/skills/custom/my-notes/\n/mnt/skills/public/\n"
          "/mnt/skills/public/data-analysis/\n/mnt/skills/public/deep-research/");
    CHECK(skillstest::text(mw, "ls", R"({"path":"/mnt/skills/public/deep-research"})") ==
          "/mnt/skills/public/deep-research/SKILL.md\n/mnt/skills/public/deep-research/references/\n"
          "/mnt/skills/public/deep-research/references/method.md");
    CHECK(skillstest::text(mw, "ls", R"({"path":"/mnt/skills/legacy"})") ==
          "Error: Directory not found: /mnt/skills/legacy");

    // Paths elsewhere, writes, and other tools go on to the sandbox.
    bool ran = false;
    CHECK(
        skillstest::call(mw, "read_file", R"({"path":"/mnt/user-data/workspace/a.txt"})", &ran).msg.text() ==
        "from the sandbox");
    CHECK(ran);
    ran = false;
    skillstest::call(mw, "write_file",
                     R"({"path":"/mnt/skills/public/deep-research/SKILL.md","content":"x"})", &ran);
    CHECK(ran);
    ran = false;
    skillstest::call(mw, "read_file", R"({"path":"/mnt/skillset/x"})", &ran);
    CHECK(ran);
}

TEST_CASE("a disabled skill's files cannot be read, listed or searched", "[skills]") {
    skills mw(skillstest::fixture_options(), skill_states{{"data-analysis", false}});
    const std::string refused = "Error: Skill 'data-analysis' is disabled. Access to its files is blocked. "
                                "Enable the skill in settings "
                                "before using it.";
    bool ran = false;
    auto r =
        skillstest::call(mw, "read_file", R"({"path":"/mnt/skills/public/data-analysis/SKILL.md"})", &ran);
    CHECK(r.msg.text() == refused);
    CHECK(r.msg.is_error());
    CHECK(r.update.empty());
    CHECK_FALSE(ran);
    CHECK(skillstest::text(mw, "ls", R"({"path":"/mnt/skills/public/data-analysis"})") == refused);
    CHECK(skillstest::text(mw, "grep", R"({"pattern":"x","path":"/mnt/skills/public/data-analysis/"})") ==
          refused);
    CHECK(skillstest::text(mw, "glob", R"({"pattern":"*","path":"/mnt/skills/public/data-analysis/sub"})") ==
          refused);
    CHECK(skillstest::text(mw, "cat", R"({"path":"/mnt/skills/public/data-analysis/SKILL.md"})") == refused);
}

TEST_CASE("hostile paths under /mnt/skills are refused", "[skills]") {
    dftest::temp_dir tmp;
    const auto root = tmp.path / "skills";
    dftest::write(root / "public" / "good" / "SKILL.md", "---\nname: good\ndescription: fine\n---\nbody\n");
    dftest::write(tmp.path / "secret.txt", "top secret");
    dftest::write(tmp.path / "outside" / "SKILL.md", "---\nname: outside\ndescription: escapes\n---\n");
    std::filesystem::create_symlink(tmp.path / "secret.txt", root / "public" / "good" / "leak.txt");
    std::filesystem::create_directory_symlink(tmp.path / "outside", root / "public" / "linked");
    std::filesystem::create_directory_symlink(tmp.path, root / "public" / "good" / "up");
    skills_options o;
    o.path = root.string();
    skills mw(o);
    // A folder linked from outside the root is no skill.
    REQUIRE(skillstest::names(mw.catalog()) == std::vector<std::string>{"good"});
    REQUIRE(mw.catalog().warnings.size() == 1);
    CHECK(mw.catalog().warnings[0] ==
          "public/linked/SKILL.md: the folder leads outside the skills root; skipped");

    const std::string traversal = "Error: Access denied: path traversal detected";
    CHECK(skillstest::text(mw, "read_file", R"({"path":"/mnt/skills/public/good/../../../secret.txt"})") ==
          traversal);
    CHECK(skillstest::text(mw, "read_file", R"({"path":"/mnt/skills/public/good/..\\..\\secret.txt"})") ==
          traversal);
    CHECK(skillstest::text(mw, "read_file", R"({"path":"/mnt/skills/public/good/leak.txt"})") == traversal);
    CHECK(skillstest::text(mw, "read_file", R"({"path":"/mnt/skills/public/good/up/secret.txt"})") ==
          traversal);
    CHECK(skillstest::text(mw, "read_file", R"({"path":"/mnt/skills/public/linked/SKILL.md"})") ==
          "Error: File not found: /mnt/skills/public/linked/SKILL.md");
    CHECK(skillstest::text(mw, "read_file", "{\"path\":\"/mnt/skills/public/good/SKILL.md\\u0000x\"}") ==
          "Error: Access denied: path contains a NUL character");
    // ls does not follow links out of the folder.
    const std::string listing = skillstest::text(mw, "ls", R"({"path":"/mnt/skills/public/good"})");
    CHECK(listing.find("secret") == std::string::npos);
    CHECK(listing.find("/mnt/skills/public/good/SKILL.md") != std::string::npos);
    // Redundant separators and dots are read as the path they spell.
    CHECK(skillstest::text(mw, "read_file", R"({"path":"/mnt/skills//public/./good/SKILL.md"})")
              .starts_with("---\nname: good"));
}

TEST_CASE("in an agent, a SKILL.md read through read_file is recorded in skill_context", "[skills]") {
    scripted_model model(
        {test::calls({test::call("r1", "read_file",
                                 R"({"description":"load","path":"/mnt/skills/custom/my-notes/SKILL.md"})")}),
         test::calls(
             {test::call("r2", "read_file",
                         R"({"description":"again","path":"/mnt/skills/public/deep-research/SKILL.md"})")}),
         ai_message("done")});
    auto read_file = make_tool("read_file", "Reads a file.", R"({"type":"object"})",
                               [](const boost::json::object&) { return std::string("sandbox file"); });
    skills mw(skillstest::fixture_options());
    auto a = make_agent(model, tool_set(read_file), mw);
    decltype(a)::state_type state;
    auto r = a.run(state, "take notes");
    REQUIRE(r.ok());
    const auto& ctx = get<skill_context_field>(state);
    REQUIRE(ctx.size() == 2);
    CHECK(ctx[0].name == "my-notes");
    CHECK(ctx[0].path == "/mnt/skills/custom/my-notes/SKILL.md");
    CHECK(ctx[1].name == "deep-research");
}

TEST_CASE("skill_context keeps the last 8 skills, a re-read moved to the end, descriptions normalised",
          "[skills]") {
    skill_context_field::value_type ctx;
    for (int i = 0; i < 10; ++i)
        skill_context_field::merge(ctx, {skill_entry{"s" + std::to_string(i), "/p/" + std::to_string(i),
                                                     "  many\n\n spaces\t here ", "t"}});
    REQUIRE(ctx.size() == 8);
    CHECK(ctx.front().name == "s2");
    CHECK(ctx.back().description == "many spaces here");
    skill_context_field::merge(ctx, {skill_entry{"s3", "/p/3", std::string(600, 'x'), "t2"}});
    REQUIRE(ctx.size() == 8);
    CHECK(ctx.back().path == "/p/3");
    CHECK(ctx.back().description.size() == 500);
    CHECK(ctx[0].name == "s2");
    CHECK(ctx[1].name == "s4");
}

TEST_CASE("durable_context lists the skills of skill_context when the state has the field", "[skills]") {
    scripted_model model(
        {test::calls(
             {test::call("r1", "read_file",
                         R"({"description":"load","path":"/mnt/skills/public/deep-research/SKILL.md"})")}),
         ai_message("done")});
    auto read_file = make_tool("read_file", "Reads a file.", R"({"type":"object"})",
                               [](const boost::json::object&) { return std::string("sandbox file"); });
    auto a = make_agent(model, tool_set(read_file), durable_context{}, skills(skillstest::fixture_options()));
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "research this").ok());
    auto requests = model.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[0].messages.size() == 1); // nothing to project yet
    const std::string data = requests[1].messages[1].text();
    CHECK(data ==
          "<durable_context_data>\n## Active skills (loaded earlier - re-read the file before applying its "
          "instructions)\n- deep-research: Research a question in depth &lt;with sources&gt; &amp; cite each "
          "claim. -> /mnt/skills/public/deep-research/SKILL.md\n</durable_context_data>");
    // Without the field (no skills middleware), the projection is as before.
    CHECK(durable_context{}.project("", {}).empty());
}

TEST_CASE("glob and grep under /mnt/skills are answered from the skills' folders", "[skills]") {
    skills mw(skillstest::fixture_options(), skill_states{{"data-analysis", false}});
    bool ran = false;
    auto r = skillstest::call(mw, "glob", R"({"pattern":"**/*.md","path":"/mnt/skills"})", &ran);
    CHECK_FALSE(ran);
    // Enabled skills only (data-analysis is off), sorted, with their /mnt/skills paths.
    CHECK(r.msg.text() == "Found 3 paths under /mnt/skills\n"
                          "1. /mnt/skills/public/deep-research/SKILL.md\n"
                          "2. /mnt/skills/public/deep-research/references/method.md\n"
                          "3. /mnt/skills/custom/my-notes/SKILL.md");
    CHECK(skillstest::text(mw, "glob",
                           R"({"pattern":"references/*","path":"/mnt/skills/public/deep-research"})") ==
          "Found 1 paths under /mnt/skills/public/deep-research\n"
          "1. /mnt/skills/public/deep-research/references/method.md");
    CHECK(skillstest::text(mw, "glob", R"({"pattern":"*.py","path":"/mnt/skills/public"})") ==
          "No files matched under /mnt/skills/public");
    CHECK(skillstest::text(mw, "glob", R"({"pattern":"*","path":"/mnt/skills/public/deep-research/nope"})") ==
          "Error: Directory not found: /mnt/skills/public/deep-research/nope");
    CHECK(skillstest::text(mw, "glob", R"({"pattern":"**","path":"/mnt/skills","max_results":1})") ==
          "Found 1 paths under /mnt/skills (showing first 1)\n1. /mnt/skills/public/deep-research/SKILL.md\n"
          "Results truncated. Narrow the path or pattern to see fewer matches.");

    CHECK(skillstest::text(mw, "grep", R"({"pattern":"cite","path":"/mnt/skills"})") ==
          "Found 2 matches under /mnt/skills\n"
          "/mnt/skills/public/deep-research/SKILL.md:3: description: Research a question in depth <with "
          "sources> "
          "& cite each claim.\n"
          "/mnt/skills/public/deep-research/references/method.md:1: Cite every source you use.");
    CHECK(skillstest::text(mw, "grep",
                           R"({"pattern":"cite","path":"/mnt/skills","case_sensitive":true,)"
                           R"("glob":"method.md"})") == "No matches found under /mnt/skills");
    CHECK(skillstest::text(
              mw, "grep",
              R"({"pattern":"Cite","path":"/mnt/skills/public/deep-research/references/method.md",)"
              R"("literal":true})") ==
          "Found 1 matches under /mnt/skills/public/deep-research/references/method.md\n"
          "/mnt/skills/public/deep-research/references/method.md:1: Cite every source you use.");
    auto bad = skillstest::call(mw, "grep", R"({"pattern":"(","path":"/mnt/skills"})");
    CHECK(bad.msg.is_error());
    CHECK(bad.msg.text().starts_with("Error: Invalid regex pattern: "));
    auto missing = skillstest::call(mw, "glob", R"({"path":"/mnt/skills"})");
    CHECK(missing.msg.is_error());
    // Outside /mnt/skills, the sandbox answers.
    ran = false;
    skillstest::call(mw, "grep", R"({"pattern":"x","path":"/mnt/user-data/workspace"})", &ran);
    CHECK(ran);
}

namespace skillstest {

using policy_state = basic_state<type_list<skill_context_field>>;

inline policy_state loaded(std::vector<std::string> paths) {
    policy_state s;
    for (auto& p : paths)
        get<skill_context_field>(s).push_back(skill_entry{"x", std::move(p), "", ""});
    return s;
}

inline std::string policy_call(skill_tool_policy& p, const policy_state& s, std::string name, bool* ran) {
    runtime rt;
    tool_request<policy_state> req{tool_call{"c1", name, {}}, nullptr, &s, &rt};
    return p
        .wrap_tool_call(req,
                        [&](auto& r) {
                            *ran = true;
                            return tool_response{tool_message(r.call->id, r.call->name, "ran"), {}, false};
                        })
        .msg.text();
}

} // namespace skillstest

TEST_CASE("skill_tool_policy: the loaded skills' allowed-tools limit the tools", "[skills]") {
    auto catalog = std::make_shared<const skill_catalog>(load_skills(skillstest::fixture_options()));
    skill_tool_policy policy(catalog);
    bool ran = false;
    // Nothing loaded: no restriction.
    const auto none = skillstest::loaded({});
    CHECK_FALSE(policy.allowed_tools(none));
    CHECK(skillstest::policy_call(policy, none, "bash", &ran) == "ran");
    CHECK(ran);
    // deep-research declares [web_search, read_file]: bash is refused with DeerFlow's text, before the tool
    // runs.
    const auto research = skillstest::loaded({"/mnt/skills/public/deep-research/SKILL.md"});
    ran = false;
    CHECK(skillstest::policy_call(policy, research, "bash", &ran) ==
          "Error: Tool 'bash' is not allowed by the active skill policy.");
    CHECK_FALSE(ran);
    CHECK(skillstest::policy_call(policy, research, "web_search", &ran) == "ran");
    // read_file, describe_skill, review_skill_package and tool_search stay; task does not.
    CHECK(*policy.allowed_tools(research) == std::set<std::string, std::less<>>{"describe_skill", "read_file",
                                                                                "review_skill_package",
                                                                                "tool_search", "web_search"});
    // my-notes declares [] (no tools of its own); the union with deep-research's list.
    const auto both = skillstest::loaded(
        {"/mnt/skills/public/deep-research/SKILL.md", "/mnt/skills/custom/my-notes/SKILL.md"});
    CHECK(policy.allowed_tools(both)->contains("web_search"));
    const auto notes = skillstest::loaded({"/mnt/skills/custom/my-notes/SKILL.md"});
    CHECK_FALSE(policy.allowed_tools(notes)->contains("web_search"));
    // A skill without the key (data-analysis) restricts nothing on its own...
    const auto analysis = skillstest::loaded({"/mnt/skills/public/data-analysis/SKILL.md"});
    CHECK_FALSE(policy.allowed_tools(analysis));
    // ...and adds nothing when another declares a list.
    const auto mixed = skillstest::loaded(
        {"/mnt/skills/public/data-analysis/SKILL.md", "/mnt/skills/custom/my-notes/SKILL.md"});
    CHECK_FALSE(policy.allowed_tools(mixed)->contains("bash"));
    // A loaded path that names no usable skill fails closed: only the always-allowed tools.
    const auto unknown = skillstest::loaded({"/mnt/skills/public/gone/SKILL.md"});
    CHECK(policy.allowed_tools(unknown)->size() == 4);
    CHECK(skillstest::policy_call(policy, unknown, "web_search", &ran) ==
          "Error: Tool 'web_search' is not allowed by the active skill policy.");
    // A subagent limited to other skills: deep-research does not count.
    skill_tool_policy limited(catalog, "/mnt/skills", std::vector<std::string>{"my-notes"});
    CHECK(limited.allowed_tools(research)->size() == 4);

    // The model is offered only the allowed tools.
    runtime rt;
    auto state = research;
    model_request<skillstest::policy_state> req;
    req.state = &state;
    req.rt = &rt;
    req.tools = std::vector<tool_schema>{tool_schema{"bash", "", {}}, tool_schema{"read_file", "", {}},
                                         tool_schema{"web_search", "", {}}};
    std::vector<std::string> offered;
    policy.wrap_model_call(req, [&](auto& r) {
        for (const auto& t : r.tools.get())
            offered.push_back(t.name);
        return model_response{ai_message("ok"), {}};
    });
    CHECK(offered == std::vector<std::string>{"read_file", "web_search"});
}
