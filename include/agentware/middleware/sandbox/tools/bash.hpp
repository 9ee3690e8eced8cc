#ifndef AGENTWARE_MIDDLEWARE_SANDBOX_TOOLS_BASH_HPP
#define AGENTWARE_MIDDLEWARE_SANDBOX_TOOLS_BASH_HPP

// The sandbox's bash tool: on the host (the command screened, virtual paths
// rewritten, host paths masked in its output) or in the isolated sandbox.

#include <agentware/detail/format.hpp>
#include <agentware/detail/process.hpp>
#include <agentware/detail/regex.hpp>
#include <agentware/message/detail/output_limits.hpp>
#include <agentware/middleware/detail/tool_args.hpp>
#include <agentware/middleware/sandbox/tools/tool_call.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace agentware {

namespace detail {

inline bool allowed_absolute_path(std::string_view p) {
    if (has_path_prefix(p, virtual_user_data)) return true;
    for (std::string_view prefix :
         {"/bin/", "/usr/bin/", "/usr/sbin/", "/sbin/", "/opt/homebrew/bin/", "/dev/"})
        if (p.starts_with(prefix)) return true;
    return false;
}

/// Best-effort screening of a host bash command (not a security boundary):
/// no file:// URLs, no ".." segments, no cd to $VAR, `...`, ~ or -, and every
/// absolute path under /mnt/user-data or a system binary directory.
inline std::optional<std::string> screen_command(const std::string& command) {
    static const std::regex file_url(R"(file://)", std::regex::icase);
    if (detail::regex_search(command, file_url))
        return std::string("Error: Unsafe file:// URL in command. Use paths under /mnt/user-data");
    static const std::regex url(R"([A-Za-z][A-Za-z0-9+.-]*://[^\s'"]*)");
    const std::string without_urls = detail::regex_replace(command, url, " ");
    static const std::regex dotdot(R"((^|[\s/'"=:;|&<>()])\.\.($|[\s/'"`;|&<>()]))");
    if (detail::regex_search(without_urls, dotdot)) return path_error(text_path_traversal);
    static const std::regex cd(R"((^|[\s;&|(])(cd|pushd)\s+([$`~]|-(\s|$)))");
    if (std::cmatch m; detail::regex_search(without_urls, m, cd))
        return detail::format(
            "Error: Unsafe directory change in command: {} {}. Use paths under /mnt/user-data", m[2].str(),
            m[3].str());
    static const std::regex absolute(R"((?:^|[\s'"=:;|&<>(])(/[^\s'"`;|&<>()]*))");
    std::set<std::string> unsafe;
    for (std::cregex_iterator it(without_urls.data(), without_urls.data() + without_urls.size(), absolute),
         end;
         it != end; ++it) {
        std::string p = (*it)[1].str();
        if (!allowed_absolute_path(p)) unsafe.insert(std::move(p));
    }
    if (!unsafe.empty()) {
        std::string list;
        for (const auto& p : unsafe)
            list += (list.empty() ? "" : ", ") + p;
        return detail::format("Error: Unsafe absolute paths in command: {}. Use paths under /mnt/user-data",
                              list);
    }
    return std::nullopt;
}

inline std::string shell_quote(std::string_view s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

/// DeerFlow's output assembly: stdout, stderr, then the timeout note or the exit code.
inline std::string assemble_command_output(const command_outcome& r, std::chrono::milliseconds timeout) {
    auto stream_text = [](const captured_stream& s) {
        std::string t = s.data;
        if (s.total > s.data.size())
            t += detail::format(
                "\n... [output truncated after {} of {} bytes; remaining output discarded] ...",
                s.data.size(), s.total);
        return t;
    };
    std::string output = stream_text(r.out);
    if (r.err.total > 0) {
        const std::string err = stream_text(r.err);
        output = output.empty() ? err : output + "\nStd Error:\n" + err;
    }
    if (r.timed_out) {
        const auto secs = std::chrono::duration_cast<std::chrono::seconds>(timeout).count();
        std::string note = detail::format(
            "Command timed out after {} {} and was terminated. To run a long-lived process such "
            "as a web server, "
            "start it in the background and redirect its output, e.g. `your-command > "
            "/mnt/user-data/workspace/server.log 2>&1 &`.",
            secs, secs == 1 ? "second" : "seconds");
        output = output.empty() ? note : output + "\n" + note;
    } else if (r.exit_code != 0) {
        output += detail::format("\nExit Code: {}", r.exit_code);
    }
    return output.empty() ? "(no output)" : output;
}

/// bash in the isolated sandbox: the command sees the virtual paths as they
/// are, so it is neither screened nor rewritten; the namespaces are the boundary.
inline tool_output isolated_bash_body(sandbox_tool_context& ctx, const std::string& command,
                                      const sandbox_call& call) {
    const thread_paths& td = *call.paths;
    const auto outcome = run_isolated(command, td, ctx.options.isolation, ctx.options.bash_command_timeout,
                                      ctx.options.bash_capture_max_bytes);
    if (!outcome.failure.empty())
        return error_output(detail::format("Error: could not run the command: {}", outcome.failure));
    std::string output =
        mask_host_paths(assemble_command_output(outcome, ctx.options.bash_command_timeout), td);
    return tool_output(middle_truncate(output, ctx.options.bash_output_max_chars));
}

inline tool_output bash_body(sandbox_tool_context& ctx, const boost::json::object& args,
                             const sandbox_call& call) {
    std::optional<arg_error> err;
    auto command = string_arg(args, "command", true, err);
    if (err) return error_output(err->text);
    if (command->find('\0') != std::string::npos)
        return error_output("Error: command contains a NUL character");
    if (ctx.options.isolated()) return isolated_bash_body(ctx, *command, call);
    if (auto problem = screen_command(*command)) return error_output(std::move(*problem));
    const thread_paths& td = *call.paths;
    const std::string host_command =
        detail::format("cd {} && {}", shell_quote(td.workspace_path), virtual_to_host_text(*command, td));
    const auto outcome = run_command(find_shell(), host_command, ctx.options.bash_command_timeout,
                                     ctx.options.bash_capture_max_bytes);
    if (!outcome.failure.empty())
        return error_output(detail::format("Error: could not run the command: {}", outcome.failure));
    std::string output =
        mask_host_paths(assemble_command_output(outcome, ctx.options.bash_command_timeout), td);
    return tool_output(middle_truncate(output, ctx.options.bash_output_max_chars));
}

} // namespace detail

} // namespace agentware

#endif
