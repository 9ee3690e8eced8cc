#ifndef AGENTWARE_DETAIL_UTF8_HPP
#define AGENTWARE_DETAIL_UTF8_HPP

// One code point read from UTF-8 text, leniently: a lead byte whose sequence
// is cut short by the end of the text counts as one character of its own, as
// the counts that follow Python's `len` need nothing stricter.

#include <cstddef>
#include <string_view>

namespace agentware::detail {

struct utf8_char {
    char32_t code_point;
    std::size_t bytes; ///< 1 to 4
};

/// The character that starts at byte `i` of `s` (`i < s.size()`).
inline utf8_char utf8_at(std::string_view s, std::size_t i) noexcept {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0xF0 && i + 3 < s.size())
        return {((c & 0x07u) << 18) | ((s[i + 1] & 0x3Fu) << 12) | ((s[i + 2] & 0x3Fu) << 6) |
                    (s[i + 3] & 0x3Fu),
                4};
    if (c >= 0xE0 && i + 2 < s.size())
        return {((c & 0x0Fu) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu), 3};
    if (c >= 0xC0 && i + 1 < s.size()) return {((c & 0x1Fu) << 6) | (s[i + 1] & 0x3Fu), 2};
    return {c, 1};
}

} // namespace agentware::detail

#endif
