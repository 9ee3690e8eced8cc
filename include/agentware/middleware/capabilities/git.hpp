#ifndef AGENTWARE_MIDDLEWARE_CAPABILITIES_GIT_HPP
#define AGENTWARE_MIDDLEWARE_CAPABILITIES_GIT_HPP

// git_tools: the Swift catalog's `git` capability, read-only, in the working
// directory: `git_status`, `git_diff`, `git_log`, `git_show` and
// `git_blame`. Each runs the host's git with fixed arguments (no shell); a
// revision or path the model gives may not start with '-' (no options
// smuggled in) and paths may not leave the working directory.

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
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

struct git_tools_options {
    std::string root_dir = ".";           ///< the working directory (inside a repository)
    std::chrono::seconds timeout{30};     ///< per git command
    std::size_t max_output_chars = 50000; ///< longer output is cut in the middle
    std::size_t default_log_count = 20;

    static constexpr std::string_view config_section = "git";
    friend bool operator==(const git_tools_options&, const git_tools_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const git_tools_options& o) {
    jv = boost::json::object{{"root_dir", o.root_dir},
                             {"timeout", o.timeout.count()},
                             {"max_output_chars", o.max_output_chars},
                             {"default_log_count", o.default_log_count}};
}

inline git_tools_options tag_invoke(boost::json::value_to_tag<git_tools_options>,
                                    const boost::json::value& jv) {
    json_reader r(jv, std::string(git_tools_options::config_section));
    git_tools_options o;
    r.read("root_dir", o.root_dir)
        .read("timeout", o.timeout)
        .read("max_output_chars", o.max_output_chars)
        .read("default_log_count", o.default_log_count)
        .reject_unknown_keys();
    return o;
}

namespace detail {

inline tool_output git_run(const working_dir& wd, const git_tools_options& o, std::vector<std::string> args) {
    const std::string git = find_program("git");
    if (git.empty()) return tool_output::error("Error: git is not installed on this host");
    std::vector<std::string> argv{git, "--no-pager", "-C", wd.root.string()};
    argv.insert(argv.end(), std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
    auto r = run_process(std::move(argv), o.timeout, o.max_output_chars * 2);
    if (!r.failure.empty()) return tool_output::error("Error: " + r.failure);
    if (r.timed_out)
        return tool_output::error(detail::format("Error: git timed out after {} seconds", o.timeout.count()));
    std::string text = command_text(r, o.max_output_chars);
    if (r.exit_code != 0) return tool_output::error(text.empty() ? "Error: git failed" : "Error: " + text);
    return text.empty() ? std::string("(no output)") : text;
}

// An optional path argument as git's pathspec, relative to the working directory.
inline bool git_path(const working_dir& wd, const boost::json::object& a, std::string_view key, bool required,
                     std::vector<std::string>& args, std::optional<arg_error>& err) {
    auto raw = string_arg(a, key, required, err);
    if (err || !raw) return !err;
    std::string why;
    auto p = wd.resolve(*raw, why);
    if (!p) {
        err = arg_error{why};
        return false;
    }
    args.push_back("--");
    args.push_back(wd.relative(*p));
    return true;
}

inline bool git_revision(const boost::json::object& a, std::string_view key, std::string& out,
                         std::optional<arg_error>& err) {
    auto rev = string_arg(a, key, false, err);
    if (err || !rev) return !err;
    if (rev->empty() || rev->front() == '-' || rev->find('\0') != std::string::npos) {
        err = arg_error{detail::format("Error: '{}' is not a revision", *rev)};
        return false;
    }
    out = *rev;
    return true;
}

inline tool_output git_status(const working_dir& wd, const git_tools_options& o, const boost::json::object&,
                              std::optional<arg_error>&) {
    return git_run(wd, o, {"status", "--short", "--branch"});
}

inline tool_output git_diff(const working_dir& wd, const git_tools_options& o, const boost::json::object& a,
                            std::optional<arg_error>& err) {
    std::vector<std::string> args{"diff"};
    if (bool_arg(a, "staged", false, err)) args.emplace_back("--cached");
    std::string rev;
    if (!git_revision(a, "revision", rev, err)) return {};
    if (!rev.empty()) args.push_back(rev);
    if (!git_path(wd, a, "path", false, args, err)) return {};
    return git_run(wd, o, std::move(args));
}

inline tool_output git_log(const working_dir& wd, const git_tools_options& o, const boost::json::object& a,
                           std::optional<arg_error>& err) {
    auto count = int_arg(a, "max_count", err);
    std::vector<std::string> args{
        "log", "--oneline", "--decorate", "-n",
        std::to_string(count && *count > 0 ? static_cast<std::size_t>(*count) : o.default_log_count)};
    std::string rev;
    if (!git_revision(a, "revision", rev, err)) return {};
    if (!rev.empty()) args.push_back(rev);
    if (!git_path(wd, a, "path", false, args, err)) return {};
    return git_run(wd, o, std::move(args));
}

inline tool_output git_show(const working_dir& wd, const git_tools_options& o, const boost::json::object& a,
                            std::optional<arg_error>& err) {
    std::string rev = "HEAD";
    if (!git_revision(a, "revision", rev, err)) return {};
    return git_run(wd, o, {"show", "--stat", "--patch", rev});
}

inline tool_output git_blame(const working_dir& wd, const git_tools_options& o, const boost::json::object& a,
                             std::optional<arg_error>& err) {
    std::vector<std::string> args{"blame"};
    std::string rev;
    if (!git_revision(a, "revision", rev, err)) return {};
    if (!rev.empty()) args.push_back(rev);
    if (!git_path(wd, a, "file_path", true, args, err)) return {};
    return git_run(wd, o, std::move(args));
}

} // namespace detail

/// The `git` capability: read-only git in a working directory.
class git_tools : public detail::host_capability<git_tools_options> {
public:
    using options_type = git_tools_options;
    static constexpr std::string_view capability_id = "git"; ///< in the capability catalog

    git_tools() : git_tools(git_tools_options{}) {}
    explicit git_tools(git_tools_options o) : host_capability(std::move(o)) {
        add_tool("git_status", "Shows the working tree's status: the branch and the changed files.",
                 R"({"type":"object","properties":{}})", &detail::git_status);
        add_tool(
            "git_diff",
            "Shows changes: unstaged (default), staged, or against a revision; optionally of one path.",
            R"({"type":"object","properties":{"staged":{"type":"boolean"},"revision":{"type":"string"},"path":{"type":"string"}}})",
            &detail::git_diff);
        add_tool(
            "git_log", "Lists commits, newest first, one line each.",
            R"({"type":"object","properties":{"max_count":{"type":"integer","description":"Default 20."},"revision":{"type":"string"},"path":{"type":"string"}}})",
            &detail::git_log);
        add_tool(
            "git_show", "Shows a commit: its message, the files it changed and its patch.",
            R"({"type":"object","properties":{"revision":{"type":"string","description":"Default HEAD."}}})",
            &detail::git_show);
        add_tool(
            "git_blame", "Shows who last changed each line of a file.",
            R"({"type":"object","properties":{"file_path":{"type":"string"},"revision":{"type":"string"}},"required":["file_path"]})",
            &detail::git_blame);
    }
};

} // namespace agentware

#endif
