#ifndef AGENTWARE_MIDDLEWARE_SANDBOX_TOOLS_HPP
#define AGENTWARE_MIDDLEWARE_SANDBOX_TOOLS_HPP

// The sandbox's tools (DeerFlow's sandbox tools, local mode): bash, ls,
// read_file, write_file, str_replace, glob, grep and present_files. The model
// names files by virtual paths under /mnt/user-data/{workspace,uploads,
// outputs}; every path goes through detail::resolve_model_path, host paths in
// what the tools return are shown as virtual paths again, and no tool throws:
// failures are "Error: ..." tool messages.
//
// A tool acquires the thread's sandbox on its first use (lazy acquisition) and
// returns the id as a `sandbox` state update; parallel first calls of one
// round acquire the same id, which the field's merge rule accepts.

#include <agentware/detail/config.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/detail/process.hpp>
#include <agentware/detail/regex.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/middleware/sandbox/bubblewrap.hpp>
#include <agentware/middleware/sandbox/provider.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>
#include <agentware/thread/fields.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// Settings of the sandbox middleware and its tools (DeerFlow's `sandbox:`
/// configuration, with its defaults).
struct sandbox_options {
    /// The provider: "local" (the host file system; DeerFlow's class path
    /// "deerflow.sandbox.local:LocalSandboxProvider" is read as "local") or
    /// "isolated" (bash runs under bubblewrap, see sandbox/bubblewrap.hpp). Any
    /// other name is refused when the settings are read (sandbox_provider_names).
    std::string use = "local";
    /// The isolated sandbox's limits (used when `use` is "isolated").
    isolation_options isolation;
    /// true: acquire on the first tool call; false: in before_agent.
    bool lazy_init = true;
    /// Offer `bash`, which runs on the host: only in a fully trusted setup.
    bool allow_host_bash = false;
    /// A bash command is killed, with its whole process group, after this long.
    std::chrono::milliseconds bash_command_timeout = std::chrono::seconds(600);
    /// bash output is middle-truncated to this many characters (0 = off).
    std::size_t bash_output_max_chars = 20000;
    /// Each of stdout and stderr is captured up to this many bytes.
    std::size_t bash_capture_max_bytes = 10 * 1024 * 1024;
    /// read_file output is head-truncated to this many characters (0 = off).
    std::size_t read_file_output_max_chars = 50000;
    /// ls output is head-truncated to this many characters (0 = off).
    std::size_t ls_output_max_chars = 20000;
    /// A single non-append write_file larger than this is refused (0 = off).
    std::size_t write_file_max_bytes = 80 * 1024;
    /// Upper bounds of the glob and grep `max_results` arguments.
    std::size_t glob_max_results = 1000;
    std::size_t grep_max_results = 500;
    /// One glob or grep call stops with an error after this long (0 = no limit).
    std::chrono::milliseconds search_timeout = std::chrono::seconds(30);

    static constexpr std::string_view config_section = "sandbox";
    friend bool operator==(const sandbox_options&, const sandbox_options&) = default;

    bool isolated() const noexcept { return use == "isolated"; }
    /// bash is offered: always in the isolated sandbox, on the host only when allowed.
    bool offers_bash() const noexcept { return isolated() || allow_host_bash; }
};

/// The provider names `sandbox.use` accepts. A provider is added here and in
/// make_sandbox_provider (middleware/sandbox.hpp), where the name becomes a
/// provider object.
inline constexpr std::string_view sandbox_provider_names[] = {"local", "isolated",
                                                              "deerflow.sandbox.local:LocalSandboxProvider"};

namespace detail {
inline boost::json::value seconds_json(std::chrono::milliseconds d) {
    const auto ms = d.count();
    return ms % 1000 == 0 ? boost::json::value(ms / 1000) : boost::json::value(ms / 1000.0);
}
} // namespace detail

