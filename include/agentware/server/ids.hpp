#ifndef AGENTWARE_SERVER_IDS_HPP
#define AGENTWARE_SERVER_IDS_HPP

// The server's ids and times: UUIDv7 for threads, runs and checkpoints (time
// ordered, so a listing by id is a listing by age), a stable UUID for each
// graph id (an assistant is reachable by either), and ISO times with
// milliseconds, as the LangGraph API writes them.

#include <agentware/detail/format.hpp>
#include <agentware/detail/hash.hpp>

#include <fmt/chrono.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>

namespace agentware::server {

namespace detail {

inline std::string uuid_text(const std::array<unsigned char, 16>& b) {
    return agentware::detail::format("{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{"
                                     ":02x}{:02x}{:02x}{:02x}{:02x}",
                                     b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
                                     b[12], b[13], b[14], b[15]);
}

} // namespace detail

/// A new UUIDv7: 48 bits of Unix milliseconds, then random bits.
inline std::string new_uuid7() {
    thread_local std::mt19937_64 random{std::random_device{}() ^
                                        (std::uint64_t(std::random_device{}()) << 32)};
    const auto ms = std::uint64_t(std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::system_clock::now().time_since_epoch())
                                      .count());
    std::array<unsigned char, 16> b{};
    for (int i = 0; i < 6; ++i)
        b[std::size_t(i)] = static_cast<unsigned char>(ms >> (40 - 8 * i));
    const std::uint64_t r1 = random(), r2 = random();
    for (int i = 6; i < 16; ++i)
        b[std::size_t(i)] = static_cast<unsigned char>((i < 14 ? r1 : r2) >> (8 * (i % 8)));
    b[6] = static_cast<unsigned char>(0x70 | (b[6] & 0x0f));
    b[8] = static_cast<unsigned char>(0x80 | (b[8] & 0x3f));
    return detail::uuid_text(b);
}

/// The assistant id of a graph registered under `graph_id`: the same on every
/// start and every server (a name-based UUID, version 5's layout over SHA-256).
inline std::string assistant_uuid(std::string_view graph_id) {
    const std::string hex =
        agentware::detail::sha256_hex(std::string("agentware-assistant:") + std::string(graph_id));
    std::array<unsigned char, 16> b{};
    for (std::size_t i = 0; i < 16; ++i)
        b[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
    b[6] = static_cast<unsigned char>(0x50 | (b[6] & 0x0f));
    b[8] = static_cast<unsigned char>(0x80 | (b[8] & 0x3f));
    return detail::uuid_text(b);
}

/// "2026-11-28T17:19:50.176Z".
inline std::string iso_now() {
    const auto now =
        std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
    const auto secs = std::chrono::time_point_cast<std::chrono::seconds>(now);
    return agentware::detail::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z", secs, int((now - secs).count()));
}

} // namespace agentware::server

#endif
