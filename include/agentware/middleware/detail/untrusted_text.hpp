#ifndef AGENTWARE_MIDDLEWARE_DETAIL_UNTRUSTED_TEXT_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_UNTRUSTED_TEXT_HPP

// Text that came from outside (the user's message, a web page, a file name
// placed in the uploads block) must not be able to open or close the prompt's
// own tags, or forge the user-input boundary. DeerFlow's
// neutralize_untrusted_tags: the blocked tag names are escaped as
// &lt;...&gt;, the boundary tokens are replaced by bracketed look-alikes.
//
// DeerFlow does this with one case-insensitive regex alternation and two
// string replacements (three passes). This is one pass: a 16-byte-wide scan
// (SSE2 where the target has it, a byte loop elsewhere) finds the next '<' or
// "---", everything between is copied in bulk, and only there is a tag name
// (one word, looked up among the names of its length) or a boundary token
// looked for. Text that needs no change is not copied at all
// (`neutralized_if_needed` returns nullopt).
//
// What counts as a blocked tag is DeerFlow's pattern `<\s*/?\s*(names)\b[^>]*>?`
// (case-insensitive): '<', blanks, an optional '/', blanks, one of the names
// not followed by a word character, then everything up to and including the
// next '>' (or to the end of the text when there is none). Every '<' and '>'
// in that span is escaped. Bytes of 0x80 and above count as word characters
// (Python's `\b` treats non-ASCII letters as such).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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
// Python's `\s` on ASCII: the usual blanks and the separators 0x1c-0x1f.
constexpr bool is_blank(char c) noexcept {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}
constexpr bool is_ascii_word(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The code point of the UTF-8 sequence at text[i] and its length; length 0
// when the bytes are not valid UTF-8 (or the sequence is longer than 3 bytes:
// nothing above U+FFFF matters here).
inline std::pair<char32_t, std::size_t> decode_utf8(std::string_view text, std::size_t i) noexcept {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
    const std::size_t left = text.size() - i;
    if (left >= 2 && (b(0) & 0xE0) == 0xC0 && (b(1) & 0xC0) == 0x80)
        return {static_cast<char32_t>(((b(0) & 0x1F) << 6) | (b(1) & 0x3F)), 2};
    if (left >= 3 && (b(0) & 0xF0) == 0xE0 && (b(1) & 0xC0) == 0x80 && (b(2) & 0xC0) == 0x80)
        return {static_cast<char32_t>(((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F)), 3};
    return {0, 0};
}

// Python's `\s` beyond ASCII (str.isspace()).
constexpr bool is_unicode_space(char32_t c) noexcept {
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
           c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/// The length of the blank (Python's `\s`) at text[i], or 0.
inline std::size_t blank_at(std::string_view text, std::size_t i) noexcept {
    if (is_blank(text[i])) return 1;
    if (static_cast<unsigned char>(text[i]) < 0x80) return 0;
    const auto [c, len] = decode_utf8(text, i);
    return len != 0 && is_unicode_space(c) ? len : 0;
}

/// Whether the character at text[i] is a word character for Python's `\b`.
/// Beyond ASCII, letters and digits are; the Latin-1 signs, the general
/// punctuation block (spaces, dashes, quotes, ellipsis), the CJK marks and
/// fullwidth punctuation are not. Other non-ASCII characters count as
/// letters, and so do bytes that are not UTF-8.
inline bool word_at(std::string_view text, std::size_t i) noexcept {
    const char ch = text[i];
    if (static_cast<unsigned char>(ch) < 0x80) return is_ascii_word(ch);
    const auto [c, len] = decode_utf8(text, i);
    if (len == 0) return true;
    if (c >= 0x80 && c <= 0xBF)
        return c == 0xAA || c == 0xB2 || c == 0xB3 || c == 0xB5 || c == 0xB9 || c == 0xBA || c >= 0xBC;
    return !(c == 0xD7 || c == 0xF7 || (c >= 0x2000 && c <= 0x206F) || (c >= 0x3000 && c <= 0x3004) ||
             (c >= 0x3008 && c <= 0x3011) || (c >= 0xFF01 && c <= 0xFF0F) || c == 0xFEFF);
}

// Which names a tag can open with. A name made of word characters matches
// when the run of word characters after '<' (and blanks and '/') is exactly
// that name (DeerFlow's `\b` after it). Of the two names with a '-',
// "system-reminder" is already matched by "system" (the '-' ends its word),
// and the span is the same whichever name matched (it always runs to the
// next '>'); only "available-deferred-tools" needs a look past its first word.
inline constexpr std::size_t longest_word_name = 22; // slash_skill_activation

// The names of the index, zero-padded to 24 bytes: a fixed-size comparison
// compiles to three 8-byte compares.
struct padded_name {
    char c[24];
};

struct name_index {
    // For each length, the names of that length (no '-'), packed in `names`.
    std::array<padded_name, blocked_tag_names.size()> names{};
    std::array<std::uint8_t, longest_word_name + 2> first{}; // names[first[n], first[n + 1]) have length n
};

inline constexpr name_index word_names = [] {
    name_index idx;
    std::size_t k = 0;
    for (std::size_t len = 0; len <= longest_word_name; ++len) {
        idx.first[len] = static_cast<std::uint8_t>(k);
        for (std::string_view n : blocked_tag_names)
            if (n.size() == len && n.find('-') == std::string_view::npos) {
                for (std::size_t j = 0; j < n.size(); ++j)
                    idx.names[k].c[j] = n[j];
                ++k;
            }
    }
    idx.first[longest_word_name + 1] = static_cast<std::uint8_t>(k);
    return idx;
}();

// Whether the lower-cased, zero-padded word `w` of length `len` is a blocked name.
inline bool is_word_name(const char (&w)[24], std::size_t len) noexcept {
    if (len == 0 || len > longest_word_name) return false;
    for (std::size_t k = word_names.first[len]; k < word_names.first[len + 1]; ++k)
        if (__builtin_memcmp(word_names.names[k].c, w, sizeof w) == 0) return true;
    return false;
}

/// Whether a blocked tag starts at text[lt] == '<'.
inline bool blocked_tag_at(std::string_view text, std::size_t lt) noexcept {
    const std::size_t n = text.size();
    std::size_t i = lt + 1;
    for (std::size_t b; i < n && (b = blank_at(text, i)) != 0;)
        i += b;
    if (i < n && text[i] == '/') ++i;
    for (std::size_t b; i < n && (b = blank_at(text, i)) != 0;)
        i += b;
    // The ASCII word after it, lower-cased (one longer than any name is enough to refuse it).
    char word[24] = {};
    std::size_t len = 0;
    while (i + len < n && len <= longest_word_name && is_ascii_word(text[i + len])) {
        word[len] = ascii_lower(text[i + len]);
        ++len;
    }
    const std::size_t after = i + len;
    if (after < n && word_at(text, after)) return false; // the word goes on
    if (is_word_name(word, len)) return true;
    static constexpr std::string_view available = "available";
    static constexpr std::string_view rest = "-deferred-tools";
    if (len != available.size() || std::memcmp(word, available.data(), len) != 0) return false;
    std::size_t j = after;
    if (n - j < rest.size()) return false;
    for (std::size_t k = 0; k < rest.size(); ++k)
        if (ascii_lower(text[j + k]) != rest[k]) return false;
    j += rest.size();
    return j == n || !word_at(text, j);
}

/// The output, written through a raw pointer (appends of a few bytes are the
/// hot path on hostile text); made on the first change.
class output {
public:
    bool empty() const noexcept { return !started_; }
    void put(const char* p, std::size_t len) {
        room(len);
        std::memcpy(w_, p, len);
        w_ += len;
    }
    void put(std::string_view s) { put(s.data(), s.size()); }
    void put4(const char (&s)[5]) {
        room(4);
        std::memcpy(w_, s, 4);
        w_ += 4;
    }
    std::string finish() && {
        s_.resize(static_cast<std::size_t>(w_ - s_.data()));
        return std::move(s_);
    }
    void start(std::size_t expected) {
        started_ = true;
        s_.resize(expected);
        w_ = s_.data();
        end_ = w_ + s_.size();
    }

private:
    void room(std::size_t len) {
        if (static_cast<std::size_t>(end_ - w_) < len) grow(len);
    }
    [[gnu::noinline]] void grow(std::size_t len) {
        const auto used = static_cast<std::size_t>(w_ - s_.data());
        s_.resize(std::max(s_.size() * 2, used + len + 64));
        w_ = s_.data() + used;
        end_ = s_.data() + s_.size();
    }
    std::string s_;
    char* w_ = nullptr;
    char* end_ = nullptr;
    bool started_ = false;
};

// One pass over the text. `next_candidate` finds the next '<' or "---" (the
// start of any boundary token); everything between is copied in bulk.
class neutralizer {
public:
    explicit neutralizer(std::string_view text) : t_(text) {}

    std::optional<std::string> run() {
        std::size_t i = next_candidate(0);
        while (i < t_.size())
            i = next_candidate(t_[i] == '<' ? on_lt(i) : on_dashes(i));
        if (out_.empty()) return std::nullopt;
        flush(t_.size());
        return std::move(out_).finish();
    }

private:
    // The first position at or after `from` holding '<' or starting "---".
    std::size_t next_candidate(std::size_t from) const noexcept {
        const char* const base = t_.data();
        const std::size_t n = t_.size();
        std::size_t p = from;
#if defined(__SSE2__)
        const __m128i lt = _mm_set1_epi8('<');
        const __m128i dash = _mm_set1_epi8('-');
        for (; p + 18 <= n; p += 16) {
            const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + p));
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + p + 1));
            const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + p + 2));
            const __m128i hit =
                _mm_or_si128(_mm_cmpeq_epi8(a, lt),
                             _mm_and_si128(_mm_cmpeq_epi8(a, dash),
                                           _mm_and_si128(_mm_cmpeq_epi8(b, dash), _mm_cmpeq_epi8(c, dash))));
            if (const int mask = _mm_movemask_epi8(hit))
                return p + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
        }