/// DeerFlow's `sandbox:` keys; `bash_command_timeout` and `search_timeout`
/// are in seconds (a fraction when not whole seconds).
inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const sandbox_options& o) {
    jv = boost::json::object{{"use", o.use},
                             {"isolation", boost::json::value_from(o.isolation)},
                             {"lazy_init", o.lazy_init},
                             {"allow_host_bash", o.allow_host_bash},
                             {"bash_command_timeout", detail::seconds_json(o.bash_command_timeout)},
                             {"bash_output_max_chars", o.bash_output_max_chars},
                             {"bash_capture_max_bytes", o.bash_capture_max_bytes},
                             {"read_file_output_max_chars", o.read_file_output_max_chars},
                             {"ls_output_max_chars", o.ls_output_max_chars},
                             {"write_file_max_bytes", o.write_file_max_bytes},
                             {"glob_max_results", o.glob_max_results},
                             {"grep_max_results", o.grep_max_results},
                             {"search_timeout", detail::seconds_json(o.search_timeout)}};
}
inline sandbox_options tag_invoke(boost::json::value_to_tag<sandbox_options>, const boost::json::value& jv) {
    json_reader r(jv, std::string(sandbox_options::config_section));
    sandbox_options o;
    r.read("use", o.use)
        .read("isolation", o.isolation)
        .read("lazy_init", o.lazy_init)
        .read("allow_host_bash", o.allow_host_bash)
        .read("bash_command_timeout", o.bash_command_timeout)
        .read("bash_output_max_chars", o.bash_output_max_chars)
        .read("bash_capture_max_bytes", o.bash_capture_max_bytes)
        .read("read_file_output_max_chars", o.read_file_output_max_chars)
        .read("ls_output_max_chars", o.ls_output_max_chars)
        .read("write_file_max_bytes", o.write_file_max_bytes)
        .read("glob_max_results", o.glob_max_results)
        .read("grep_max_results", o.grep_max_results)
        .read("search_timeout", o.search_timeout)
        .reject_unknown_keys();
    if (std::find(std::begin(sandbox_provider_names), std::end(sandbox_provider_names), o.use) ==
        std::end(sandbox_provider_names))
        throw json_error(r.path_of("use"), detail::format("unknown sandbox provider \"{}\" (known: {})",
                                                          o.use, fmt::join(sandbox_provider_names, ", ")));
    if (o.use == "deerflow.sandbox.local:LocalSandboxProvider") o.use = "local";
    return o;
}

namespace detail {

// DeerFlow's text, except that it names agentware's isolated sandbox where
// DeerFlow names its AioSandboxProvider, which agentware does not have
// (docs/middleware/sandbox.md).
inline constexpr std::string_view text_host_bash_disabled =
    "Error: Host bash execution is disabled for LocalSandboxProvider because it is not a secure sandbox "
    "boundary. Switch to the isolated sandbox (sandbox.use: isolated) for isolated bash access, or set "
    "sandbox.allow_host_bash: true only in a fully trusted local environment.";

inline constexpr std::string_view description_parameter =
    R"("description":{"type":"string","description":"Why you make this call, in a few words. ALWAYS PROVIDE THIS PARAMETER FIRST."})";

/// What the tools of one sandbox middleware share.
struct sandbox_tool_context {
    sandbox_options options;
    any_sandbox_provider provider;

    // Files the agent wrote with write_file, per sandbox: their contents had
    // virtual paths turned into host paths, which read_file turns back.
    std::mutex written_mutex;
    std::map<std::string, std::set<std::string>> written;

    void remember_written(const std::string& sandbox_id, const std::filesystem::path& p) {
        std::lock_guard lock(written_mutex);
        written[sandbox_id].insert(p.string());
    }
    bool was_written(const std::string& sandbox_id, const std::filesystem::path& p) {
        std::lock_guard lock(written_mutex);
        auto it = written.find(sandbox_id);
        return it != written.end() && it->second.count(p.string()) != 0;
    }
};

} // namespace detail

/// The sandbox's tools for these options and provider: bash (only when
/// allow_host_bash), ls, read_file, write_file, str_replace, glob, grep and
/// present_files.
AGENTWARE_DECL std::vector<std::shared_ptr<tool_interface>>
make_sandbox_tools(std::shared_ptr<detail::sandbox_tool_context> ctx, bool include_disabled_bash = false);

} // namespace agentware

#endif

// The tools' definitions: in every file (header-only, the default), or only
// in the one that includes <agentware/src.hpp> with AGENTWARE_SEPARATE_COMPILATION
// (through sandbox/impl/tools.ipp, which defines AGENTWARE_SANDBOX_TOOLS_SOURCE).
#if (defined(AGENTWARE_HEADER_ONLY) || defined(AGENTWARE_SANDBOX_TOOLS_SOURCE)) &&                           \
    !defined(AGENTWARE_MIDDLEWARE_SANDBOX_TOOLS_DEFINITIONS)
#define AGENTWARE_MIDDLEWARE_SANDBOX_TOOLS_DEFINITIONS

#include <agentware/detail/write_nofollow.hpp>
#include <agentware/filesystem/detail/file_search.hpp>
#include <agentware/message/detail/output_limits.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/middleware/detail/tool_args.hpp>
#include <agentware/tool/make_tool.hpp>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <regex>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

