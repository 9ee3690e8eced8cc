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
// (one word, looked up by a perfect hash of its length and end characters) or a boundary token
// looked for. Text that needs no change is not copied at all
// (`neutralized_if_needed` returns nullopt).
//
// What counts as a blocked tag is DeerFlow's pattern `<\s*/?\s*(names)\b[^>]*>?`
// (case-insensitive): '<', blanks, an optional '/', blanks, one of the names
// not followed by a word character, then everything up to and including the
// next '>' (or to the end of the text when there is none). Every '<' and '>'
// in that span is escaped. Bytes of 0x80 and above count as word characters
// (Python's `\b` treats non-ASCII letters as such).

#include <agentware/message/detail/text.hpp>

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

// The names, zero-padded to 24 bytes: a fixed-size comparison compiles to
// three 8-byte compares.
struct padded_name {
    char c[24];
};

// A word is looked up by a perfect hash of its length and its first and last
// characters (checked at compile time to be collision-free over the names):
// one table read and one 24-byte compare, whatever the word.
constexpr std::size_t name_hash(char first, char last, std::size_t len) noexcept {
    return (static_cast<unsigned char>(first) * 4u + static_cast<unsigned char>(last) * 20u + len) & 255u;
}

inline constexpr std::string_view available_word = "available"; // of "available-deferred-tools"

struct name_table {
    std::array<padded_name, blocked_tag_names.size() + 1> names{}; // [0] unused
    std::array<std::uint8_t, 256> slot{};                          // hash -> index into names, 0: none
    std::uint8_t available = 0;                                    // the index of "available"
    bool collision = false;
};

inline constexpr name_table word_names = [] {
    name_table t;
    std::size_t k = 0;
    auto add = [&](std::string_view n) {
        ++k;
        for (std::size_t j = 0; j < n.size(); ++j)
            t.names[k].c[j] = n[j];
        auto& s = t.slot[name_hash(n.front(), n.back(), n.size())];
        if (s != 0) t.collision = true;
        s = static_cast<std::uint8_t>(k);
    };
    for (std::string_view n : blocked_tag_names)
        if (n.find('-') == std::string_view::npos) add(n);
    add(available_word);
    t.available = static_cast<std::uint8_t>(k);
    return t;
}();
static_assert(!word_names.collision, "untrusted_text: the name hash must be collision-free");

// ASCII word characters lower-cased; 0 for every other byte.
inline constexpr std::array<char, 256> word_fold = [] {
    std::array<char, 256> t{};
    for (int c = 0; c < 128; ++c)
        if (is_ascii_word(static_cast<char>(c)))
            t[static_cast<std::size_t>(c)] = ascii_lower(static_cast<char>(c));
    return t;
}();

/// The first position at or after `i` that is not a blank (Python's `\s`).
inline std::size_t skip_blanks(std::string_view text, std::size_t i) noexcept {
    while (i < text.size()) {
        if (static_cast<unsigned char>(text[i]) < 0x80) {
            if (!is_blank(text[i])) return i;
            ++i;
        } else {
            const std::size_t b = blank_at(text, i);
            if (b == 0) return i;
            i += b;
        }
    }
    return i;
}

/// Whether a blocked tag starts at text[lt] == '<'.
inline bool blocked_tag_at(std::string_view text, std::size_t lt) noexcept {
    const char* const p = text.data();
    const std::size_t n = text.size();
    std::size_t i = skip_blanks(text, lt + 1);
    if (i < n && p[i] == '/') i = skip_blanks(text, i + 1);
    // The ASCII word after it, lower-cased (one longer than any name is enough to refuse it).
    padded_name word{};
    std::size_t len = 0;
    for (char f;
         i + len < n && len <= longest_word_name && (f = word_fold[static_cast<unsigned char>(p[i + len])]);)
        word.c[len++] = f;
    if (len == 0 || len > longest_word_name) return false;
    const std::size_t after = i + len;
    // An ASCII byte after it is no word character (the loop stopped there); beyond ASCII, look.
    if (after < n && static_cast<unsigned char>(p[after]) >= 0x80 && word_at(text, after)) return false;
    const std::uint8_t k = word_names.slot[name_hash(word.c[0], word.c[len - 1], len)];
    if (k == 0 || __builtin_memcmp(word_names.names[k].c, word.c, sizeof word.c) != 0) return false;
    if (k != word_names.available) return true;
    static constexpr std::string_view rest = "-deferred-tools";
    std::size_t j = after;
    if (n - j < rest.size()) return false;
    for (std::size_t r = 0; r < rest.size(); ++r)
        if (ascii_lower(p[j + r]) != rest[r]) return false;
    j += rest.size();
    return j == n || !word_at(text, j);
}

