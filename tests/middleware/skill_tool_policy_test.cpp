// skill_tool_policy: the allowed-tools of the loaded skills limit the tools run and offered.
#include <agentware/middleware/skill_tool_policy.hpp>

#include "../agent/support.hpp"
#include "../skills/support.hpp"

#include <agentware/middleware/skills_from_folders.hpp>
#include <agentware/skills/context.hpp>

#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace agentware;

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
