#ifndef AGENTWARE_MESSAGE_DETAIL_BASE64_HPP
#define AGENTWARE_MESSAGE_DETAIL_BASE64_HPP
// Standard base64 (RFC 4648, "+/" alphabet, "=" padding), used for data URLs.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace agentware::detail {

inline constexpr char base64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Encodes bytes with padding.
inline std::string base64_encode(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    auto byte = [&](std::size_t i) {
        return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i]));
    };
    auto sextet = [](std::uint32_t group, int shift) { return base64_alphabet[(group >> shift) & 0x3F]; };

    std::size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        const std::uint32_t group = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
        out += sextet(group, 18);
        out += sextet(group, 12);
        out += sextet(group, 6);
        out += sextet(group, 0);
    }
    const std::size_t rest = bytes.size() - i;
    if (rest == 1) {
        const std::uint32_t group = byte(i) << 16;
        out += sextet(group, 18);
        out += sextet(group, 12);
        out += "==";
    } else if (rest == 2) {
        const std::uint32_t group = (byte(i) << 16) | (byte(i + 1) << 8);
        out += sextet(group, 18);
        out += sextet(group, 12);
        out += sextet(group, 6);
        out += '=';
    }
    return out;
}

inline constexpr int base64_value(char c) noexcept {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/// Decodes base64; std::nullopt when the text is not base64. Padding may be
/// omitted (some encoders drop it), but a character outside the alphabet or an
/// impossible length is rejected rather than silently skipped.
inline std::optional<std::string> base64_decode(std::string_view text) {
    std::size_t length = text.size();
    std::size_t padding = 0;
    while (length > 0 && text[length - 1] == '=' && padding < 2) {
        --length;
        ++padding;
    }
    if (length % 4 == 1) return std::nullopt; // 6 bits cannot end a byte
    if (padding != 0 && (length + padding) % 4 != 0) return std::nullopt;

    std::string out;
    out.reserve(length / 4 * 3 + 2);
    std::uint32_t bits = 0;
    int bit_count = 0;
    for (char c : text.substr(0, length)) {
        const int v = base64_value(c);
        if (v < 0) return std::nullopt;
        bits = (bits << 6) | static_cast<std::uint32_t>(v);
        bit_count += 6;
        if (bit_count >= 8) {
            bit_count -= 8;
            out += static_cast<char>((bits >> bit_count) & 0xFF);
        }
    }
    return out;
}

} // namespace agentware::detail

#endif
