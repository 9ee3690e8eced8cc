#ifndef AGENTWARE_MESSAGE_ID_HPP
#define AGENTWARE_MESSAGE_ID_HPP
// Unique ids for messages and for tool calls whose model omitted one.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

namespace agentware {

namespace detail {

/// A bijective 64-bit mixer (xor-shift and odd multiplications, each
/// invertible): distinct inputs give distinct, random-looking outputs.
constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/// Chosen once per process so ids from different processes (e.g. a thread
/// restored from a checkpoint) are unlikely to meet.
inline std::uint64_t process_id_salt() noexcept {
    static const std::uint64_t salt = [] {
        std::uint64_t seed =
            static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
        seed ^= static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) << 1;
        try {
            std::random_device device;
            seed ^= (static_cast<std::uint64_t>(device()) << 32) ^ device();
        } catch (...) {
            // No entropy source: the clocks above still make a usable salt.
        }
        return mix64(seed);
    }();
    return salt;
}

/// A value never returned before in this process: the counter makes the
/// input distinct and mix64 keeps it distinct. Lock-free, one relaxed add.
inline std::uint64_t next_unique_id_bits() noexcept {
    static std::atomic<std::uint64_t> counter{0};
    return mix64(process_id_salt() + counter.fetch_add(1, std::memory_order_relaxed));
}

/// Per-thread generator for id characters that need not be unique, only
/// unpredictable-looking; seeded once per thread from a unique value.
inline std::mt19937_64& id_random_engine() {
    thread_local std::mt19937_64 engine{next_unique_id_bits()};
    return engine;
}

inline constexpr char alnum_digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Writes the 11 base-62 digits of `bits`, most significant first. Done in
/// three 32-bit chunks (62^5 < 2^32): ids are made twice per agent round, and
/// eleven 64-bit divisions were a measurable part of it.
inline void write_base62_11(char* out, std::uint64_t bits) noexcept {
    constexpr std::uint64_t chunk = 62ULL * 62 * 62 * 62 * 62;
    const auto write5 = [](char* at, std::uint32_t v) {
        for (int i = 4; i >= 0; --i) {
            at[i] = alnum_digits[v % 62];
            v /= 62;
        }
    };
    write5(out + 6, static_cast<std::uint32_t>(bits % chunk));
    bits /= chunk;
    write5(out + 1, static_cast<std::uint32_t>(bits % chunk));
    out[0] = alnum_digits[bits / chunk]; // < 22
}

/// A bijective mixer of 44-bit values: xor-shifts and odd multiplications
/// modulo 2^44, each invertible.
constexpr std::uint64_t mix44(std::uint64_t z) noexcept {
    constexpr std::uint64_t mask = (std::uint64_t{1} << 44) - 1;
    z &= mask;
    z = ((z ^ (z >> 22)) * 0xbf58476d1ce4e5b9ULL) & mask;
    z = ((z ^ (z >> 21)) * 0x94d049bb133111ebULL) & mask;
    return z ^ (z >> 22);
}

/// Message ids come in blocks of 2^20 consecutive 64-bit values. A block's
/// upper 44 bits are a salted, mixed counter (unique within the process,
/// random-looking across processes) and its lower 20 bits count. Each thread
/// takes a block, spells its first value in base 62 once, and then makes each
/// id by adding one to those digits: no division and no shared write per id,
/// where the agent makes two ids a round.
class message_id_block {
public:
    static constexpr unsigned count_bits = 20;

    /// `size` is how many ids a block gives (at most 2^20, all of them).
    /// constexpr, so a thread_local block needs no initialisation guard.
    explicit constexpr message_id_block(std::uint32_t size = std::uint32_t{1} << count_bits) noexcept
        : size_(size) {}

    /// Writes the next id, "msg-" and 11 base-62 digits, into `out` (15 characters).
    void next(char* out) noexcept {
        if (left_ == 0) take_block();
        --left_;
        std::memcpy(out, id_, sizeof id_);
        for (std::size_t i = sizeof id_; i-- > 4;) { // add one, carrying as needed
            char& c = id_[i];
            if (c != 'z') {
                c = c == '9' ? 'A' : c == 'Z' ? 'a' : static_cast<char>(c + 1);
                break;
            }
            c = '0';
        }
    }

private:
    void take_block() noexcept {
        static std::atomic<std::uint64_t> blocks{0};
        const std::uint64_t block = mix44(process_id_salt() + blocks.fetch_add(1, std::memory_order_relaxed));
        std::memcpy(id_, "msg-", 4);
        write_base62_11(id_ + 4, block << count_bits);
        left_ = size_;
    }

    char id_[15] = {};
    std::uint32_t left_ = 0;
    std::uint32_t size_;
};

/// Writes the calling thread's next message id (15 characters) into `out`.
inline void next_message_id(char* out) noexcept {
    thread_local message_id_block block;
    block.next(out);
}

} // namespace detail

/// Makes `id` a new message id (see make_message_id), in place.
inline void assign_message_id(std::string& id) {
    char next[15];
    detail::next_message_id(next);
    id = std::string(next, sizeof next);
}

/// A new message id, "msg-" followed by the 11 base-62 digits of a 64-bit
/// value (62^11 > 2^64, so the spelling is injective). Unique within the
/// process (all threads); values are salted per process, so ids of different
/// processes are unlikely to meet (see detail::message_id_block). Fifteen
/// characters: short enough for the string's inline buffer, so making an id
/// does not allocate.
inline std::string make_message_id() {
    std::string id;
    assign_message_id(id);
    return id;
}

/// A new tool call id in OpenAI's style, "call_" followed by 24 letters and
/// digits, for models that omit ids. The first 11 characters encode a unique
/// value (62^11 > 2^64, so the encoding is injective); the rest are random.
inline std::string make_tool_call_id() {
    std::string id = "call_";
    id.resize(5 + 24);
    detail::write_base62_11(id.data() + 5, detail::next_unique_id_bits());
    std::uint64_t noise = detail::id_random_engine()();
    for (std::size_t i = 5 + 11; i < id.size(); ++i) {
        id[i] = detail::alnum_digits[noise % 62];
        noise /= 62; // 64 random bits cover 10 characters; draw again after that
        if (i == 5 + 11 + 9) noise = detail::id_random_engine()();
    }
    return id;
}

} // namespace agentware

#endif
