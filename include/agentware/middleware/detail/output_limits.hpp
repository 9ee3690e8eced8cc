#ifndef AGENTWARE_MIDDLEWARE_DETAIL_OUTPUT_LIMITS_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_OUTPUT_LIMITS_HPP

// Bounds on what tools hand back to the model. Limits count characters (code
// points), as DeerFlow's do, and cuts never split a UTF-8 sequence.

#include <fmt/format.h>

#include <agentware/message/detail/text.hpp>
#include <cstddef>

#include <string>
#include <string_view>

namespace agentware::detail {

/// The first `max_chars` characters, then the marker
/// "\n... [truncated: showing first {kept} of {total} chars. {hint}] ...";
/// the result, marker included, stays within max_chars when it can.
inline std::string head_truncate(std::string_view text, std::size_t max_chars, std::string_view hint) {
    const std::size_t total = utf8_chars(text);
    if (max_chars == 0 || total <= max_chars) return std::string(text);
    std::size_t kept = max_chars;
    std::string marker;
    for (int pass = 0; pass < 3; ++pass) { // the marker's length depends on `kept`
        marker = fmt::format("\n... [truncated: showing first {} of {} chars. {}] ...", kept, total, hint);
        const std::size_t m = utf8_chars(marker);
        kept = max_chars > m ? max_chars - m : 0;
    }
    marker = fmt::format("\n... [truncated: showing first {} of {} chars. {}] ...", kept, total, hint);
    return std::string(text.substr(0, utf8_offset(text, kept))) + marker;
}

/// Head and tail halves around "\n... [middle truncated: {skipped} chars skipped] ...\n",
/// the whole within max_chars (DeerFlow's bash output rule; 0 = no limit).
inline std::string middle_truncate(std::string_view text, std::size_t max_chars) {
    const std::size_t total = utf8_chars(text);
    if (max_chars == 0 || total <= max_chars) return std::string(text);
    std::size_t skipped = total;
    std::string marker;
    std::size_t budget = 0;
    for (int pass = 0; pass < 3; ++pass) {
        marker = fmt::format("\n... [middle truncated: {} chars skipped] ...\n", skipped);
        const std::size_t m = utf8_chars(marker);
        budget = max_chars > m ? max_chars - m : 0;
        skipped = total - budget;
    }
    marker = fmt::format("\n... [middle truncated: {} chars skipped] ...\n", skipped);
    const std::size_t head = budget / 2;
    const std::size_t tail = budget - head;
    return std::string(text.substr(0, utf8_offset(text, head))) + marker +
           std::string(text.substr(utf8_offset(text, total - tail)));
}

/// True when `s` is valid UTF-8 without NUL bytes (what read_file accepts as text).
inline bool is_utf8_text(std::string_view s) noexcept {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c == 0) return false;
        std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (len == 0 || i + len > s.size()) return false;
        if (len == 2 && c < 0xC2) return false; // overlong
        for (std::size_t k = 1; k < len; ++k)
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
        i += len;
    }
    return true;
}

} // namespace agentware::detail

#endif