/// Copies `len` bytes without a library call for the short copies between
/// two stops (overlapping fixed-size moves, reading and writing only the range).
inline void copy_bytes(char* d, const char* s, std::size_t len) noexcept {
    if (len >= 16) {
        if (len > 32) {
            std::memcpy(d, s, len);
            return;
        }
        char a[16], b[16];
        std::memcpy(a, s, 16);
        std::memcpy(b, s + len - 16, 16);
        std::memcpy(d, a, 16);
        std::memcpy(d + len - 16, b, 16);
    } else if (len >= 8) {
        std::uint64_t a, b;
        std::memcpy(&a, s, 8);
        std::memcpy(&b, s + len - 8, 8);
        std::memcpy(d, &a, 8);
        std::memcpy(d + len - 8, &b, 8);
    } else if (len >= 4) {
        std::uint32_t a, b;
        std::memcpy(&a, s, 4);
        std::memcpy(&b, s + len - 4, 4);
        std::memcpy(d, &a, 4);
        std::memcpy(d + len - 4, &b, 4);
    } else if (len > 0) {
        d[0] = s[0];
        d[len / 2] = s[len / 2];
        d[len - 1] = s[len - 1];
    }
}

/// The output, written through a raw pointer (appends of a few bytes are the
/// hot path on hostile text); made on the first change.
class output {
public:
    bool empty() const noexcept { return !started_; }
    void put(const char* p, std::size_t len) {
        room(len);
        copy_bytes(w_, p, len);
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
    /// Starts writing after what `base` holds (its bytes are kept).
    void start(std::size_t expected, std::string base = {}) {
        started_ = true;
        s_ = std::move(base);
        const std::size_t used = s_.size();
        s_.resize(used + expected);
        w_ = s_.data() + used;
        end_ = s_.data() + s_.size();
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
        scan();
        if (out_.empty()) return std::nullopt;
        flush(t_.size());
        return std::move(out_).finish();
    }

    /// Appends the neutralised text to `out` (written there directly from the
    /// first change on, no intermediate string); true when it differs from the text.
    bool run_appending(std::string& out) {
        base_ = &out;
        scan();
        if (out_.empty()) {
            out.append(t_); // nothing changed: one bulk copy
            return false;
        }
        flush(t_.size());
        out = std::move(out_).finish();
        return true;
    }

    /// What the output is made to hold: room for dense escapes, so it never regrows.
    std::size_t expected_size() const noexcept { return t_.size() + t_.size() / 4 + 64; }

private:
    void scan() {
        const std::size_t n = t_.size();
        std::size_t i = next_candidate(0, n);
        while (i < n)
            i = next_candidate(t_[i] == '<' ? on_lt(i) : on_dashes(i), n);
    }

    // The first position at or after `from` holding '<' or starting "---";
    // some position at or after `limit` when there is none before it.
    std::size_t next_candidate(std::size_t from, std::size_t limit) const noexcept {
        const char* const base = t_.data();
        const std::size_t n = t_.size();
        std::size_t p = from;
#if defined(__SSE2__)
        const __m128i lt = _mm_set1_epi8('<');
        const __m128i dash = _mm_set1_epi8('-');
        for (; p + 18 <= n && p < limit; p += 16) {
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
        for (; p < n && p < limit; ++p)
            if (base[p] == '<' || (base[p] == '-' && p + 2 < n && base[p + 1] == '-' && base[p + 2] == '-'))
                return p;
        return std::max(p, limit);
    }

    // The first '>' at or after `from`, or the end of the text.
    std::size_t find_gt(std::size_t from) const noexcept {
        const char* const base = t_.data();
        const std::size_t n = t_.size();
        std::size_t p = from;
#if defined(__SSE2__)
        // Tags are short: a few 16-byte steps before handing over to memchr.
        const __m128i gt = _mm_set1_epi8('>');
        for (int step = 0; step < 4 && p + 16 <= n; ++step, p += 16) {
            const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + p));
            if (const int mask = _mm_movemask_epi8(_mm_cmpeq_epi8(a, gt)))
                return p + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
        }
#endif
        if (p >= n) return n;
        const void* hit = std::memchr(base + p, '>', n - p);
        return hit ? static_cast<std::size_t>(static_cast<const char*>(hit) - base) : n;
    }

    // Copies text[copied_, pos) to the output (starting it if need be).
    void flush(std::size_t pos) {
        if (out_.empty()) start_output();
        out_.put(t_.data() + copied_, pos - copied_);
        copied_ = pos;
    }

    // Once, at the first change (out of line: the hot path stays small).
    [[gnu::noinline]] void start_output() {
        out_.start(expected_size(), base_ ? std::move(*base_) : std::string());
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
        const std::size_t end = find_gt(i + 1);
        flush(i);
        out_.put4("&lt;");
        copied_ = i + 1;
        for (std::size_t k = next_candidate(copied_, end); k < end; k = next_candidate(k, end)) {
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
    std::size_t copied_ = 0;      // text[0, copied_) is in the output (once it exists)
    std::string* base_ = nullptr; // the output starts with what it holds (run_appending)
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

/// Appends the neutralised text to `out` in one pass (no copy in between);
/// true when it differs from `text`.
inline bool append_neutralized(std::string& out, std::string_view text) {
    return untrusted_detail::neutralizer(text).run_appending(out);
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
