#ifndef AGENTWARE_MESSAGE_IMPL_ID_IPP
#define AGENTWARE_MESSAGE_IMPL_ID_IPP

// The definitions of agentware/message/id.hpp's non-template functions: in every
// translation unit that includes it (header-only), or once in <agentware/src.hpp>
// (AGENTWARE_SEPARATE_COMPILATION).

#include <agentware/message/id.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

namespace agentware {

namespace detail {

namespace id_source {

inline std::uint64_t entropy_salt() noexcept {
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
}

// The process's id state, in one place so that seed_ids can restart it.
struct shared_state {
    std::atomic<std::uint64_t> salt{entropy_salt()};
    std::atomic<std::uint64_t> unique_counter{0};
    std::atomic<std::uint64_t> block_counter{0};
    std::atomic<std::uint32_t> generation{0};
};

inline shared_state& state() noexcept {
    static shared_state s;
    return s;
}

} // namespace id_source

std::uint64_t process_id_salt() noexcept { return id_source::state().salt.load(std::memory_order_relaxed); }

std::atomic<std::uint32_t>& id_seed_generation() noexcept { return id_source::state().generation; }

std::uint64_t next_unique_id_bits() noexcept {
    return mix64(process_id_salt() +
                 id_source::state().unique_counter.fetch_add(1, std::memory_order_relaxed));
}

/// Per-thread generator for id characters that need not be unique, only
/// unpredictable-looking; seeded from a unique value, again after seed_ids.
AGENTWARE_DECL std::mt19937_64& id_random_engine() {
    // Seeded on first use and again after each seed_ids, from the same shared
    // sequence as the ids, so a seeded run draws the same characters.
    thread_local std::mt19937_64 engine;
    thread_local bool seeded = false;
    thread_local std::uint32_t generation = 0;
    if (const auto now = id_seed_generation().load(std::memory_order_relaxed); !seeded || now != generation) {
        seeded = true;
        generation = now;
        engine.seed(next_unique_id_bits());
    }
    return engine;
}

void write_base62_11(char* out, std::uint64_t bits) noexcept {
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

void next_message_id(char* out) noexcept {
    thread_local message_id_block block;
    block.next(out);
}

void message_id_block::take_block() noexcept {
    generation_ = id_seed_generation().load(std::memory_order_relaxed);
    const std::uint64_t block =
        mix44(process_id_salt() + id_source::state().block_counter.fetch_add(1, std::memory_order_relaxed));
    std::memcpy(id_, "msg-", 4);
    write_base62_11(id_ + 4, block << count_bits);
    left_ = size_;
}

} // namespace detail

void seed_ids(std::uint64_t seed) noexcept {
    auto& s = detail::id_source::state();
    s.salt.store(detail::mix64(seed), std::memory_order_relaxed);
    s.unique_counter.store(0, std::memory_order_relaxed);
    s.block_counter.store(0, std::memory_order_relaxed);
    s.generation.fetch_add(1, std::memory_order_relaxed);
}

void assign_message_id(std::string& id) {
    char next[15];
    detail::next_message_id(next);
    id = std::string(next, sizeof next);
}

std::string make_message_id() {
    std::string id;
    assign_message_id(id);
    return id;
}

std::string make_tool_call_id() {
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
