#ifndef AGENTWARE_MIDDLEWARE_CAPABILITIES_SHELL_HPP
#define AGENTWARE_MIDDLEWARE_CAPABILITIES_SHELL_HPP

// shell_tools: the Swift catalog's `shell` capability. The `shell` tool runs a
// command with the host's shell in the working directory, behind the shell
// guard: a denylist of destructive patterns (refused before anything runs),
// a time limit, and a cap on the output it returns. This is not a sandbox:
// the command runs as the agent's user. Use it with tool_approval (the
// catalog asks before each call by default) or in a container.

#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/middleware/capabilities/host_capability.hpp>
#include <agentware/middleware/detail/tool_args.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>

#include <fmt/core.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// One refused pattern: an ECMAScript regular expression and why it is refused.
struct shell_guard_rule {
    std::string pattern;
    std::string reason;
    friend bool operator==(const shell_guard_rule&, const shell_guard_rule&) = default;
};

/// The guard's default denylist (our own list of commands that destroy data or the host).
inline std::vector<shell_guard_rule> default_shell_denylist() {
    return {
        {R"(\brm\s+(-[a-zA-Z]*\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(-[a-zA-Z]*\s+)*(/|~|\$HOME|\*)(\s|$|/\*))",
         "recursive removal of the root, the home directory or everything"},
        {R"(\bmkfs(\.\w+)?\b)", "formats a file system"},
        {R"(\bdd\b[^|;&]*\bof=/dev/)", "writes to a raw device"},
        {R"(>\s*/dev/(sd|hd|nvme|vd|xvd|mmcblk))", "writes to a raw device"},
        {R"(:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:)", "a fork bomb"},
        {R"(\b(shutdown|reboot|halt|poweroff)\b)", "stops the host"},
        {R"(\bchmod\s+(-[a-zA-Z]+\s+)*0?777\s+/(\s|$))", "opens the root to everyone"},
        {R"(\bchown\s+-[a-zA-Z]*R[a-zA-Z]*\s+\S+\s+/(\s|$))", "changes the owner of the root"},
        {R"(\bsudo\b|\bsu\s+-)", "raises privileges"},
        {R"(\bgit\s+push\b[^|;&]*(--force\b|\s-f\b))", "force-pushes"},
    };
}

struct shell_tools_options {
    std::string root_dir = ".";            ///< the working directory
    std::chrono::seconds timeout{30};      ///< a command without `timeout`
    std::chrono::seconds max_timeout{300}; ///< the most a command may ask for
    std::size_t max_output_chars = 30000;  ///< longer output is cut in the middle
    std::vector<shell_guard_rule> denylist = default_shell_denylist();
    std::string shell; ///< empty: the first of zsh, bash, sh

    static constexpr std::string_view config_section = "shell";
    friend bool operator==(const shell_tools_options&, const shell_tools_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const shell_guard_rule& r) {
    jv = boost::json::object{{"pattern", r.pattern}, {"reason", r.reason}};
}
inline shell_guard_rule tag_invoke(boost::json::value_to_tag<shell_guard_rule>,
                                   const boost::json::value& jv) {
    json_reader r(jv);
    shell_guard_rule rule{r.required<std::string>("pattern"), r.required<std::string>("reason")};
    r.reject_unknown_keys();
    return rule;
}

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const shell_tools_options& o) {
    jv = boost::json::object{{"root_dir", o.root_dir},
                             {"timeout", o.timeout.count()},
                             {"max_timeout", o.max_timeout.count()},
                             {"max_output_chars", o.max_output_chars},
                             {"denylist", boost::json::value_from(o.denylist)},
                             {"shell", o.shell}};
}

