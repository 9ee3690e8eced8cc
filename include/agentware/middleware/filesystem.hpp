#ifndef AGENTWARE_MIDDLEWARE_FILESYSTEM_HPP
#define AGENTWARE_MIDDLEWARE_FILESYSTEM_HPP

// filesystem: deepagents' FilesystemMiddleware. Offers the tools ls,
// read_file, write_file, edit_file, glob, grep, delete and mkdir over a
// backend (the agent state by default, see filesystem/), plus execute when
// the backend can run commands (hidden from the model otherwise). Every path
// goes through validate_path and the permission rules first. Tool results
// larger than the eviction limit are written to /large_tool_results/ and
// replaced by a preview; human messages larger than theirs go to
// /conversation_history/.
//
// The model-facing texts are deepagents 0.7.8's (reference langchain.md §9).
//
// The tools are in middleware/filesystem/tools.hpp (read_file's format in
// middleware/filesystem/read_format.hpp), the options in
// middleware/filesystem/options.hpp; this header holds the middleware: the
// evictions and the system prompt.

#include <agentware/agent/requests.hpp>
#include <agentware/agent/runtime.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/core/fields.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/filesystem/backend.hpp>
#include <agentware/filesystem/state_backend.hpp>
#include <agentware/message/content.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/message/id.hpp>
#include <agentware/middleware/detail/hook_tool_runtime.hpp>
#include <agentware/middleware/filesystem/options.hpp>
#include <agentware/middleware/filesystem/read_format.hpp>
#include <agentware/middleware/filesystem/tools.hpp>
#include <agentware/state/basic_state.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/json/value.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace agentware {

namespace detail {

inline constexpr std::size_t fs_preview_line_chars = 1000;

// Text kept for parity with deepagents (reference langchain.md §9).
inline constexpr std::string_view fs_too_large_tool =
    "Tool result too large, the result of this tool call {} was saved in the filesystem at this path: {}\n\n"
    "You can read the result from the filesystem by using the read_file tool, but make sure to only read "
    "part "
    "of the result at a time.\n\n"
    "You can do this by specifying an offset and limit in the read_file tool call. For example, to read the "
    "first 100 lines, you can use the read_file tool with offset=0 and limit=100.\n\n"
    "Here is a preview showing the head and tail of the result (lines of the form `... [N lines truncated] "
    "...` indicate omitted lines in the middle of the content):\n\n{}\n";
// Text kept for parity with deepagents (middleware/filesystem.py's TOO_LARGE_HUMAN_MSG).
inline constexpr std::string_view fs_too_large_human =
    "Message content too large and was saved to the filesystem at: {}\n\n"
    "You can read the full content using the read_file tool with pagination (offset and limit "
    "parameters).\n\n"
    "Here is a preview showing the head and tail of the content:\n\n{}\n";

inline constexpr std::string_view fs_default_system_prompt =
    "## Filesystem tools\n\n"
    "You have a filesystem: ls lists a directory, read_file reads a file a window of lines at a time (offset "
    "and limit), write_file creates or replaces a file, edit_file replaces exact text in a file, glob finds "
    "files by name pattern, grep finds files containing a literal text, delete removes a file or a directory "
    "and mkdir creates a directory. Paths are absolute and start with /. Read a file before you edit it.";
inline constexpr std::string_view fs_execute_prompt =
    "\n\nThe execute tool runs a shell command in the sandbox and returns its output and exit code.";

/// Tools whose results are never evicted (deepagents' TOOLS_EXCLUDED_FROM_EVICTION, plus mkdir).
inline bool fs_excluded_from_eviction(std::string_view name) {
    static constexpr std::string_view names[] = {"ls",        "glob",       "grep",   "read_file",
                                                 "edit_file", "write_file", "delete", "mkdir"};
    return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

/// The head and tail of a text, numbered (deepagents' eviction preview).
inline std::string fs_preview(std::string_view text) {
    const auto lines = fs_split_lines(text);
    auto clip = [](std::vector<std::string_view> ls) {
        for (auto& l : ls)
            l = l.substr(0, detail::utf8_offset(l, fs_preview_line_chars));
        return ls;
    };
    if (lines.size() <= 10)
        return fs_number_lines(clip(lines), 1, line_number_format::current, fs_preview_line_chars);
    std::vector<std::string_view> head(lines.begin(), lines.begin() + 5), tail(lines.end() - 5, lines.end());
    return fs_number_lines(clip(head), 1, line_number_format::current, fs_preview_line_chars) +
           detail::format("\n... [{} lines truncated] ...\n", lines.size() - 10) +
           fs_number_lines(clip(tail), lines.size() - 4, line_number_format::current, fs_preview_line_chars);
}

/// The tool call id as a file name: ".", "/" and "\" become "_".
inline std::string fs_sanitise_id(std::string_view id) {
    std::string out(id);
    for (char& c : out)
        if (c == '.' || c == '/' || c == '\\' || c == '\0') c = '_';
    if (out.empty()) out = "_";
    return out;
}

inline std::string fs_uuid4() {
    const std::uint64_t a = next_unique_id_bits(), b = next_unique_id_bits();
    return detail::format("{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xfff,
                          0x8000 | (b >> 48 & 0x3fff), b & 0xffffffffffffULL);
}

} // namespace detail

/// The filesystem middleware (deepagents' FilesystemMiddleware).
class filesystem {
public:
    using options_type = filesystem_options;
    using state_fields = fields<files_field>;

