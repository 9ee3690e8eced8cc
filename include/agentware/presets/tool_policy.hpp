#ifndef AGENTWARE_PRESETS_TOOL_POLICY_HPP
#define AGENTWARE_PRESETS_TOOL_POLICY_HPP

// The capability catalog and the tool policy of Swift DeepAgents
// (AgentToolPolicy, MiddlewareCatalog). The catalog names each capability
// (a middleware id) with the tools it contributes and the approval modes it
// asks for by default. A tool_policy is a JSON value (per user, per session)
// saying which capabilities and tools are switched off, which tools need
// approval or are denied, and the sandbox mode; `expand(catalog)` resolves
// it into the tools to leave out of the model's schema (at factory time) and
// the approval mode of each tool (at dispatch time, through tool_approval or
// human_in_the_loop).

#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/human_in_the_loop.hpp>
#include <agentware/middleware/tool_approval.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// What happens when the model calls a tool: it runs, a human is asked first, or it is refused.
enum class tool_approval_mode { allow, ask, deny };

constexpr std::string_view to_string(tool_approval_mode m) noexcept {
    switch (m) {
    case tool_approval_mode::allow:
        return "allow";
    case tool_approval_mode::ask:
        return "ask";
    case tool_approval_mode::deny:
        return "deny";
    }
    return "allow";
}

/// Where commands run: on the host (`off`), or only in a container sandbox
/// (`container`: the host `shell` capability is switched off).
enum class sandbox_mode { off, container };

/// One entry of the catalog: a capability's id, its tools, and the approval
/// modes it asks for unless the policy says otherwise.
struct capability_descriptor {
    std::string id;
    std::string description;
    std::vector<std::string> tools;
    std::map<std::string, tool_approval_mode, std::less<>> default_approvals;
    bool runs_host_commands = false; ///< switched off in sandbox mode `container`
};

using capability_catalog = std::vector<capability_descriptor>;

/// The catalog of agentware's capabilities: the filesystem and the Swift
/// toolsets that are not macOS-only. (`macos`, `clipboard`, `screenshot`,
/// `apple_notes` and `container` are macOS adapters: not in agentware.)
inline capability_catalog default_capability_catalog() {
    using m = tool_approval_mode;
    return {
        {"filesystem",
         "Files through the agent's backend.",
         {"ls", "read_file", "write_file", "edit_file", "glob", "grep", "delete", "mkdir", "execute"},
         {{"execute", m::ask}},
         false},
        {"search", "Finds files and text in the working directory.", {"grep", "glob", "tree"}, {}, false},
        {"text", "Reads the head or tail of files and compares them.", {"head", "tail", "diff"}, {}, false},
        {"git",
         "Read-only git in the working directory.",
         {"git_status", "git_diff", "git_log", "git_show", "git_blame"},
         {},
         true},
        {"shell",
         "Shell commands on the host, behind the shell guard.",
         {"shell"},
         {{"shell", m::ask}},
         true},
        {"web", "HTTP(S) GET of web pages.", {"fetch", "curl"}, {}, false},
    };
}

/// Swift's AgentToolPolicy.
struct tool_policy {
    std::set<std::string, std::less<>> disabled_middleware; ///< capability ids
    std::set<std::string, std::less<>> disabled_tools;      ///< tool names
    std::map<std::string, tool_approval_mode, std::less<>> approvals;
    sandbox_mode sandbox = sandbox_mode::off;
    std::optional<std::string> sandbox_image;

    static constexpr std::string_view config_section = "policy";
    friend bool operator==(const tool_policy&, const tool_policy&) = default;

    /// The policy resolved against a catalog.
    struct expansion {
        std::set<std::string, std::less<>>
            disabled_middleware;                           ///< ids switched off (given or by the sandbox)
        std::set<std::string, std::less<>> disabled_tools; ///< never offered to the model
        /// Each tool's mode, for the tools that do not simply run (allow is left out).
        std::map<std::string, tool_approval_mode, std::less<>> approvals;
        sandbox_mode sandbox = sandbox_mode::off;
        std::optional<std::string> sandbox_image;

        bool enabled(std::string_view capability) const { return !disabled_middleware.contains(capability); }
        bool offered(std::string_view tool) const { return !disabled_tools.contains(tool); }
        tool_approval_mode mode_of(std::string_view tool) const {
            auto it = approvals.find(tool);
            return it == approvals.end() ? tool_approval_mode::allow : it->second;
        }
        /// Nothing to ask or deny.
        bool all_allowed() const { return approvals.empty(); }

