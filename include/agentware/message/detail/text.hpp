#ifndef AGENTWARE_MESSAGE_DETAIL_TEXT_HPP
#define AGENTWARE_MESSAGE_DETAIL_TEXT_HPP
// Text helpers the library shares: UTF-8 counting and cutting, short quoted
// renderings for logs and errors, and the trimming, lower-casing and capping
// the middlewares do. Lengths are counted in code points where DeerFlow's
// limits are Python string lengths, and a cut never splits a UTF-8 sequence.

#include <cstddef>
#include <string>
#include <string_view>

namespace agentware::detail {

/// Number of code points (bytes that do not continue a sequence).
inline std::size_t utf8_chars(std::string_view s) noexcept {
    std::size_t n = 0;
    for (char c : s)
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
    return n;
}

/// Byte offset of code point `chars` (s.size() when the text is shorter).
inline std::size_t utf8_offset(std::string_view s, std::size_t chars) noexcept {
    std::size_t seen = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
            if (seen == chars) return i;
            ++seen;
        }
    }
    return s.size();
}

/// The longest prefix of at most max_bytes bytes that does not split a UTF-8
/// sequence, so truncated output stays valid UTF-8.
inline std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) noexcept {
    if (text.size() <= max_bytes) return text;
    std::size_t n = max_bytes;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80)
        --n;
    return text.substr(0, n);
}

/// The longest suffix of at most max_bytes bytes that starts on a code point.
inline std::string_view utf8_suffix(std::string_view text, std::size_t max_bytes) noexcept {
    if (text.size() <= max_bytes) return text;
    std::size_t from = text.size() - max_bytes;
    while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80)
        ++from;
    return text.substr(from);
}

/// `"text"` with quotes, backslashes and control characters escaped (so the
/// result stays on one line), cut after max_bytes and then marked with "...".
inline std::string quoted_excerpt(std::string_view text, std::size_t max_bytes) {
    static constexpr char hex[] = "0123456789abcdef";
    const std::string_view shown = utf8_prefix(text, max_bytes);
    std::string out;
    out.reserve(shown.size() + 5);
    out += '"';
    for (char c : shown) {
        const auto u = static_cast<unsigned char>(c);
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (u < 0x20 || u == 0x7F) {
                out += "\\x";
                out += hex[u >> 4];
                out += hex[u & 0xF];
            } else {
                out += c;
            }
        }
    }
    out += '"';
    if (shown.size() < text.size()) out += "...";
    return out;
}

/// Like utf8_prefix, but appends "..." when something was cut.
inline std::string excerpt(std::string_view text, std::size_t max_bytes) {
    const std::string_view shown = utf8_prefix(text, max_bytes);
    std::string out(shown);
    if (shown.size() < text.size()) out += "...";
    return out;
}

/// Whitespace as Python's str.strip() sees it in ASCII.
inline bool is_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

inline std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && is_space(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && is_space(s.back()))
        s.remove_suffix(1);
    return s;
}

constexpr char ascii_lower(char c) noexcept {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

inline std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = ascii_lower(c);
    return out;
}

/// The first `n` code points of `s`.
inline std::string_view first_code_points(std::string_view s, std::size_t n) noexcept {
    return s.substr(0, utf8_offset(s, n));
}

/// `limit - 3` followed by "..." (DeerFlow's `detail[:497] + "..."` for 500).
inline std::string cap_with_ellipsis(std::string_view s, std::size_t limit) {
    if (utf8_chars(s) <= limit) return std::string(s);
    std::string out(first_code_points(s, limit >= 3 ? limit - 3 : 0));
    out += "...";
    return out;
}

/// `s` cut to at most `limit` code points, without a marker.
inline std::string cap(std::string_view s, std::size_t limit) {
    return std::string(first_code_points(s, limit));
}

/// Whether `word` occurs in `text` with no letter or digit right before or after it.
inline bool contains_word(std::string_view text, std::string_view word) noexcept {
    auto alnum = [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    };
    for (std::size_t pos = text.find(word); pos != std::string_view::npos; pos = text.find(word, pos + 1)) {
        bool left = pos == 0 || !alnum(text[pos - 1]);
        std::size_t end = pos + word.size();
        bool right = end == text.size() || !alnum(text[end]);
        if (left && right) return true;
    }
    return false;
}

} // namespace agentware::detail

#endif
