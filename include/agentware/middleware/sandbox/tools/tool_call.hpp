#ifndef AGENTWARE_MIDDLEWARE_SANDBOX_TOOLS_TOOL_CALL_HPP
#define AGENTWARE_MIDDLEWARE_SANDBOX_TOOLS_TOOL_CALL_HPP

// One sandbox tool call: its preamble (the thread's paths, the sandbox
// acquired on first use), its error net, and the refusals and file helpers
// the tools share.

#include <agentware/detail/format.hpp>
#include <agentware/filesystem/detail/file_search.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/middleware/sandbox/tools/context.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>
#include <agentware/thread/fields.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/json/object.hpp>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

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

} // namespace detail

} // namespace agentware

#endif
