#ifndef AGENTWARE_MIDDLEWARE_DEEP_SUMMARIZATION_HPP
#define AGENTWARE_MIDDLEWARE_DEEP_SUMMARIZATION_HPP

// deep_summarization: the summarization middleware as deepagents sets it up
// (reference next.md §2.5): its defaults, the summary as a message, and the
// summarised messages offloaded to `/conversation_history/{thread_id}.md`
// through a filesystem backend (the agent state's files included: the
// state backend's write is applied with the compaction). Not a second
// middleware: a preset of summarization.hpp.

#include <agentware/detail/format.hpp>
#include <agentware/filesystem/backend.hpp>
#include <agentware/filesystem/state_backend.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/summarization.hpp>
#include <agentware/model/any_chat_model.hpp>

#include <fmt/chrono.h>
#include <fmt/core.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace agentware {

/// deepagents' `compute_summarization_defaults`: with the model's input window
/// known, trigger at 85 % of it and keep 10 %; otherwise trigger at 170,000
/// tokens and keep 6 messages. The summary is a message (summary_as_message).
inline summarization_options deepagents_summarization_options(std::size_t max_input_tokens = 0) {
    summarization_options o;
    o.enabled = true;
    o.max_input_tokens = max_input_tokens;
    o.summary_as_message = true;
    if (max_input_tokens > 0) {
        o.trigger = {context_size{context_size::kind::fraction, 0.85}};
        o.keep = context_size{context_size::kind::fraction, 0.10};
    } else {
        o.trigger = {context_size{context_size::kind::tokens, 170000}};
        o.keep = context_size{context_size::kind::messages, 6};
    }
    return o;
}

namespace detail {

// One offloaded batch: a heading with the time, then the messages in
// LangChain's buffer form ("Human: ...\nAI: ...").
inline std::string offload_section(const summarization_event& e, std::chrono::system_clock::time_point at) {
    return detail::format("## Summarized at {:%Y-%m-%dT%H:%M:%SZ}\n\n{}\n\n",
                          std::chrono::floor<std::chrono::seconds>(at),
                          buffer_string(e.messages_to_summarize));
}

inline std::string history_file(std::string_view dir, std::string_view thread_id) {
    std::string path(dir);
    if (path.empty() || path.back() != '/') path += '/';
    path += thread_id.empty() ? std::string_view("default") : thread_id;
    path += ".md";
    return path;
}

} // namespace detail

/// The offload for summarization::offload: appends the messages about to be
/// summarised to `{dir}/{thread_id}.md` in the backend `backend` gives for the
/// state being compacted (read, then written whole) and returns that path. A
/// backend that keeps its files in the agent state (the state backend) returns
/// its write as a `files` update: it goes in the event's update, and the
/// summarization applies it with the compaction. On any error it returns
/// nothing and the summary message says nothing of a file. `now` gives the
/// time of each batch's heading (empty: the system clock).
inline std::function<std::optional<std::string>(const summarization_event&)>
offload_history_to(backend_factory backend, std::string dir = "/conversation_history",
                   std::function<std::chrono::system_clock::time_point()> now = {}) {
    return [backend = std::move(backend), dir = std::move(dir),
            now = std::move(now)](const summarization_event& e) -> std::optional<std::string> {
        const tool_runtime unbound;
        any_backend b = backend(e.tool_rt ? *e.tool_rt : unbound);
        const std::string path = detail::history_file(dir, e.thread_id);
        fs_read_result before = b.read(path);
        std::string content = before.error.empty() ? std::move(before.content) : std::string();
        content += detail::offload_section(e, now ? now() : std::chrono::system_clock::now());
        fs_write_result written = b.write(path, content);
        if (!written.error.empty()) return std::nullopt;
        if (written.files_update) {
            if (!e.update) return std::nullopt; // nowhere to put the state backend's write
            detail::fs_merge_files_update(*e.update, written.files_update);
        }
        return path;
    };
}

/// The same with one backend for every compaction.
template <filesystem_backend B>
    requires(!std::is_convertible_v<B, backend_factory>)
std::function<std::optional<std::string>(const summarization_event&)>
offload_history_to(B backend, std::string dir = "/conversation_history") {
    return offload_history_to([b = any_backend(std::move(backend))](const tool_runtime&) { return b; },
                              std::move(dir));
}

/// The files of the agent state, as the filesystem middleware's default backend.
inline backend_factory state_backend_factory() {
    return [](const tool_runtime& rt) { return any_backend(state_backend(rt)); };
}

/// summarization with deepagents' settings, offloading to `backend` (the
/// agent state's files by default).
inline summarization make_deep_summarization(backend_factory backend = state_backend_factory(),
                                             std::size_t max_input_tokens = 0,
                                             std::optional<any_chat_model> model = std::nullopt,
                                             std::string dir = "/conversation_history") {
    summarization s(deepagents_summarization_options(max_input_tokens), std::move(model));
    s.offload = offload_history_to(std::move(backend), std::move(dir));
    return s;
}

/// The same with one backend for every compaction.
template <filesystem_backend B>
    requires(!std::is_convertible_v<B, backend_factory>)
summarization make_deep_summarization(B backend, std::size_t max_input_tokens = 0,
                                      std::optional<any_chat_model> model = std::nullopt,
                                      std::string dir = "/conversation_history") {
    return make_deep_summarization([b = any_backend(std::move(backend))](const tool_runtime&) { return b; },
                                   max_input_tokens, std::move(model), std::move(dir));
}

} // namespace agentware

#endif
