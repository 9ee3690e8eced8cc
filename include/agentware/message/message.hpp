#ifndef AGENTWARE_MESSAGE_MESSAGE_HPP
#define AGENTWARE_MESSAGE_MESSAGE_HPP
// The message type shared by the agent state, the model clients and the tools.

#include <agentware/detail/config.hpp>
#include <agentware/message/content.hpp>
#include <agentware/message/detail/role_extras.hpp>
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

namespace detail {
/// The characters of a message id (see make_message_id): fifteen, so an id
/// fits a string's inline buffer and is built without a call to memcpy.
struct message_id_chars {
    char chars[15];
};
} // namespace detail

struct message;
namespace detail {
inline void message_members_are_listed(message& m);
} // namespace detail

/// One message of a conversation. A single struct for all roles keeps the
/// state a plain vector; fields a role does not use stay empty.
///
/// What every role or the common ai answer uses is a data member. What only a
/// tool message (the call id) or an unusual ai answer (reasoning, unusable
/// calls) holds is kept out of line behind accessors, so an ai message with a
/// tool call parsed from a provider is half the size it was with every field
/// inline, and a tool message no larger.
struct message {
    role type = role::human;
    tool_status status = tool_status::ok; ///< tool only (beside type: they share one word)
    std::string id;                       ///< set by add_messages when empty
    std::string name;                     ///< participant name; the tool's name on tool messages
    std::vector<content_block> content;
    std::vector<tool_call> tool_calls; ///< ai only
    provider_metadata provider;        ///< ai only: finish reason, model, usage as the provider reported them
    boost::json::object metadata;      ///< everything else: provider extras (refusal, ...), middleware stamps

    message() = default;
    AGENTWARE_DECL message(const message&);
    message(message&& o) noexcept : message(std::move(o), nullptr) {}
    /// Moves `o` and names the result `id` (the agent names a message where it
    /// keeps it, so the id is neither assigned nor moved afterwards).
    message(message&& o, const detail::message_id_chars& id) noexcept : message(std::move(o), &id) {}
    AGENTWARE_DECL message& operator=(const message&);
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

    /// True when metadata[key] is the boolean true (hide_from_ui, the reminders' stamps).
    bool metadata_flag(std::string_view key) const noexcept {
        const auto* v = metadata.if_contains(key);
        return v != nullptr && v->is_bool() && v->get_bool();
    }

    /// Tool only: the id of the call this message answers ("" when none).
    std::string_view tool_call_id() const noexcept { return extras_.tool_call_id(); }
    void set_tool_call_id(std::string_view id_of_call) { extras_.set_tool_call_id(id_of_call); }

    /// Ai only: the model's reasoning text (reasoning_content, thinking).
    std::string_view reasoning() const noexcept { return extras_.reasoning(); }
    void set_reasoning(std::string_view text) { extras_.set_reasoning(text); }

    /// Ai only: the calls whose arguments were not a JSON object.
    const std::vector<invalid_tool_call>& invalid_tool_calls() const noexcept {
        return extras_.invalid_tool_calls();
    }
    std::vector<invalid_tool_call>& edit_invalid_tool_calls() { return extras_.edit_invalid_tool_calls(); }

    bool has_images() const noexcept {
        for (const content_block& block : content)
            if (block.is_image()) return true;
        return false;
    }

    /// A copy of every member but the content, which stays empty (for a
    /// middleware that rewrites the content: it need not copy it first).
    message copy_without_content() const { return message(*this, without_content{}); }

    friend bool operator==(const message&, const message&) = default;

private:
    friend void detail::message_members_are_listed(message&);

    detail::role_extras extras_; ///< tool_call_id, reasoning, invalid_tool_calls

    struct without_content {};
    /// Member by member as the copy constructor does, the content left out.
    message(const message& o, without_content)
        : type(o.type), status(o.status), id(o.id), name(o.name), tool_calls(o.tool_calls),
          provider(o.provider), metadata(o.metadata), extras_(o.extras_) {}

    /// Member by member, skipping the copy of empty strings (see detail::take_string).
    /// A new member must be added here and to message(const message&, without_content) too;
    /// detail::message_members_are_listed is the reminder.
    message(message&& o, const detail::message_id_chars* new_id) noexcept
        : type(o.type), status(o.status),
          id(new_id ? std::string(new_id->chars, sizeof new_id->chars) : detail::take_string(o.id)),
          name(detail::take_string(o.name)), content(std::move(o.content)),
          tool_calls(std::move(o.tool_calls)), provider(std::move(o.provider)),
          metadata(std::move(o.metadata)), extras_(std::move(o.extras_)) {}
};

namespace detail {
// The reminder for the two constructors that name every member: a structured
// binding must name exactly as many variables as the class has data members,
// so adding a member to message without adding it here (and to the
// constructor) is a compile error. Unlike comparing sizeof with a mirror
// struct, it cannot pass because the new member fits in padding.
// (A friend, so that the binding may name the private member too.)
[[maybe_unused]] inline void message_members_are_listed(message& m) {
    [[maybe_unused]] auto& [type, status, id, name, content, tool_calls, provider, metadata, extras] = m;
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
    m.set_tool_call_id(tool_call_id);
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

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/message/impl/message.ipp>
#endif

#endif
