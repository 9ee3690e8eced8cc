#ifndef AGENTWARE_MESSAGE_ID_HPP
#define AGENTWARE_MESSAGE_ID_HPP

// Unique ids for messages and for tool calls whose model omitted one.

#include <agentware/detail/config.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
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
/// restored from a checkpoint) are unlikely to meet; seed_ids replaces it.
AGENTWARE_DECL std::uint64_t process_id_salt() noexcept;

/// Counts the calls to seed_ids: a thread's cached block or random engine
/// made under an earlier count is dropped (one relaxed load per id).
AGENTWARE_DECL std::atomic<std::uint32_t>& id_seed_generation() noexcept;

/// A value never returned before in this process: the counter makes the
/// input distinct and mix64 keeps it distinct. Lock-free, one relaxed add.
AGENTWARE_DECL std::uint64_t next_unique_id_bits() noexcept;

inline constexpr char alnum_digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Writes the 11 base-62 digits of `bits`, most significant first. Done in
/// three 32-bit chunks (62^5 < 2^32): ids are made twice per agent round, and
/// eleven 64-bit divisions were a measurable part of it.
AGENTWARE_DECL void write_base62_11(char* out, std::uint64_t bits) noexcept;

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
        if (left_ == 0 || generation_ != id_seed_generation().load(std::memory_order_relaxed)) take_block();
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
    AGENTWARE_DECL void take_block() noexcept;

    char id_[15] = {};
    std::uint32_t left_ = 0;
    std::uint32_t generation_ = 0;
    std::uint32_t size_;
};

/// Writes the calling thread's next message id (15 characters) into `out`.
AGENTWARE_DECL void next_message_id(char* out) noexcept;

} // namespace detail

/// Makes every id made from now on (messages, tool calls, the names
/// middlewares derive from them) a function of `seed` and of the order they
/// are made in, so that a scripted run gives the same ids each time
/// (`agentware replay`, tests). Call it before the run, with no other thread
/// making ids. Not for a service: two processes seeded alike make the same ids.
AGENTWARE_DECL void seed_ids(std::uint64_t seed) noexcept;

/// Makes `id` a new message id (see make_message_id), in place.
AGENTWARE_DECL void assign_message_id(std::string& id);

/// A new message id, "msg-" followed by the 11 base-62 digits of a 64-bit
/// value (62^11 > 2^64, so the spelling is injective). Unique within the
/// process (all threads); values are salted per process, so ids of different
/// processes are unlikely to meet (see detail::message_id_block). Fifteen
/// characters: short enough for the string's inline buffer, so making an id
/// does not allocate.
AGENTWARE_DECL std::string make_message_id();

/// A new tool call id in OpenAI's style, "call_" followed by 24 letters and
/// digits, for models that omit ids. The first 11 characters encode a unique
/// value (62^11 > 2^64, so the encoding is injective); the rest are random.
AGENTWARE_DECL std::string make_tool_call_id();

} // namespace agentware

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/message/impl/id.ipp>
#endif

#endif
