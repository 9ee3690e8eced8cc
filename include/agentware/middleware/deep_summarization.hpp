#ifndef AGENTWARE_MIDDLEWARE_DEEP_SUMMARIZATION_HPP
#define AGENTWARE_MIDDLEWARE_DEEP_SUMMARIZATION_HPP

// deep_summarization: the summarization middleware as deepagents sets it up
// (reference next.md §2.5): its defaults, the summary as a message, and the
// summarised messages offloaded to `/conversation_history/{thread_id}.md`
// through a filesystem backend. Not a second middleware: a preset of
// summarization.hpp.

#include <agentware/filesystem/backend.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/summarization.hpp>
#include <agentware/model/any_chat_model.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
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
inline std::string offload_section(const summarization_event& e) {
    return fmt::format("## Summarized at {:%Y-%m-%dT%H:%M:%SZ}\n\n{}\n\n",
                       std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()),
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
/// summarised to `{dir}/{thread_id}.md` in `backend` (read, then written
/// whole) and returns that path. A backend that keeps its files in the agent
/// state cannot be written from here (its write returns a state update): with
/// one, route `dir` to a disk backend with a composite backend. On any error
/// it returns nothing and the summary message says nothing of a file.
inline std::function<std::optional<std::string>(const summarization_event&)>
offload_history_to(any_backend backend, std::string dir = "/conversation_history") {
    return [backend = std::move(backend),
            dir = std::move(dir)](const summarization_event& e) mutable -> std::optional<std::string> {
        const std::string path = detail::history_file(dir, e.thread_id);
        fs_read_result before = backend.read(path);
        std::string content = before.error.empty() ? std::move(before.content) : std::string();
        content += detail::offload_section(e);
        fs_write_result written = backend.write(path, content);
        if (!written.error.empty() || written.files_update) return std::nullopt;
        return path;
    };
}

/// summarization with deepagents' settings, offloading to `backend`.
inline summarization make_deep_summarization(any_backend backend, std::size_t max_input_tokens = 0,
                                             std::optional<any_chat_model> model = std::nullopt,
                                             std::string dir = "/conversation_history") {
    summarization s(deepagents_summarization_options(max_input_tokens), std::move(model));
    s.offload = offload_history_to(std::move(backend), std::move(dir));
    return s;
}

} // namespace agentware

#endif
