#ifndef AGENTWARE_MIDDLEWARE_DETAIL_AI_EDIT_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_AI_EDIT_HPP

// Edits that after_model middlewares make to the model's last answer when
// they take tool calls away from it (loop_detection, subagent_limit) and the
// run-scoped bookkeeping they keep in the middleware object.

#include <agentware/agent/runtime.hpp>
#include <agentware/message/message.hpp>

#include <boost/json/object.hpp>

#include <compare>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware::detail {

/// What a note becomes on an answer with no text (DeerFlow's `_append_text`
/// helpers differ here). A LangChain message never has None content, and
/// LangChain's OpenAI conversion turns a null content into "": so what a
/// middleware does with "" is what it does with every text-less answer.
enum class empty_answer_note {
    separated, ///< "\n\n" + note (loop detection, token budget: "" + "\n\n" + note)
    alone,     ///< the note alone (safety finish reason, subagent limit: "" is replaced)
};

/// Appends a visible note to an ai message's text: DeerFlow's `_append_text`.
/// No text at all gets the note as `empty` says; a single text block gets
/// "\n\n" + note appended; any other content gets a new text block "\n\n" + note.
inline void append_note(message& m, std::string_view note, empty_answer_note empty) {
    if (m.content.empty()) {
        m.content.push_back(text_block(empty == empty_answer_note::separated ? "\n\n" + std::string(note)
                                                                             : std::string(note)));
    } else if (m.content.size() == 1 && m.content.front().is_text()) {
        if (m.content.front().text.empty() && empty == empty_answer_note::alone) {
            m.content.front().text = std::string(note);
            return;
        }
        m.content.front().text += "\n\n";
        m.content.front().text += note;
    } else {
        m.content.push_back(text_block("\n\n" + std::string(note)));
    }
}

/// After tool calls were taken away: a message that calls nothing any more
/// says it stopped ("tool_calls" -> "stop"), as DeerFlow rewrites finish_reason.
inline void settle_finish_reason(message& m) {
    if (!m.tool_calls.empty() || !m.invalid_tool_calls().empty()) return;
    if (m.provider.finish_reason() == "tool_calls") m.provider.set_finish_reason("stop");
}

/// The last message when it is an ai message with tool calls, else null:
/// what DeerFlow's after_model guards look at.
template <class State>
message* last_ai_with_calls(State& state) noexcept {
    if (state.messages.empty()) return nullptr;
    message& last = state.messages.back();
    return last.is_ai() && !last.tool_calls.empty() ? &last : nullptr;
}

/// Which run of which thread: the key of run-scoped data that a middleware
/// object keeps for the concurrent runs it serves.
struct run_key {
    std::string thread_id;
    std::string run_id;

    static run_key of(const runtime& rt) { return run_key{rt.thread_id, rt.run_id}; }
    friend auto operator<=>(const run_key&, const run_key&) = default;
    friend bool operator==(const run_key&, const run_key&) = default;
};

} // namespace agentware::detail

#endif
