#ifndef AGENTWARE_MESSAGE_DETAIL_TEXT_HPP
#define AGENTWARE_MESSAGE_DETAIL_TEXT_HPP
// Short, quoted, single-line renderings of arbitrary text for logs and errors.

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

} // namespace agentware::detail

#endif
