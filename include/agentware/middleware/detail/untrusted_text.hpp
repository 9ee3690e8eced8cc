#ifndef AGENTWARE_MIDDLEWARE_DETAIL_UNTRUSTED_TEXT_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_UNTRUSTED_TEXT_HPP

// Text that came from outside (the user's message, a web page, a file name
// placed in the uploads block) must not be able to open or close the prompt's
// own tags, or forge the user-input boundary. DeerFlow's
// neutralize_untrusted_tags: the blocked tag names are escaped as
// &lt;...&gt;, the boundary tokens are replaced by bracketed look-alikes.
//
// DeerFlow does this with one case-insensitive regex alternation and two
// string replacements (three passes). This is one pass: memchr finds the next
// '<' or '-', everything between is copied in bulk, and only there is a tag
// name or a boundary token looked for. Text that needs no change is not
// copied at all (`neutralized_if_needed` returns nullopt).
//
// What counts as a blocked tag is DeerFlow's pattern `<\s*/?\s*(names)\b[^>]*>?`
// (case-insensitive): '<', blanks, an optional '/', blanks, one of the names
// not followed by a word character, then everything up to and including the
// next '>' (or to the end of the text when there is none). Every '<' and '>'
// in that span is escaped. Bytes of 0x80 and above count as word characters
// (Python's `\b` treats non-ASCII letters as such).

#include <array>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace agentware::detail {

// Text kept for parity with DeerFlow (reference §5.16a): the blocked names and the boundary tokens.
inline constexpr std::array<std::string_view, 40> blocked_tag_names{"system-reminder",
                                                                    "system_reminder",
                                                                    "memory",
                                                                    "current_date",
                                                                    "think",
                                                                    "analysis",
                                                                    "role",
                                                                    "soul",
                                                                    "self_update",
                                                                    "thinking_style",
                                                                    "clarification_system",
                                                                    "critical_reminders",
                                                                    "response_style",
                                                                    "citations",
                                                                    "uploaded_files",
                                                                    "current_uploads",
                                                                    "subagent_system",
                                                                    "skill_system",
                                                                    "skill_index",
                                                                    "available_skills",
                                                                    "disabled_skills",
                                                                    "memory_tool_system",
                                                                    "todo_list_system",
                                                                    "durable_context_data",
                                                                    "slash_skill_activation",
                                                                    "mcp_routing_hints",
                                                                    "available-deferred-tools",
                                                                    "goal_continuation",
                                                                    "background_task_event",
                                                                    "file_editing_workflow",
                                                                    "guidelines",
                                                                    "output_format",
                                                                    "working_directory",
                                                                    "tool_restrictions",
                                                                    "system",
                                                                    "instruction",
                                                                    "important",
                                                                    "override",
                                                                    "ignore",
                                                                    "prompt"};
inline constexpr std::string_view user_input_begin = "--- BEGIN USER INPUT ---";
inline constexpr std::string_view user_input_end = "--- END USER INPUT ---";
inline constexpr std::string_view user_input_begin_defused = "[BEGIN USER INPUT]";
inline constexpr std::string_view user_input_end_defused = "[END USER INPUT]";