inline shell_tools_options tag_invoke(boost::json::value_to_tag<shell_tools_options>,
                                      const boost::json::value& jv) {
    json_reader r(jv, std::string(shell_tools_options::config_section));
    shell_tools_options o;
    r.read("root_dir", o.root_dir)
        .read("timeout", o.timeout)
        .read("max_timeout", o.max_timeout)
        .read("max_output_chars", o.max_output_chars)
        .read("denylist", o.denylist)
        .read("shell", o.shell)
        .reject_unknown_keys();
    for (std::size_t i = 0; i < o.denylist.size(); ++i) {
        try {
            std::regex check(o.denylist[i].pattern);
        } catch (const std::regex_error& e) {
            throw json_error(detail::format("{}[{}].pattern", r.path_of("denylist"), i),
                             std::string("not a regular expression: ") + e.what());
        }
    }
    return o;
}

/// The denylist, compiled once.
class shell_guard {
public:
    explicit shell_guard(const std::vector<shell_guard_rule>& rules) {
        for (const auto& r : rules)
            rules_.emplace_back(std::regex(r.pattern, std::regex::ECMAScript | std::regex::optimize),
                                r.reason);
    }
    /// Why `command` is refused, or nullopt when it may run.
    std::optional<std::string> refuses(std::string_view command) const {
        for (const auto& [re, reason] : rules_)
            if (std::regex_search(command.begin(), command.end(), re)) return reason;
        return std::nullopt;
    }

private:
    std::vector<std::pair<std::regex, std::string>> rules_;
};

namespace detail {

struct shell_context {
    shell_tools_options options;
    shell_guard guard;
    std::string shell;
};

inline tool_output shell_run(const working_dir& wd, const shell_context& ctx, const boost::json::object& a,
                             std::optional<arg_error>& err) {
    auto command = string_arg(a, "command", true, err);
    auto timeout = int_arg(a, "timeout", err);
    if (err) return {};
    if (command->find('\0') != std::string::npos)
        return tool_output::error("Error: the command contains a NUL byte");
    if (auto why = ctx.guard.refuses(*command))
        return tool_output::error(detail::format("Error: the shell guard refused this command ({})", *why));
    std::chrono::seconds limit = ctx.options.timeout;
    if (timeout) {
        if (*timeout <= 0 || *timeout > ctx.options.max_timeout.count())
            return tool_output::error(detail::format("Error: timeout must be between 1 and {} seconds",
                                                     ctx.options.max_timeout.count()));
        limit = std::chrono::seconds(*timeout);
    }
    // The directory is the script's $0, so it needs no quoting.
    auto r = run_process({ctx.shell, "-c", "cd -- \"$0\" || exit 125\n" + *command, wd.root.string()}, limit,
                         ctx.options.max_output_chars * 2);
    if (!r.failure.empty()) return tool_output::error("Error: " + r.failure);
    std::string out = command_text(r, ctx.options.max_output_chars);
    if (r.timed_out)
        return tool_output::error(detail::format("{}{}Error: the command timed out after {} seconds", out,
                                                 out.empty() ? "" : "\n", limit.count()));
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += detail::format("[exit code {}]", r.exit_code);
    tool_output o(std::move(out));
    o.metadata["exit_code"] = r.exit_code;
    return o;
}

} // namespace detail

/// The `shell` capability: one guarded shell tool in a working directory.
class shell_tools : public detail::host_capability<shell_tools_options> {
public:
    using options_type = shell_tools_options;
    static constexpr std::string_view capability_id = "shell"; ///< in the capability catalog

    shell_tools() : shell_tools(shell_tools_options{}) {}
    explicit shell_tools(shell_tools_options o) {
        auto wd = std::make_shared<const detail::working_dir>(o.root_dir);
        options_ = o;
        std::string shell = o.shell.empty() ? detail::find_shell() : o.shell;
        auto ctx = std::make_shared<const detail::shell_context>(
            detail::shell_context{std::move(o), shell_guard(options_.denylist), std::move(shell)});
        tools_.push_back(detail::working_dir_tool(
            wd, ctx, "shell",
            "Runs a shell command in the working directory and returns its output and exit code. Destructive "
            "commands are refused; long ones are stopped at the time limit.",
            R"({"type":"object","properties":{"command":{"type":"string","description":"The command line."},"timeout":{"type":"integer","description":"Seconds before it is stopped (default 30)."}},"required":["command"]})",
            &detail::shell_run));
    }
};

} // namespace agentware

#endif
