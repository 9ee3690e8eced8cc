#ifndef AGENTWARE_MESSAGE_MESSAGE_HPP
#define AGENTWARE_MESSAGE_MESSAGE_HPP
// The message type shared by the agent state, the model clients and the tools.

#include <agentware/message/content.hpp>
#include <agentware/message/provider_metadata.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// Who produced a message. `remove` is not a message but a marker for
/// add_messages asking to delete the message with the same id (LangGraph's
/// RemoveMessage).
enum class role { system, human, ai, tool, remove };

/// Outcome of the tool call a tool message answers.
enum class tool_status { ok, error };

/// The id of the marker made by remove_all_messages().
inline constexpr std::string_view remove_all_id = "__remove_all__";

/// A tool call requested by the model, with arguments parsed into an object.
struct tool_call {
    std::string id;
    std::string name;
    boost::json::object args;

    friend bool operator==(const tool_call&, const tool_call&) = default;
};

/// A tool call the model sent with arguments that are not a JSON object. Kept
/// (not dropped, not thrown) so the model can be told what went wrong.
struct invalid_tool_call {
    std::string id;
    std::string name;
    std::string raw_args;
    std::string error;

    friend bool operator==(const invalid_tool_call&, const invalid_tool_call&) = default;
};

namespace detail {
/// The characters of a message id (see make_message_id): fifteen, so an id
/// fits a string's inline buffer and is built without a call to memcpy.
struct message_id_chars {
    char chars[15];
};
} // namespace detail

/// One message of a conversation. A single struct for all roles keeps the
/// state a plain vector; fields a role does not use stay empty.
struct message {
    role type = role::human;
    tool_status status = tool_status::ok; ///< tool only (beside type: they share one word)
    std::string id;                       ///< set by add_messages when empty
    std::string name;                     ///< participant name; the tool's name on tool messages
    std::vector<content_block> content;
    std::string reasoning;                             ///< model's reasoning text (reasoning_content)
    std::vector<tool_call> tool_calls;                 ///< ai only
    std::vector<invalid_tool_call> invalid_tool_calls; ///< ai only
    std::string tool_call_id;                          ///< tool only: the call this answers
    provider_metadata provider;   ///< ai only: finish reason, model, usage as the provider reported them
    boost::json::object metadata; ///< everything else: provider extras (refusal, ...), middleware stamps

    message() = default;
    message(const message&) = default;
    message(message&& o) noexcept : message(std::move(o), nullptr) {}
    /// Moves `o` and names the result `id` (the agent names a message where it
    /// keeps it, so the id is neither assigned nor moved afterwards).
    message(message&& o, const detail::message_id_chars& id) noexcept : message(std::move(o), &id) {}
    message& operator=(const message&) = default;
    message& operator=(message&&) = default;

    /// The text blocks concatenated (images are skipped).
    std::string text() const {
        std::string out;
        for (const content_block& block : content)
            if (block.is_text()) out += block.text;
        return out;
    }

    bool is_system() const noexcept { return type == role::system; }
    bool is_human() const noexcept { return type == role::human; }
    bool is_ai() const noexcept { return type == role::ai; }
    bool is_tool() const noexcept { return type == role::tool; }
    bool is_remove() const noexcept { return type == role::remove; }
    bool is_remove_all() const noexcept { return type == role::remove && id == remove_all_id; }
    bool is_error() const noexcept { return status == tool_status::error; }

    bool has_tool_calls() const noexcept { return !tool_calls.empty(); }

    bool has_images() const noexcept {
        for (const content_block& block : content)
            if (block.is_image()) return true;
        return false;
    }

    friend bool operator==(const message&, const message&) = default;

private:
    /// Member by member, skipping the copy of empty strings (see detail::take_string).
    /// A new member must be added here too; detail::message_members_are_listed is the reminder.
    message(message&& o, const detail::message_id_chars* new_id) noexcept
        : type(o.type), status(o.status),
          id(new_id ? std::string(new_id->chars, sizeof new_id->chars) : detail::take_string(o.id)),
          name(detail::take_string(o.name)), content(std::move(o.content)),
          reasoning(detail::take_string(o.reasoning)), tool_calls(std::move(o.tool_calls)),
          invalid_tool_calls(std::move(o.invalid_tool_calls)),
          tool_call_id(detail::take_string(o.tool_call_id)), provider(std::move(o.provider)),
          metadata(std::move(o.metadata)) {}
};

namespace detail {
// The reminder for message(message&&), which names every member: a structured
// binding must name exactly as many variables as the class has data members,
// so adding a member to message without adding it here (and to the
// constructor) is a compile error. Unlike comparing sizeof with a mirror
// struct, it cannot pass because the new member fits in padding.
[[maybe_unused]] inline void message_members_are_listed(message& m) {
    [[maybe_unused]] auto& [type, status, id, name, content, reasoning, tool_calls, invalid_tool_calls,
                            tool_call_id, provider, metadata] = m;
}
} // namespace detail

namespace detail {

/// Empty text means no content at all, so that factories given "" do not
/// create an empty block (which would not survive the JSON string form).
inline std::vector<content_block> text_content(std::string text) {
    std::vector<content_block> blocks;
    if (!text.empty()) blocks.push_back(text_block(std::move(text)));
    return blocks;
}

} // namespace detail

inline message system_message(std::string text) {
    message m;
    m.type = role::system;
    m.content = detail::text_content(std::move(text));
    return m;
}

inline message human_message(std::string text) {
    message m;
    m.type = role::human;
    m.content = detail::text_content(std::move(text));
    return m;
}

inline message human_message(std::vector<content_block> content) {
    message m;
    m.type = role::human;
    m.content = std::move(content);
    return m;
}

inline message ai_message(std::string text, std::vector<tool_call> calls = {}) {
    message m;
    m.type = role::ai;
    m.content = detail::text_content(std::move(text));
    m.tool_calls = std::move(calls);
    return m;
}

/// The result of tool call `tool_call_id` of tool `name`.
inline message tool_message(std::string tool_call_id, std::string name, std::string content_text,
                            tool_status status = tool_status::ok) {
    message m;
    m.type = role::tool;
    m.tool_call_id = std::move(tool_call_id);
    m.name = std::move(name);
    m.content = detail::text_content(std::move(content_text));
    m.status = status;
    return m;
}

/// Marker for add_messages: delete the message with this id.
inline message remove_message(std::string id) {
    message m;
    m.type = role::remove;
    m.id = std::move(id);
    return m;
}

/// Marker for add_messages: delete every message before it.
inline message remove_all_messages() { return remove_message(std::string(remove_all_id)); }

} // namespace agentware

#endif
