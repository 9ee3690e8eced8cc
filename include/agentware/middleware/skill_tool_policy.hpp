#ifndef AGENTWARE_MIDDLEWARE_SKILL_TOOL_POLICY_HPP
#define AGENTWARE_MIDDLEWARE_SKILL_TOOL_POLICY_HPP

// A skill's `allowed-tools` (SKILL.md front matter) enforced for the skills
// the model has loaded (DeerFlow's SkillToolPolicyMiddleware, reference
// deerflow.md §4.1 #16 and next.md §3.4): once `skill_context` names a
// skill, the tools offered to the model and the tools it may call are the
// union of the `allowed-tools` lists of the loaded skills, plus a few
// framework tools that only read (read_file, ...). A skill that declares no
// list does not restrict; when no loaded skill declares one, nothing is
// restricted. Best effort, as DeerFlow says: not a security boundary (the
// model chooses what it loads).

#include <agentware/agent/wrap.hpp>
#include <agentware/core/fields.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/skills/catalog.hpp>
#include <agentware/skills/context.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace agentware {

/// The tools a loaded skill's `allowed-tools` never takes away (DeerFlow's
/// ALWAYS_AVAILABLE_BUILTIN_TOOL_NAMES): reading files and discovering tools
/// and skills. `task` is not one of them: a skill that delegates says so.
inline constexpr std::string_view skill_policy_always_allowed[] = {"describe_skill", "read_file",
                                                                   "review_skill_package", "tool_search"};

/// The tools the loaded skills allow: empty optional = no restriction.
/// `loaded` holds skill_context's SKILL.md paths; each names a skill of the
/// catalog (disabled skills and skills outside `available` do not count).
/// Paths that name no usable skill make the policy fail closed: only the
/// always-allowed tools remain.
inline std::optional<std::set<std::string, std::less<>>>
skill_policy_allowed_tools(const skill_catalog& catalog, std::string_view container_path,
                           const std::vector<std::string>& loaded,
                           const std::optional<std::vector<std::string>>& available = std::nullopt) {
    if (loaded.empty()) return std::nullopt;
    std::set<std::string, std::less<>> allowed(std::begin(skill_policy_always_allowed),
                                               std::end(skill_policy_always_allowed));
    bool any_active = false, any_declared = false;
    for (const auto& path : loaded) {
        const auto it = std::find_if(catalog.skills.begin(), catalog.skills.end(),
                                     [&](const skill& s) { return s.location(container_path) == path; });
        if (it == catalog.skills.end() || !it->enabled) continue;
        if (available && std::find(available->begin(), available->end(), it->name) == available->end())
            continue;
        any_active = true;
        if (!it->allowed_tools) continue;
        any_declared = true;
        allowed.insert(it->allowed_tools->begin(), it->allowed_tools->end());
    }
    if (any_active && !any_declared) return std::nullopt;
    return allowed;
}

/// The middleware: filters the model's tools and refuses calls outside the
/// loaded skills' `allowed-tools`. Needs the `skill_context` field (the
/// skills middleware fills it). Shared by concurrent runs: it reads the state.
class skill_tool_policy {
public:
    using state_fields = fields<skill_context_field>;
    static constexpr std::string_view middleware_name = "skill_tool_policy";

    skill_tool_policy() : catalog_(std::make_shared<const skill_catalog>()) {}
    /// `available`: the skills this agent may use (a subagent type's `skills`); unset = all.
    explicit skill_tool_policy(std::shared_ptr<const skill_catalog> catalog,
                               std::string container_path = "/mnt/skills",
                               std::optional<std::vector<std::string>> available = std::nullopt)
        : catalog_(catalog ? std::move(catalog) : std::make_shared<const skill_catalog>()),
          container_path_(std::move(container_path)), available_(std::move(available)) {}

    /// The tools the state's loaded skills allow (empty optional: all).
    template <class State>
    std::optional<std::set<std::string, std::less<>>> allowed_tools(const State& state) const {
        std::vector<std::string> loaded;
        for (const auto& e : get<skill_context_field>(state))
            loaded.push_back(e.path);
        return skill_policy_allowed_tools(*catalog_, container_path_, loaded, available_);
    }

    template <class Request, class Next>
    decltype(auto) wrap_model_call(Request& req, Next&& next) {
        if (req.state) {
            if (auto allowed = allowed_tools(*req.state)) {
                std::vector<tool_schema> kept;
                for (const auto& t : req.tools.get())
                    if (allowed->contains(t.name)) kept.push_back(t);
                if (kept.size() != req.tools.get().size()) req.tools = std::move(kept);
            }
        }
        return next(req);
    }

    template <class Request, class Next>
    auto wrap_tool_call(Request& req, Next&& next) -> decltype(next(req)) {
        if (req.state) {
            const tool_call& call = *req.call;
            if (auto allowed = allowed_tools(*req.state); allowed && !allowed->contains(call.name)) {
                // Text kept for parity with DeerFlow (SkillToolPolicyMiddleware, reference deerflow.md §4.1
                // #16).
                std::string text =
                    detail::format("Error: Tool '{}' is not allowed by the active skill policy.", call.name);
                return short_circuit(
                    req, next,
                    tool_response{
                        tool_message(call.id, call.name, std::move(text), tool_status::error), {}, false});
            }
        }
        return next(req);
    }

private:
    std::shared_ptr<const skill_catalog> catalog_;
    std::string container_path_ = "/mnt/skills";
    std::optional<std::vector<std::string>> available_;
};

} // namespace agentware

#endif