    /// Files in the agent state.
    filesystem() : filesystem(filesystem_options{}) {}
    explicit filesystem(filesystem_options o)
        : filesystem([](const tool_runtime& rt) { return any_backend(state_backend(rt)); }, std::move(o)) {}

    /// One backend for every call.
    template <filesystem_backend B>
        requires(!std::is_convertible_v<B, backend_factory>)
    explicit filesystem(B backend, filesystem_options o = {})
        : filesystem([b = any_backend(std::move(backend))](const tool_runtime&) { return b; }, std::move(o)) {
    }

    /// A backend chosen per call from the tool's runtime.
    explicit filesystem(backend_factory factory, filesystem_options o) {
        o.validate();
        auto ctx = std::make_shared<detail::fs_context>();
        ctx->options = std::move(o);
        ctx->factory = std::move(factory);
        ctx_ = ctx;
        auto wanted = [&](std::string_view name) {
            return ctx_->options.tools.empty() ||
                   std::find(ctx_->options.tools.begin(), ctx_->options.tools.end(), name) !=
                       ctx_->options.tools.end();
        };
        if (wanted("ls")) tools_.push_back(detail::fs_ls_tool(ctx_));
        if (wanted("read_file")) tools_.push_back(detail::fs_read_tool(ctx_));
        if (wanted("write_file")) tools_.push_back(detail::fs_write_tool(ctx_));
        if (wanted("edit_file")) tools_.push_back(detail::fs_edit_tool(ctx_));
        if (wanted("glob")) tools_.push_back(detail::fs_glob_tool(ctx_));
        if (wanted("grep")) tools_.push_back(detail::fs_grep_tool(ctx_));
        if (wanted("delete")) tools_.push_back(detail::fs_delete_tool(ctx_));
        if (wanted("mkdir")) tools_.push_back(detail::fs_mkdir_tool(ctx_));
        if (wanted("execute")) tools_.push_back(detail::fs_execute_tool(ctx_));
    }

    const filesystem_options& options() const noexcept { return ctx_->options; }

    /// The tools, execute included: wrap_model_call hides it when the run's backend cannot execute.
    const std::vector<std::shared_ptr<tool_interface>>& tools() const noexcept { return tools_; }

