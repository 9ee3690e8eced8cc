// The skills middleware: the read-only /mnt/skills paths (disabled skills
// refused with DeerFlow's text, hostile paths refused), glob and grep there,
// skill_context recording.
#include <agentware/middleware/skills.hpp>

#include "../skills/support.hpp"
#include "deerflow_support.hpp"

#include <agentware/middleware/skills_from_folders.hpp>

#include <catch2/catch.hpp>

#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace agentware;

namespace skillstest {

namespace fs = std::filesystem;

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

TEST_CASE("read_file and ls under /mnt/skills read the skill folders, a SKILL.md read lands in skill_context",
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