#endif
        for (; p < n; ++p)
            if (base[p] == '<' || (base[p] == '-' && p + 2 < n && base[p + 1] == '-' && base[p + 2] == '-'))
                return p;
        return n;
    }

    // Copies text[copied_, pos) to the output (starting it if need be).
    void flush(std::size_t pos) {
        if (out_.empty()) out_.start(t_.size() + t_.size() / 4 + 64); // room for dense escapes: no regrowth
        out_.put(t_.data() + copied_, pos - copied_);
        copied_ = pos;
    }

    // A boundary token at text[i]: its length and replacement, or length 0.
    std::pair<std::size_t, std::string_view> token_at(std::size_t i) const noexcept {
        const std::string_view rest = t_.substr(i);
        // Both start "--- B" or "--- E": most dashes are refused there.
        if (rest.size() < user_input_end.size() || rest[3] != ' ' || (rest[4] != 'B' && rest[4] != 'E'))
            return {0, {}};
        if (rest.starts_with(user_input_begin)) return {user_input_begin.size(), user_input_begin_defused};
        if (rest.starts_with(user_input_end)) {
            // DeerFlow replaces every BEGIN token before any END one: an END
            // whose closing dashes open a BEGIN token gives them to it.
            for (std::size_t at = user_input_end.size() - 3; at < user_input_end.size(); ++at)
                if (rest.substr(at).starts_with(user_input_begin)) return {0, {}};
            return {user_input_end.size(), user_input_end_defused};
        }
        return {0, {}};
    }

    // "---" at i: a boundary token is defused. Returns where to go on.
    std::size_t on_dashes(std::size_t i) {
        const auto [len, replacement] = token_at(i);
        if (len == 0) return i + 1;
        flush(i);
        out_.put(replacement);
        copied_ = i + len;
        return copied_;
    }

    // '<' at i: a blocked tag is escaped up to its '>' (or the end of the
    // text), with every '<' and boundary token inside it. Returns where to go on.
    std::size_t on_lt(std::size_t i) {
        if (!blocked_tag_at(t_, i)) return i + 1;
        const void* gt = std::memchr(t_.data() + i, '>', t_.size() - i);
        const std::size_t end =
            gt ? static_cast<std::size_t>(static_cast<const char*>(gt) - t_.data()) : t_.size();
        flush(i);
        out_.put4("&lt;");
        copied_ = i + 1;
        for (std::size_t k = next_candidate(copied_); k < end; k = next_candidate(k)) {
            if (t_[k] == '<') {
                flush(k);
                out_.put4("&lt;");
                copied_ = ++k;
            } else {
                k = on_dashes(k); // a token holds no '>': it ends inside the span
            }
        }
        flush(end);
        if (end == t_.size()) return end;
        out_.put4("&gt;");
        copied_ = end + 1;
        return copied_;
    }

    std::string_view t_;
    std::size_t copied_ = 0; // text[0, copied_) is in the output (once it exists)
    output out_;
};

} // namespace untrusted_detail

/// The text with blocked tags escaped and user-input boundary tokens defused,
/// or nullopt when nothing in it needs either (the common case: no copy).
inline std::optional<std::string> neutralized_if_needed(std::string_view text) {
    return untrusted_detail::neutralizer(text).run();
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