namespace agentware {

namespace detail {

/// One lock per file path (striped), so write_file and str_replace on the same
/// file from parallel calls do not interleave.
inline std::mutex& path_lock(const std::filesystem::path& p) {
    static std::array<std::mutex, 64> locks;
    return locks[std::hash<std::string>{}(p.string()) % locks.size()];
}

inline tool_output error_output(std::string text) { return tool_output::error(std::move(text)); }

/// Why `host` cannot be read as a file (missing, or a directory), in the
/// words the model sees (`shown` is the path as the model wrote it); nullopt when it can.
inline std::optional<std::string> not_a_regular_file(const std::filesystem::path& host,
                                                     std::string_view shown) {
    std::error_code ec;
    const auto st = std::filesystem::status(host, ec);
    if (!std::filesystem::exists(st)) return detail::format("Error: File not found: {}", shown);
    if (std::filesystem::is_directory(st))
        return detail::format("Error: Path is a directory, not a file: {}", shown);
    return std::nullopt;
}

/// Everything a sandbox tool call needs: the thread's paths and the sandbox id
/// (acquired here on first use, and then returned as a state update).
struct sandbox_call {
    const thread_paths* paths = nullptr;
    std::string sandbox_id;
    bool newly_acquired = false;
};

inline std::optional<std::string> prepare_call(sandbox_tool_context& ctx, const tool_runtime& rt,
                                               sandbox_call& call, bool acquire) {
    const auto* td = rt.field<thread_data_field>();
    if (!td || !*td) return detail::format("Error: {}", text_thread_data_missing);
    call.paths = &**td;
    try {
        ensure_thread_dirs(*call.paths);
    } catch (const std::exception& e) {
        return detail::format("Error: could not create the thread directories: {}", e.what());
    }
    if (!acquire) return std::nullopt;
    if (const auto* sb = rt.field<sandbox_field>(); sb && *sb && (*sb)->sandbox_id) {
        call.sandbox_id = *(*sb)->sandbox_id;
        return std::nullopt;
    }
    const std::string thread_id = context_thread_id(rt.context, rt.thread_id);
    const std::string user_id = context_user_id(rt.context);
    if (!is_valid_thread_id(thread_id) || !is_valid_user_id(user_id))
        return std::string("Error: invalid thread or user id for the sandbox");
    call.sandbox_id = ctx.provider.acquire(thread_id, user_id);
    call.newly_acquired = true;
    return std::nullopt;
}

/// Runs one tool body with the shared preamble and error net.
template <class Body>
tool_output sandbox_tool_call(sandbox_tool_context& ctx, const boost::json::object& args,
                              const tool_runtime& rt, bool acquire, Body&& body) {
    sandbox_call call;
    tool_output out;
    try {
        if (auto problem = prepare_call(ctx, rt, call, acquire)) return error_output(std::move(*problem));
        out = body(args, call);
    } catch (const std::exception& e) {
        out = error_output(detail::format("Error: Unexpected error: {}", excerpt(e.what(), 2000)));
    }
    if (call.newly_acquired) out.update.set<sandbox_field>(sandbox_state{call.sandbox_id});
    return out;
}

inline std::optional<std::string> read_whole_file(const std::filesystem::path& p, std::string& out,
                                                  int& err) {
    std::ifstream in(p, std::ios::binary);
    if (!in) {
        err = errno;
        return std::string("open failed");
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    out = std::move(ss).str();
    return std::nullopt;
}

inline std::string path_error(std::string_view error) { return detail::format("Error: {}", error); }

// What each file tool answers for a path it may not use: DeerFlow's tools
// turn every refusal into their own permission text with the path as the
// model wrote it (only bash tells the reason); tool_error_handling reads it
// as a `permission` error the model can recover from.
// Texts kept for parity with DeerFlow (reference §5.3).
inline constexpr std::string_view denied_read = "Error: Permission denied reading file: {}";
inline constexpr std::string_view denied_list = "Error: Permission denied: {}";
inline constexpr std::string_view denied_write = "Error: Permission denied writing to file: {}";
inline constexpr std::string_view denied_access = "Error: Permission denied accessing file: {}";

/// True when text to be written holds a virtual path that climbs out of the
/// directory it names (`/mnt/user-data/workspace/../../etc/passwd`): DeerFlow
/// resolves each such path while mapping the content and refuses the write.
/// A path runs to the next blank, quote or shell operator.
inline bool content_escapes_user_data(std::string_view text) {
    constexpr std::string_view stops = " \t\r\n\"';&|<>()";
    for (std::size_t at = text.find(virtual_user_data); at != std::string_view::npos;
         at = text.find(virtual_user_data, at + 1)) {
        std::size_t end = text.find_first_of(stops, at);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view token = text.substr(at, end - at);
        if (token.size() > virtual_user_data.size() && token[virtual_user_data.size()] != '/') continue;
        std::string_view root = virtual_user_data;
        for (std::string_view dir : {virtual_workspace, virtual_uploads, virtual_outputs})
            if (has_path_prefix(token, dir)) root = dir;
        // Lexical depth below the root: a ".." that goes above it escapes.
        long depth = 0;
        for (auto seg : split_segments(token.substr(root.size()))) {
            if (seg == "..") {
                if (--depth < 0) return true;
            } else if (seg != ".") {
                ++depth;
            }
        }
    }
    return false;
}

inline tool_output refused(const resolved_path& r, std::string_view text, std::string_view shown) {
    if (r.error == text_thread_data_missing) return error_output(path_error(r.error));
    return error_output(fmt::format(fmt::runtime(text), shown));
}

// ---- bash -------------------------------------------------------------------

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

// ---- ls ---------------------------------------------------------------------

inline tool_output ls_body(sandbox_tool_context& ctx, const boost::json::object& args,
                           const sandbox_call& call) {
    std::optional<arg_error> err;
    auto path = string_arg(args, "path", true, err);
    if (err) return error_output(err->text);
    auto r = resolve_model_path(*path, call.paths, path_access::read);
    if (!r.ok()) return refused(r, denied_list, *path);
    std::error_code ec;
    if (!std::filesystem::is_directory(r.host, ec))
        return error_output(detail::format("Error: Directory not found: {}", *path));
    if (::access(r.host.c_str(), R_OK | X_OK) != 0)
        return error_output(detail::format("Error: Permission denied: {}", *path));
    std::string out;
    walk_tree(r.host, *call.paths, 2, walk_links::inside_walk_root, [&](const walk_entry& e) {
        std::string virt = to_virtual_path(e.path, *call.paths);
        if (virt.empty()) return true;
        if (!out.empty()) out += '\n';
        out += virt;
        if (e.is_dir) out += '/';
        return true;
    });
    if (out.empty()) return tool_output("(empty)");
    return tool_output(
        head_truncate(out, ctx.options.ls_output_max_chars, "Use a more specific path to see fewer results"));
}

// ---- read_file ----------------------------------------------------------------

inline tool_output read_file_body(sandbox_tool_context& ctx, const boost::json::object& args,
                                  const sandbox_call& call) {
    std::optional<arg_error> err;
    auto path = string_arg(args, "path", true, err);
    auto start = int_arg(args, "start_line", err);
    auto end = int_arg(args, "end_line", err);
    if (err) return error_output(err->text);
    if (start && *start < 1) return tool_output("(start_line must be >= 1)");
    if (end && *end < 1) return tool_output("(end_line must be >= 1)");
    if (start && end && *start > *end) return tool_output("(start_line > end_line — no lines in range)");
    auto r = resolve_model_path(*path, call.paths, path_access::read);
    if (!r.ok()) return refused(r, denied_read, *path);
    if (auto problem = not_a_regular_file(r.host, *path)) return error_output(std::move(*problem));
    std::string content;
    int open_errno = 0;
    if (read_whole_file(r.host, content, open_errno)) {
        if (open_errno == EACCES || open_errno == EPERM)
            return error_output(detail::format("Error: Permission denied reading file: {}", *path));
        return error_output(detail::format("Error: File not found: {}", *path));
    }
    if (!is_utf8_text(content))
        return error_output(detail::format("Error: cannot read '{}' as text — it appears to be a binary file "
                                           "(e.g. .xlsx, .pdf, or an image). "
                                           "read_file only supports UTF-8 text. Use bash with a suitable "
                                           "library instead (pandas/openpyxl for "
                                           "spreadsheets), or view_image for images.",
                                           *path));
    if (ctx.was_written(call.sandbox_id, r.host)) content = mask_host_paths(content, *call.paths);
    if (content.empty()) return tool_output("(empty)");
    if (start || end) {
        // Lines keep their endings, so a range reads exactly as the file has it.
        std::vector<std::string_view> lines;
        std::string_view rest = content;
        while (!rest.empty()) {
            std::size_t nl = rest.find('\n');
            std::size_t len = nl == std::string_view::npos ? rest.size() : nl + 1;
            lines.push_back(rest.substr(0, len));
            rest.remove_prefix(len);
        }
        const auto first = static_cast<std::size_t>(start.value_or(1));
        const auto last =
            std::min<std::size_t>(end ? static_cast<std::size_t>(*end) : lines.size(), lines.size());
        if (first > lines.size()) return tool_output("(start_line exceeds file length)");
        std::string selected;
        for (std::size_t i = first - 1; i < last; ++i)
            selected += lines[i];
        content = std::move(selected);
        if (content.empty()) return tool_output("(empty)");
    }
    return tool_output(head_truncate(content, ctx.options.read_file_output_max_chars,
                                     "Use start_line/end_line to read a specific range"));
}

// ---- write_file / str_replace ------------------------------------------------

inline std::string bounded_error(std::string text) { return excerpt(text, 2000); }

inline tool_output write_file_body(sandbox_tool_context& ctx, const boost::json::object& args,
                                   const sandbox_call& call) {
    std::optional<arg_error> err;
    auto path = string_arg(args, "path", true, err);
    auto content = string_arg(args, "content", true, err);
    const bool append = bool_arg(args, "append", false, err);
    if (err) return error_output(err->text);
    const std::size_t max = ctx.options.write_file_max_bytes;
    if (!append && max > 0 && content->size() > max)
        return error_output(detail::format("Error: write_file content ({} bytes) exceeds the {}-byte "
                                           "single-call limit. Split the content into "
                                           "smaller pieces: either (a) write the first section now, then use "
                                           "`str_replace` for further edits, or "
                                           "(b) call write_file again with append=True carrying the next "
                                           "section. See SIZE POLICY in the tool "
                                           "docstring or issue #3189 for the rationale.",
                                           content->size(), max));
    auto r = resolve_model_path(*path, call.paths, path_access::write);
    // The system's own refusal of the name (too long) is reported as the open()
    // that DeerFlow's tool makes would report it, not as a denied permission.
    if (r.os_error == ENAMETOOLONG)
        return error_output(bounded_error(detail::format("Error: Failed to write file '{}': OSError: {}",
                                                         *path, std::strerror(r.os_error))));
    if (!r.ok()) return refused(r, denied_write, *path);
    // A virtual path in the content is written as the host path it stands for;
    // one that climbs out of the thread's directories refuses the write.
    if (content_escapes_user_data(*content))
        return error_output(fmt::format(fmt::runtime(denied_write), *path));
    std::error_code ec;
    if (std::filesystem::is_directory(r.host, ec))
        return error_output(detail::format("Error: Path is a directory, not a file: {}", *path));
    std::lock_guard lock(path_lock(r.host));
    std::filesystem::create_directories(r.host.parent_path(), ec);
    if (ec)
        return error_output(bounded_error(
            detail::format("Error: Failed to write file '{}': OSError: {}", *path, ec.message())));
    const int e = write_file_nofollow(r.host, virtual_to_host_text(*content, *call.paths), append);
    if (e == EACCES || e == EPERM)
        return error_output(detail::format("Error: Permission denied writing to file: {}", *path));
    if (e == ELOOP) return error_output(fmt::format(fmt::runtime(denied_write), *path));
    if (e != 0)
        return error_output(bounded_error(
            detail::format("Error: Failed to write file '{}': OSError: {}", *path, std::strerror(e))));
    ctx.remember_written(call.sandbox_id, r.host);
    return tool_output("OK");
}

inline tool_output str_replace_body(sandbox_tool_context& ctx, const boost::json::object& args,
                                    const sandbox_call& call) {
    std::optional<arg_error> err;
    auto path = string_arg(args, "path", true, err);
    auto old_str = string_arg(args, "old_str", true, err);
    auto new_str = string_arg(args, "new_str", true, err);
    const bool all = bool_arg(args, "replace_all", false, err);
    if (err) return error_output(err->text);
    auto r = resolve_model_path(*path, call.paths, path_access::write);
    if (!r.ok()) return refused(r, denied_access, *path);
    if (content_escapes_user_data(*new_str))
        return error_output(fmt::format(fmt::runtime(denied_access), *path));
    std::lock_guard lock(path_lock(r.host));
    if (auto problem = not_a_regular_file(r.host, *path)) return error_output(std::move(*problem));
    std::string content;
    int open_errno = 0;
    if (read_whole_file(r.host, content, open_errno))
        return error_output(fmt::format(fmt::runtime(denied_access), *path));
    if (old_str->empty()) return tool_output("OK");
    // The model saw an agent-written file with virtual paths; match it that
    // way. The new text's virtual paths are written as host paths, as
    // write_file writes them, and the file is the agent's from now on.
    std::string from = *old_str;
    const std::string to = virtual_to_host_text(*new_str, *call.paths);
    if (ctx.was_written(call.sandbox_id, r.host)) from = virtual_to_host_text(from, *call.paths);
    std::size_t pos = content.find(from);
    if (pos == std::string::npos)
        return error_output(detail::format("Error: String to replace not found in file: {}", *path));
    while (pos != std::string::npos) {
        content.replace(pos, from.size(), to);
        if (!all) break;
        pos = content.find(from, pos + to.size());
    }
    const int e = write_file_nofollow(r.host, content, false);
    if (e == EACCES || e == EPERM || e == ELOOP)
        return error_output(fmt::format(fmt::runtime(denied_access), *path));
    if (e != 0)
        return error_output(bounded_error(
            detail::format("Error: Failed to write file '{}': OSError: {}", *path, std::strerror(e))));
    ctx.remember_written(call.sandbox_id, r.host);
    return tool_output("OK");
}

// ---- glob / grep ----------------------------------------------------------------

/// Lines longer than this (in characters, the newline counted) are not searched.
inline constexpr std::size_t grep_max_line_chars = 2000;

/// The time one glob or grep call may take (sandbox_options::search_timeout);
/// checked between files and lines.
struct search_budget {
    std::chrono::milliseconds limit;
    std::chrono::steady_clock::time_point deadline;
    bool ran_out = false;

    explicit search_budget(std::chrono::milliseconds l)
        : limit(l), deadline(std::chrono::steady_clock::now() + l) {}

    bool spent() {
        if (!ran_out && limit.count() > 0 && std::chrono::steady_clock::now() >= deadline) ran_out = true;
        return ran_out;
    }

    std::string message(std::string_view tool, std::size_t found, std::string_view what) const {
        const auto ms = limit.count();
        const std::string span = ms % 1000 == 0
                                     ? detail::format("{} second{}", ms / 1000, ms == 1000 ? "" : "s")
                                     : detail::format("{} ms", ms);
        return detail::format(
            "Error: {} stopped after {}, its time limit, with {} {} found so far. Narrow the "
            "path, add a glob filter or simplify the pattern.",
            tool, span, found, what);
    }
};

inline tool_output glob_body(sandbox_tool_context& ctx, const boost::json::object& args,
                             const sandbox_call& call) {
    std::optional<arg_error> err;
    auto pattern = string_arg(args, "pattern", true, err);
    auto path = string_arg(args, "path", true, err);
    const bool include_dirs = bool_arg(args, "include_dirs", false, err);
    auto max_arg = int_arg(args, "max_results", err);
    if (err) return error_output(err->text);
    const std::size_t max = clamp_results(max_arg, 200, ctx.options.glob_max_results);
    auto r = resolve_model_path(*path, call.paths, path_access::read);
    if (!r.ok()) return refused(r, denied_list, *path);
    std::error_code ec;
    if (!std::filesystem::is_directory(r.host, ec))
        return error_output(detail::format("Error: Directory not found: {}", *path));
    std::vector<std::string> found;
    bool truncated = false;
    search_budget budget(ctx.options.search_timeout);
    walk_tree(r.host, *call.paths, 0, walk_links::inside_thread, [&](const walk_entry& e) {
        if (budget.spent()) return false;
        if (e.is_dir && !include_dirs) return true;
        if (!glob_match(*pattern, e.rel)) return true;
        if (found.size() == max) {
            truncated = true;
            return false;
        }
        found.push_back(to_virtual_path(e.path, *call.paths));
        return true;
    });
    if (budget.ran_out) return error_output(budget.message("glob", found.size(), "paths"));
    if (found.empty()) return tool_output(detail::format("No files matched under {}", *path));
    std::string out =
        detail::format("Found {} paths under {}{}", found.size(), *path,
                       truncated ? detail::format(" (showing first {})", found.size()) : std::string());
    for (std::size_t i = 0; i < found.size(); ++i)
        out += detail::format("\n{}. {}", i + 1, found[i]);
    if (truncated) out += "\nResults truncated. Narrow the path or pattern to see fewer matches.";
    return tool_output(std::move(out));
}

inline tool_output grep_body(sandbox_tool_context& ctx, const boost::json::object& args,
                             const sandbox_call& call) {
    std::optional<arg_error> err;
    auto pattern = string_arg(args, "pattern", true, err);
    auto path = string_arg(args, "path", true, err);
    auto file_glob = string_arg(args, "glob", false, err);
    const bool literal = bool_arg(args, "literal", false, err);
    const bool case_sensitive = bool_arg(args, "case_sensitive", false, err);
    auto max_arg = int_arg(args, "max_results", err);
    if (err) return error_output(err->text);
    const std::size_t max = clamp_results(max_arg, 100, ctx.options.grep_max_results);
    std::optional<std::regex> re;
    if (!literal) {
        try {
            re.emplace(*pattern, search_regex_flags(case_sensitive));
        } catch (const std::regex_error& e) {
            return error_output(detail::format("Error: Invalid regex pattern: {}", e.what()));
        }
    }
    const std::string needle = case_sensitive ? *pattern : lower(*pattern);
    auto r = resolve_model_path(*path, call.paths, path_access::read);
    if (!r.ok()) return refused(r, denied_list, *path);
    std::error_code ec;
    const bool single_file = std::filesystem::is_regular_file(r.host, ec);
    if (!single_file && !std::filesystem::is_directory(r.host, ec))
        return error_output(detail::format("Error: Directory not found: {}", *path));

    std::vector<std::string> hits;
    bool truncated = false;
    search_budget budget(ctx.options.search_timeout);
    auto search_file = [&](const std::filesystem::path& file, std::string_view rel) {
        if (file_glob && !file_glob->empty()) {
            const bool by_path = file_glob->find('/') != std::string::npos;
            const std::string name = std::filesystem::path(std::string(rel)).filename().string();
            if (!(by_path ? glob_match(*file_glob, rel) : wildcard_match(*file_glob, name))) return true;
        }
        std::error_code fec;
        if (std::filesystem::file_size(file, fec) > 1024 * 1024 || fec) return true; // big files are skipped
        std::string content;
        int e = 0;
        if (read_whole_file(file, content, e) || !is_utf8_text(content)) return true; // so are binaries
        const std::string virt = to_virtual_path(file, *call.paths);
        std::size_t line_no = 0;
        std::string_view rest = content;
        while (!rest.empty()) {
            ++line_no;
            if (budget.spent()) return false;
            std::size_t nl = rest.find('\n');
            const bool ended = nl != std::string_view::npos;
            std::string_view line = rest.substr(0, nl);
            rest.remove_prefix(ended ? nl + 1 : rest.size());
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            // DeerFlow skips lines longer than 2,000 characters (its newline
            // counted), which keeps a regex's cost per line bounded.
            if (utf8_chars(line) + (ended ? 1 : 0) > grep_max_line_chars) continue;
            const std::string probe(line);
            const bool match = re ? detail::regex_search(probe, *re)
                                  : (case_sensitive ? probe : lower(probe)).find(needle) != std::string::npos;
            if (!match) continue;
            if (hits.size() == max) {
                truncated = true;
                return false;
            }
            hits.push_back(detail::format("{}:{}: {}", virt, line_no, excerpt(line, utf8_offset(line, 200))));
        }
        return true;
    };
    if (single_file) {
        search_file(r.host, r.host.filename().string());
    } else {
        walk_tree(r.host, *call.paths, 0, walk_links::inside_thread, [&](const walk_entry& e) {
            if (budget.spent()) return false;
            if (e.is_dir) return true;
            std::error_code fec;
            if (!std::filesystem::is_regular_file(e.path, fec)) return true;
            return search_file(e.path, e.rel);
        });
    }
    if (budget.ran_out) return error_output(budget.message("grep", hits.size(), "matches"));
    if (hits.empty()) return tool_output(detail::format("No matches found under {}", *path));
    std::string out =
        detail::format("Found {} matches under {}{}", hits.size(), *path,
                       truncated ? detail::format(" (showing first {})", hits.size()) : std::string());
    for (const auto& h : hits)
        out += "\n" + h;
    if (truncated) out += "\nResults truncated. Narrow the path or add a glob filter.";
    return tool_output(std::move(out));
}

// ---- present_files --------------------------------------------------------------

inline tool_output present_files_body(const boost::json::object& args, const sandbox_call& call) {
    const auto* list = args.if_contains("filepaths");
    if (!list || !list->is_array())
        return error_output("Error: argument 'filepaths' must be a list of paths");
    const auto outputs = std::filesystem::path(weakly_canonical_string(call.paths->outputs_path));
    std::vector<std::string> normalized;
    for (const auto& v : list->get_array()) {
        const std::string p = v.is_string() ? std::string(v.get_string()) : boost::json::serialize(v);
        auto reject = [&] {
            // Text kept for parity with DeerFlow (reference §5.3).
            return error_output(
                detail::format("Error: Only files in /mnt/user-data/outputs can be presented: {}", p));
        };
        if (!v.is_string() || p.find('\0') != std::string::npos) return reject();
        std::filesystem::path host;
        if (has_path_prefix(p, virtual_user_data)) {
            // As DeerFlow's resolve_virtual_path: ".." is allowed while the
            // resolved path stays in the thread's user data; leaving it is
            // a traversal.
            std::error_code ec;
            const auto mapped = virtual_to_host_path(p, *call.paths);
            if (!mapped.empty()) host = std::filesystem::weakly_canonical(mapped, ec);
            const auto parent = common_parent(*call.paths);
            const bool inside = !ec && !host.empty() &&
                                (parent.empty() ? inside_thread_roots(host, *call.paths)
                                                : is_within(host, weakly_canonical_string(parent)));
            if (!inside) return error_output(path_error(text_path_traversal));
        } else {
            std::error_code ec;
            if (!std::filesystem::path(p).is_absolute()) return reject();
            host = std::filesystem::weakly_canonical(p, ec);
            if (ec) return reject();
        }
        if (!is_within(host, outputs) || host == outputs) return reject();
        normalized.push_back(detail::format("{}/{}", virtual_outputs,
                                            std::filesystem::relative(host, outputs).generic_string()));
    }
    tool_output out("Successfully presented files");
    out.update.set<artifacts_field>(normalized);
    return out;
}

} // namespace detail

AGENTWARE_DECL std::vector<std::shared_ptr<tool_interface>>
make_sandbox_tools(std::shared_ptr<detail::sandbox_tool_context> ctx, bool include_disabled_bash) {
    using detail::description_parameter;
    std::vector<std::shared_ptr<tool_interface>> tools;
    auto add = [&](std::string name, std::string description, std::string properties, std::string required,
                   bool acquire, auto body) {
        std::string schema =
            detail::format(R"({{"type":"object","properties":{{{},{}}},"required":["description"{}]}})",
                           description_parameter, properties, required);
        tools.push_back(share_tool(
            make_tool(std::move(name), std::move(description), schema,
                      [ctx, acquire, body](const boost::json::object& args, const tool_runtime& rt) {
                          return detail::sandbox_tool_call(
                              *ctx, args, rt, acquire,
                              [&](const boost::json::object& a, const detail::sandbox_call& c) {
                                  return body(*ctx, a, c);
                              });
                      })));
    };
    if (ctx->options.offers_bash() || include_disabled_bash) {
        add("bash",
            "Execute a bash command in the sandbox. The working directory is /mnt/user-data/workspace; use "
            "paths "
            "under /mnt/user-data. Long-running processes must be started in the background with their "
            "output "
            "redirected to a file.",
            R"("command":{"type":"string","description":"The bash command to run."})", R"(,"command")", true,
            [](detail::sandbox_tool_context& c, const boost::json::object& a,
               const detail::sandbox_call& call) {
                if (!c.options.offers_bash())
                    return detail::error_output(std::string(detail::text_host_bash_disabled));
                return detail::bash_body(c, a, call);
            });
    }
    add("ls", "List the contents of a directory as a tree, two levels deep.",
        R"("path":{"type":"string","description":"Absolute virtual path of the directory, e.g. /mnt/user-data/workspace."})",
        R"(,"path")", true, &detail::ls_body);
    add("read_file",
        "Read a UTF-8 text file. Use start_line and end_line (1-based, inclusive) to read part of a long "
        "file.",
        R"("path":{"type":"string","description":"Absolute virtual path of the file."},)"
        R"("start_line":{"type":"integer","description":"First line to read (1-based)."},)"
        R"("end_line":{"type":"integer","description":"Last line to read (inclusive)."})",
        R"(,"path")", true, &detail::read_file_body);
    add("write_file",
        "Write text to a file, creating parent directories. SIZE POLICY: one call writes at most 80 KiB; "
        "write "
        "larger files in sections with append=true, or edit them with str_replace.",
        R"("path":{"type":"string","description":"Absolute virtual path of the file."},)"
        R"("content":{"type":"string","description":"The text to write."},)"
        R"("append":{"type":"boolean","description":"Append instead of replacing the file.","default":false})",
        R"(,"path","content")", true, &detail::write_file_body);
    add("str_replace",
        "Replace text in a file: the first occurrence of old_str, or every one with replace_all. Read the "
        "file "
        "first and quote old_str exactly.",
        R"("path":{"type":"string","description":"Absolute virtual path of the file."},)"
        R"("old_str":{"type":"string","description":"The exact text to replace."},)"
        R"("new_str":{"type":"string","description":"The replacement text."},)"
        R"("replace_all":{"type":"boolean","description":"Replace every occurrence.","default":false})",
        R"(,"path","old_str","new_str")", true, &detail::str_replace_body);
    add("glob", "Find files whose path relative to `path` matches a glob pattern (`**` spans directories).",
        R"("pattern":{"type":"string","description":"Glob pattern, e.g. **/*.md."},)"
        R"("path":{"type":"string","description":"Absolute virtual directory to search."},)"
        R"("include_dirs":{"type":"boolean","default":false},)"
        R"("max_results":{"type":"integer","default":200})",
        R"(,"pattern","path")", true, &detail::glob_body);
    add("grep", "Search file contents for a regular expression (or literal text) under a directory.",
        R"("pattern":{"type":"string","description":"Regular expression, or text when literal is true."},)"
        R"("path":{"type":"string","description":"Absolute virtual directory or file to search."},)"
        R"("glob":{"type":"string","description":"Only files whose name matches this glob, e.g. *.py."},)"
        R"("literal":{"type":"boolean","default":false},)"
        R"("case_sensitive":{"type":"boolean","default":false},)"
        R"("max_results":{"type":"integer","default":100})",
        R"(,"pattern","path")", true, &detail::grep_body);
    tools.push_back(share_tool(make_tool(
        "present_files",
        "Present files to the user as results of the task. Only files under /mnt/user-data/outputs can be "
        "presented.",
        R"({"type":"object","properties":{"filepaths":{"type":"array","items":{"type":"string"},)"
        R"("description":"Virtual paths of the files, under /mnt/user-data/outputs."}},"required":["filepaths"]})",
        [ctx](const boost::json::object& args, const tool_runtime& rt) {
            const auto* td = rt.field<thread_data_field>();
            if (!td || !*td)
                return detail::error_output("Error: Thread outputs path is not available in runtime state");
            return detail::sandbox_tool_call(*ctx, args, rt, false,
                                             [](const boost::json::object& a, const detail::sandbox_call& c) {
                                                 return detail::present_files_body(a, c);
                                             });
        })));
    return tools;
}

} // namespace agentware

#endif
