#ifndef AGENTWARE_MESSAGE_DETAIL_OUTPUT_LIMITS_HPP
#define AGENTWARE_MESSAGE_DETAIL_OUTPUT_LIMITS_HPP

// Bounds on what tools hand back to the model. Limits count characters (code
// points), as DeerFlow's do, and cuts never split a UTF-8 sequence.

#include <fmt/core.h>

#include <agentware/message/detail/text.hpp>
#include <cstddef>

#include <string>
#include <string_view>

namespace agentware::detail {

/// DeerFlow's head truncation (read_file, ls): room for the marker
/// "\n... [truncated: showing first {kept} of {total} chars. {hint}] ..." is
/// reserved for its longest form (both numbers at `total`), then the first
/// `kept` characters and the marker; when no character fits beside the
/// marker, the first `max_chars` characters alone. The result never exceeds
/// max_chars (0 = no limit).
inline std::string head_truncate(std::string_view text, std::size_t max_chars, std::string_view hint) {
    const std::size_t total = utf8_chars(text);
    if (max_chars == 0 || total <= max_chars) return std::string(text);
    // Text kept for parity with DeerFlow (reference §5.3).
    constexpr std::string_view marker_format = "\n... [truncated: showing first {} of {} chars. {}] ...";
    const std::size_t worst = utf8_chars(fmt::format(fmt::runtime(marker_format), total, total, hint));
    const std::size_t kept = max_chars > worst ? max_chars - worst : 0;
    if (kept == 0) return std::string(text.substr(0, utf8_offset(text, max_chars)));
    return std::string(text.substr(0, utf8_offset(text, kept))) +
           fmt::format(fmt::runtime(marker_format), kept, total, hint);
}

/// DeerFlow's middle truncation (bash output): head and tail halves around
/// "\n... [middle truncated: {skipped} chars skipped] ...\n", room reserved for
/// the marker's longest form; the first `max_chars` characters when no
/// character fits beside it (0 = no limit).
inline std::string middle_truncate(std::string_view text, std::size_t max_chars) {
    const std::size_t total = utf8_chars(text);
    if (max_chars == 0 || total <= max_chars) return std::string(text);
    // Text kept for parity with DeerFlow (reference §5.3).
    constexpr std::string_view marker_format = "\n... [middle truncated: {} chars skipped] ...\n";
    const std::size_t worst = utf8_chars(fmt::format(fmt::runtime(marker_format), total));
    const std::size_t kept = max_chars > worst ? max_chars - worst : 0;
    if (kept == 0) return std::string(text.substr(0, utf8_offset(text, max_chars)));
    const std::size_t head = kept / 2;
    const std::size_t tail = kept - head;
    return std::string(text.substr(0, utf8_offset(text, head))) +
           fmt::format(fmt::runtime(marker_format), total - kept) +
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