        /// For tool_approval: allow runs, ask asks the user, deny refuses.
        tool_approval_handler handler() const {
            return [approvals = approvals](const tool_call& call) {
                auto it = approvals.find(call.name);
                if (it == approvals.end()) return tool_approval_decision::approve;
                switch (it->second) {
                case tool_approval_mode::allow:
                    return tool_approval_decision::approve;
                case tool_approval_mode::ask:
                    return tool_approval_decision::ask_user;
                case tool_approval_mode::deny:
                    return tool_approval_decision::deny;
                }
                return tool_approval_decision::approve;
            };
        }

        /// For human_in_the_loop: the `ask` tools, reviewed with approve,
        /// edit and reject (a `deny` tool needs tool_approval: a review
        /// cannot refuse by itself).
        human_in_the_loop_options interrupt_on() const {
            human_in_the_loop_options o;
            for (const auto& [tool, mode] : approvals)
                if (mode == tool_approval_mode::ask)
                    o.interrupt_on[tool].allowed_decisions = {"approve", "edit", "reject"};
            return o;
        }
    };

    /// Resolves the policy: a capability is off when disabled (or, in sandbox
    /// mode `container`, when it runs host commands); a tool is off when it is
    /// disabled by name or every capability that offers it is off. The modes:
    /// the catalog's defaults, then `extra_defaults`, then the policy's own
    /// `approvals`; those of tools that are off are dropped.
    expansion
    expand(const capability_catalog& catalog = default_capability_catalog(),
           const std::map<std::string, tool_approval_mode, std::less<>>& extra_defaults = {}) const {
        expansion e;
        e.sandbox = sandbox;
        e.sandbox_image = sandbox_image;
        e.disabled_middleware = disabled_middleware;
        for (const auto& c : catalog)
            if (sandbox == sandbox_mode::container && c.runs_host_commands)
                e.disabled_middleware.insert(c.id);
        std::set<std::string, std::less<>> on, off;
        for (const auto& c : catalog) {
            auto& to = e.enabled(c.id) ? on : off;
            to.insert(c.tools.begin(), c.tools.end());
        }
        for (const auto& t : off)
            if (!on.contains(t)) e.disabled_tools.insert(t);
        e.disabled_tools.insert(disabled_tools.begin(), disabled_tools.end());
        for (const auto& c : catalog)
            if (e.enabled(c.id))
                for (const auto& [tool, mode] : c.default_approvals)
                    e.approvals[tool] = mode;
        for (const auto& [tool, mode] : extra_defaults)
            e.approvals[tool] = mode;
        for (const auto& [tool, mode] : approvals)
            e.approvals[tool] = mode;
        for (auto it = e.approvals.begin(); it != e.approvals.end();)
            if (it->second == tool_approval_mode::allow || e.disabled_tools.contains(it->first))
                it = e.approvals.erase(it);
            else
                ++it;
        return e;
    }
};

namespace detail {

inline tool_approval_mode approval_mode_of(std::string_view s, const std::string& path) {
    return json_choose(path, s,
                       {json_choice_of<tool_approval_mode>{"allow", tool_approval_mode::allow},
                        {"ask", tool_approval_mode::ask},
                        {"deny", tool_approval_mode::deny}});
}

} // namespace detail

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const tool_policy& p) {
    boost::json::object approvals;
    for (const auto& [tool, mode] : p.approvals)
        approvals[tool] = to_string(mode);
    boost::json::object o{{"disabled_middleware", boost::json::value_from(p.disabled_middleware)},
                          {"disabled_tools", boost::json::value_from(p.disabled_tools)},
                          {"approvals", std::move(approvals)},
                          {"sandbox", p.sandbox == sandbox_mode::off ? "off" : "container"}};
    o["sandbox_image"] = p.sandbox_image ? boost::json::value(*p.sandbox_image) : nullptr;
    jv = std::move(o);
}

/// {"disabled_middleware": ["web"], "disabled_tools": ["delete"], "approvals":
/// {"write_file": "ask", "shell": "deny"}, "sandbox": "off" | "container",
/// "sandbox_image": "..."}; every key optional.
inline tool_policy tag_invoke(boost::json::value_to_tag<tool_policy>, const boost::json::value& jv) {
    json_reader r(jv, std::string(tool_policy::config_section));
    tool_policy p;
    std::vector<std::string> mw, tools;
    std::map<std::string, std::string> approvals;
    r.read("disabled_middleware", mw)
        .read("disabled_tools", tools)
        .read("approvals", approvals)
        .choice("sandbox", p.sandbox, {{"off", sandbox_mode::off}, {"container", sandbox_mode::container}})
        .read("sandbox_image", p.sandbox_image)
        .reject_unknown_keys();
    p.disabled_middleware.insert(mw.begin(), mw.end());
    p.disabled_tools.insert(tools.begin(), tools.end());
    for (const auto& [tool, mode] : approvals)
        p.approvals[tool] = detail::approval_mode_of(mode, detail::json_path(r.path_of("approvals"), tool));
    return p;
}

} // namespace agentware

#endif