namespace untrusted_detail {

constexpr char ascii_lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }
constexpr bool is_blank(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
constexpr bool is_word(char c) noexcept {
    const auto u = static_cast<unsigned char>(c);
    return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u == '_' ||
           u >= 0x80;
}

// Whether text[i..] begins with `name` (case-insensitively) followed by a word boundary.
inline bool name_at(std::string_view text, std::size_t i, std::string_view name) noexcept {
    if (text.size() - i < name.size()) return false;
    for (std::size_t k = 0; k < name.size(); ++k)
        if (ascii_lower(text[i + k]) != name[k]) return false;
    const std::size_t after = i + name.size();
    return after == text.size() || !is_word(text[after]);
}

// Characters that may follow '<' in a blocked tag: blanks, '/', and the
// first letters of the names (either case).
inline bool may_open_tag(char c) noexcept {
    static constexpr auto table = [] {
        std::array<bool, 256> t{};
        for (unsigned char k : std::string_view(" \t\n\r\f\v/"))
            t[k] = true;
        for (std::string_view name : blocked_tag_names) {
            t[static_cast<unsigned char>(name[0])] = true;
            t[static_cast<unsigned char>(name[0] - 32)] = true;
        }
        return t;
    }();
    return table[static_cast<unsigned char>(c)];
}

/// The end (one past) of the blocked tag starting at text[lt] == '<', or 0 when none starts there.
inline std::size_t blocked_tag_end(std::string_view text, std::size_t lt) noexcept {
    if (lt + 1 >= text.size() || !may_open_tag(text[lt + 1])) return 0;
    std::size_t i = lt + 1;
    while (i < text.size() && is_blank(text[i]))
        ++i;
    if (i < text.size() && text[i] == '/') ++i;
    while (i < text.size() && is_blank(text[i]))
        ++i;
    if (i >= text.size()) return 0;
    const char first = ascii_lower(text[i]);
    bool hit = false;
    for (std::string_view name : blocked_tag_names)
        if (name[0] == first && name_at(text, i, name)) {
            hit = true;
            break;
        }
    if (!hit) return 0;
    const void* gt = std::memchr(text.data() + i, '>', text.size() - i);
    return gt ? static_cast<std::size_t>(static_cast<const char*>(gt) - text.data()) + 1 : text.size();
}

// The position of the next '<' or '-' at or after `from`, or text.size().
struct special_finder {
    std::string_view text;
    std::size_t next_lt = 0, next_dash = 0; // cached positions (valid when >= from)
    bool lt_valid = false, dash_valid = false;

    static std::size_t find(std::string_view t, std::size_t from, char c) noexcept {
        if (from >= t.size()) return t.size();
        const void* p = std::memchr(t.data() + from, c, t.size() - from);
        return p ? static_cast<std::size_t>(static_cast<const char*>(p) - t.data()) : t.size();
    }
    // The start of the next boundary token at or after `from`: both end in
    // " USER INPUT ---", which memmem finds without stopping at every '-'.
    static std::size_t find_token(std::string_view t, std::size_t from) noexcept {
        static constexpr std::string_view tail = " USER INPUT ---";
        std::size_t pos = from;
        while (pos < t.size()) {
            const void* p = ::memmem(t.data() + pos, t.size() - pos, tail.data(), tail.size());
            if (!p) return t.size();
            const auto hit = static_cast<std::size_t>(static_cast<const char*>(p) - t.data());
            // "--- BEGIN" is 9 characters before the tail, "--- END" 7.
            if (hit >= from + 9 && t.substr(hit - 9, 9) == "--- BEGIN") return hit - 9;
            if (hit >= from + 7 && t.substr(hit - 7, 7) == "--- END") return hit - 7;
            pos = hit + 1;
        }
        return t.size();
    }
    std::size_t operator()(std::size_t from) noexcept {
        if (!lt_valid || next_lt < from) next_lt = find(text, from, '<'), lt_valid = true;
        if (!dash_valid || next_dash < from) next_dash = find_token(text, from), dash_valid = true;
        return next_lt < next_dash ? next_lt : next_dash;
    }
};

} // namespace untrusted_detail

/// The text with blocked tags escaped and user-input boundary tokens defused,
/// or nullopt when nothing in it needs either (the common case: no copy).
inline std::optional<std::string> neutralized_if_needed(std::string_view text) {
    using namespace untrusted_detail;
    std::optional<std::string> out;
    std::size_t copied = 0; // text[0, copied) is in `out` (once out exists)
    auto flush_to = [&](std::size_t pos) {
        if (!out) {
            out.emplace();
            out->reserve(text.size() + 64);
        }
        out->append(text.data() + copied, pos - copied);
        copied = pos;
    };
    // A boundary token at text[i] ('-'): its replacement, or empty.
    auto token_at = [&](std::size_t i) -> std::pair<std::size_t, std::string_view> {
        const std::string_view rest = text.substr(i);
        if (rest.starts_with(user_input_begin)) return {user_input_begin.size(), user_input_begin_defused};
        if (rest.starts_with(user_input_end)) return {user_input_end.size(), user_input_end_defused};
        return {0, {}};
    };

    special_finder next{text};
    std::size_t i = next(0);
    while (i < text.size()) {
        if (text[i] == '-') {
            if (text.size() - i < user_input_end.size() || text[i + 1] != '-' || text[i + 2] != '-' ||
                text[i + 3] != ' ') {
                i = next(i + 1);
                continue;
            }
            if (auto [len, repl] = token_at(i); len != 0) {
                flush_to(i);
                out->append(repl);
                copied = i + len;
                i = next(copied);
            } else {
                i = next(i + 1);
            }
            continue;
        }
        // '<'
        const std::size_t end = blocked_tag_end(text, i);
        if (end == 0) {
            i = next(i + 1);
            continue;
        }
        flush_to(i);
        // Escape the span; boundary tokens inside it are defused too.
        std::size_t k = i;
        while (k < end) {
            const char c = text[k];
            if (c == '<') {
                out->append("&lt;");
                ++k;
            } else if (c == '>') {
                out->append("&gt;");
                ++k;
            } else if (c == '-') {
                auto [len, repl] = token_at(k);
                if (len != 0 && k + len <= end) {
                    out->append(repl);
                    k += len;
                } else {
                    out->push_back(c);
                    ++k;
                }
            } else {
                out->push_back(c);
                ++k;
            }
        }
        copied = end;
        i = next(end);
    }
    if (out) out->append(text.data() + copied, text.size() - copied);
    return out;
}

/// The text with blocked tags escaped and user-input boundary tokens defused.
inline std::string neutralize_untrusted_tags(std::string_view text) {
    if (auto changed = neutralized_if_needed(text)) return std::move(*changed);
    return std::string(text);
}

/// Replaces `s` by its neutralised form; true when it changed.
inline bool neutralize_in_place(std::string& s) {
    if (auto changed = neutralized_if_needed(s)) {
        s = std::move(*changed);
        return true;
    }
    return false;
}

} // namespace agentware::detail

#endif