    /// Evicts oversized human messages to /conversation_history/ (once: the
    /// replacement is small).
    void before_model(auto& state, runtime& rt) {
        if (!ctx_->options.human_message_token_limit_before_evict) return;
        const std::size_t limit =
            detail::fs_chars_per_token * *ctx_->options.human_message_token_limit_before_evict;
        std::optional<any_backend> backend;
        for (auto& m : state.messages) {
            if (!m.is_human()) continue;
            std::size_t size = 0;
            for (const auto& b : m.content)
                if (b.is_text()) size += b.text.size();
            if (size <= limit) continue;
            std::string text = m.text();
            if (!backend) {
                const tool_runtime trt = detail::hook_tool_runtime(state, &rt);
                backend = ctx_->backend(trt);
            }
            const std::string path = "/conversation_history/" + detail::fs_uuid4() + ".md";
            auto res = backend->write(path, text);
            if (!res.error.empty()) continue; // keep the message as it is
            if (res.files_update) {
                file_map update =
                    boost::json::value_to<file_map>(boost::json::value(std::move(*res.files_update)));
                files_field::merge(agentware::get<files_field>(state), std::move(update));
            }
            std::vector<content_block> blocks;
            blocks.push_back(text_block(
                fmt::format(fmt::runtime(detail::fs_too_large_human), path, detail::fs_preview(text))));
            for (auto& b : m.content)
                if (!b.is_text()) blocks.push_back(std::move(b));
            m.content = std::move(blocks);
        }
    }

    /// Adds the filesystem's part of the system prompt; hides execute when
    /// the run's backend cannot run commands.
    auto wrap_model_call(auto& req, auto&& next) {
        bool offers_execute = false;
        for (const auto& t : req.tools.get())
            if (t.name == "execute") offers_execute = true;
        bool can_execute = false;
        if (offers_execute && req.state) {
            const tool_runtime trt = detail::hook_tool_runtime(*req.state, req.rt);
            can_execute = ctx_->backend(trt).can_execute();
            if (!can_execute) {
                auto& tools = req.tools.edit();
                tools.erase(std::remove_if(tools.begin(), tools.end(),
                                           [](const tool_schema& s) { return s.name == "execute"; }),
                            tools.end());
            }
        }
        std::string prompt = ctx_->options.system_prompt ? *ctx_->options.system_prompt
                                                         : std::string(detail::fs_default_system_prompt);
        if (!ctx_->options.system_prompt && can_execute) prompt += detail::fs_execute_prompt;
        if (!prompt.empty()) {
            if (!std::string_view(req.system_prompt).empty()) req.system_prompt += "\n\n";
            req.system_prompt += prompt;
        }
        return next(req);
    }

    /// Evicts oversized tool results to /large_tool_results/.
    auto wrap_tool_call(auto& req, auto&& next) {
        auto ctx = ctx_;
        const auto* state = req.state;
        const runtime* rt = req.rt;
        return map_response(req, next, [ctx, state, rt](tool_response r) {
            if (!ctx->options.tool_token_limit_before_evict || !state) return r;
            if (detail::fs_excluded_from_eviction(r.msg.name)) return r;
            const std::size_t limit =
                detail::fs_chars_per_token * *ctx->options.tool_token_limit_before_evict;
            std::string text = r.msg.text();
            if (text.size() <= limit) return r;
            const std::string id(r.msg.tool_call_id());
            const std::string path = "/large_tool_results/" + detail::fs_sanitise_id(id);
            const tool_runtime trt = detail::hook_tool_runtime(*state, rt, id);
            auto res = ctx->backend(trt).write(path, text);
            if (!res.error.empty()) return r; // keep the original
            detail::fs_merge_files_update(r.update, res.files_update);
            std::vector<content_block> blocks;
            blocks.push_back(text_block(
                fmt::format(fmt::runtime(detail::fs_too_large_tool), id, path, detail::fs_preview(text))));
            for (auto& b : r.msg.content)
                if (!b.is_text()) blocks.push_back(std::move(b));
            r.msg.content = std::move(blocks);
            return r;
        });
    }

    /// The text a tool result of `text` is replaced by, `path` being where it was saved.
    static std::string eviction_message(std::string_view tool_call_id, std::string_view path,
                                        std::string_view text) {
        return fmt::format(fmt::runtime(detail::fs_too_large_tool), tool_call_id, path,
                           detail::fs_preview(text));
    }

private:
    std::shared_ptr<const detail::fs_context> ctx_;
    std::vector<std::shared_ptr<tool_interface>> tools_;
};

} // namespace agentware

#endif
