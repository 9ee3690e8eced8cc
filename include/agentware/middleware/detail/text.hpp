#ifndef AGENTWARE_MIDDLEWARE_DETAIL_TEXT_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_TEXT_HPP

// Small text helpers the middlewares share. Lengths are counted in code
// points, not bytes, because DeerFlow's limits are Python string lengths and
// a cut must never split a UTF-8 sequence.

#include <agentware/message/detail/text.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace agentware::detail::mw {

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

inline bool is_blank(std::string_view s) noexcept { return trim(s).empty(); }

inline char ascii_lower(char c) noexcept {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

inline std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = ascii_lower(c);
    return out;
}

inline bool starts_with(std::string_view s, std::string_view prefix) noexcept {
    return s.substr(0, prefix.size()) == prefix;
}

inline bool ends_with(std::string_view s, std::string_view suffix) noexcept {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

/// Number of code points in UTF-8 text (continuation bytes are not counted).
inline std::size_t code_points(std::string_view s) noexcept { return utf8_chars(s); }

/// The first `n` code points of `s`.
inline std::string_view first_code_points(std::string_view s, std::size_t n) noexcept {
    return s.substr(0, utf8_offset(s, n));
}

/// `limit - 3` followed by "..." (DeerFlow's `detail[:497] + "..."` for 500).
inline std::string cap_with_ellipsis(std::string_view s, std::size_t limit) {
    if (code_points(s) <= limit) return std::string(s);
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

} // namespace agentware::detail::mw

#endif
