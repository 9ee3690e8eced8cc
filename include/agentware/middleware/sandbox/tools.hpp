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
//
// This header declares make_sandbox_tools and gathers the tools: their
// options (sandbox/options.hpp), what they share (sandbox/tools/context.hpp,
// sandbox/tools/tool_call.hpp) and each family (sandbox/tools/bash.hpp,
// files.hpp, search.hpp, present_files.hpp).

#include <agentware/detail/config.hpp>
#include <agentware/middleware/sandbox/options.hpp>
#include <agentware/middleware/sandbox/tools/context.hpp>
#include <agentware/tool/tool_set.hpp>

#include <memory>
#include <string_view>
#include <vector>

namespace agentware {

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

#include <agentware/detail/format.hpp>
#include <agentware/middleware/sandbox/tools/bash.hpp>
#include <agentware/middleware/sandbox/tools/files.hpp>
#include <agentware/middleware/sandbox/tools/present_files.hpp>
#include <agentware/middleware/sandbox/tools/search.hpp>
#include <agentware/thread/fields.hpp>
#include <agentware/tool/make_tool.hpp>

#include <boost/json/object.hpp>

#include <string>
#include <utility>

namespace agentware {

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
