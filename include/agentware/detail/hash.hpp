#ifndef AGENTWARE_DETAIL_HASH_HPP
#define AGENTWARE_DETAIL_HASH_HPP

// Two digests, written here so the library needs no crypto dependency:
//  * FNV-1a 64: fast and stable across runs and platforms; used where a
//    digest never leaves the process (loop detection's call-set keys);
//  * SHA-256 (FIPS 180-4): where DeerFlow shows the digest in data a client
//    may see (clarification request ids), so ours match byte for byte.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

// SHA-256 runs on the x86 SHA extensions where the processor has them (checked
// once, at run time): a file's digest in read_before_write, a delegation's
// result digest. <cpuid.h> is small; the intrinsics headers are not, so the
// few instructions are called through the compilers' builtins.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define AGENTWARE_SHA256_X86 1
#include <cpuid.h>
#else
#define AGENTWARE_SHA256_X86 0
#endif

namespace agentware::detail {

inline std::uint64_t fnv1a_64(std::string_view data) noexcept {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (char c : data) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    return h;
}

/// The lowercase hex digits of `n` bytes, into `out` (2 * n characters).
inline void write_hex(const unsigned char* bytes, std::size_t n, char* out) noexcept {
    static constexpr char digits[] = "0123456789abcdef";
    for (std::size_t i = 0; i < n; ++i) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 0xF];
    }
}

inline std::string to_hex(const unsigned char* bytes, std::size_t n) {
    std::string out(2 * n, '0'); // sized once: written in place, without a capacity check per digit
    write_hex(bytes, n, out.data());
    return out;
}

inline std::string fnv1a_64_hex(std::string_view data) {
    std::uint64_t h = fnv1a_64(data);
    unsigned char bytes[8];
    for (int i = 7; i >= 0; --i) {
        bytes[i] = static_cast<unsigned char>(h & 0xFF);
        h >>= 8;
    }
    return to_hex(bytes, 8);
}

namespace sha256_detail {

inline constexpr std::uint32_t k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t rotr(std::uint32_t x, int n) noexcept { return (x >> n) | (x << (32 - n)); }

// One round, given the eight working variables in this round's order. Only two of
// them change (d and h), so eight rounds in a row that name the variables in turn
// leave every one in its place: no moving them along each round (a fifth fewer
// instructions). Ch and Maj in their three- and four-operation forms.
inline void compress_round(const std::uint32_t (&w)[64], int i, std::uint32_t a, std::uint32_t b,
                           std::uint32_t c, std::uint32_t& d, std::uint32_t e, std::uint32_t f,
                           std::uint32_t g, std::uint32_t& h) noexcept {
    const std::uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + (g ^ (e & (f ^ g))) + k[i] + w[i];
    const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) | (c & (a | b)));
    d += t1;
    h = t1 + t2;
}

// One 64-byte block into the running digest `h`.
inline void compress(std::uint32_t (&h)[8], const unsigned char* block) noexcept {
    std::uint32_t w[64];
    for (int i = 0; i < 16; ++i) {
        const unsigned char* p = block + 4 * i;
        w[i] = (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
    }
    for (int i = 16; i < 64; ++i) {
        const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i += 8) {
        compress_round(w, i + 0, a, b, c, d, e, f, g, hh);
        compress_round(w, i + 1, hh, a, b, c, d, e, f, g);
        compress_round(w, i + 2, g, hh, a, b, c, d, e, f);
        compress_round(w, i + 3, f, g, hh, a, b, c, d, e);
        compress_round(w, i + 4, e, f, g, hh, a, b, c, d);
        compress_round(w, i + 5, d, e, f, g, hh, a, b, c);
        compress_round(w, i + 6, c, d, e, f, g, hh, a, b);
        compress_round(w, i + 7, b, c, d, e, f, g, hh, a);
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
}

#if AGENTWARE_SHA256_X86
// Four rounds per two `sha256rnds2`, the schedule by `sha256msg1`/`sha256msg2`.
// The instructions keep the eight working variables as two vectors, ABEF and
// CDGH (A in the highest lane).
using u32x4 = int __attribute__((vector_size(16))); // what the builtins take
using u8x16 = char __attribute__((vector_size(16)));

/// The processor has the SHA extensions (and the SSSE3 and SSE4.1 shuffles
/// the compiler may use around them).
inline bool has_sha_extensions() noexcept {
    static const bool has = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        if (__get_cpuid(1, &a, &b, &c, &d) == 0 || (c & bit_SSSE3) == 0 || (c & bit_SSE4_1) == 0)
            return false;
        return __get_cpuid_count(7, 0, &a, &b, &c, &d) != 0 && (b & bit_SHA) != 0;
    }();
    return has;
}

__attribute__((target("sha,ssse3,sse4.1"))) inline u32x4 load_be_words(const unsigned char* p) noexcept {
    u8x16 bytes;
    std::memcpy(&bytes, p, 16);
    bytes = __builtin_shufflevector(bytes, bytes, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    u32x4 words;
    std::memcpy(&words, &bytes, 16);
    return words;
}

__attribute__((target("sha,ssse3,sse4.1"))) inline void
compress_blocks_sha_extensions(std::uint32_t (&h)[8], const unsigned char* p, std::size_t blocks) noexcept {
    u32x4 abcd, efgh;
    std::memcpy(&abcd, h, 16);
    std::memcpy(&efgh, h + 4, 16);
    u32x4 abef = __builtin_shufflevector(abcd, efgh, 5, 4, 1, 0);
    u32x4 cdgh = __builtin_shufflevector(abcd, efgh, 7, 6, 3, 2);
    for (; blocks != 0; --blocks, p += 64) {
        const u32x4 abef_before = abef, cdgh_before = cdgh;
        u32x4 w[4] = {load_be_words(p), load_be_words(p + 16), load_be_words(p + 32), load_be_words(p + 48)};
        for (int g = 0; g < 16; ++g) { // four rounds each
            u32x4& wg = w[g % 4];
            if (g >= 4) {
                const u32x4& w1 = w[(g + 3) % 4]; // the previous group's words
                const u32x4& w2 = w[(g + 2) % 4];
                wg = __builtin_ia32_sha256msg2(__builtin_ia32_sha256msg1(wg, w[(g + 1) % 4]) +
                                                   __builtin_shufflevector(w2, w1, 1, 2, 3, 4),
                                               w1);
            }
            u32x4 kg;
            std::memcpy(&kg, k + 4 * g, 16);
            const u32x4 wk = wg + kg;
            cdgh = __builtin_ia32_sha256rnds2(cdgh, abef, wk);
            abef = __builtin_ia32_sha256rnds2(abef, cdgh, __builtin_shufflevector(wk, wk, 2, 3, 0, 1));
        }
        abef += abef_before;
        cdgh += cdgh_before;
    }
    abcd = __builtin_shufflevector(abef, cdgh, 3, 2, 7, 6);
    efgh = __builtin_shufflevector(abef, cdgh, 1, 0, 5, 4);
    std::memcpy(h, &abcd, 16);
    std::memcpy(h + 4, &efgh, 16);
}
#endif

/// `blocks` 64-byte blocks from `p` into the running digest `h`.
inline void compress_blocks(std::uint32_t (&h)[8], const unsigned char* p, std::size_t blocks) noexcept {
#if AGENTWARE_SHA256_X86
    if (has_sha_extensions()) return compress_blocks_sha_extensions(h, p, blocks);
#endif
    for (; blocks != 0; --blocks, p += 64)
        compress(h, p);
}

} // namespace sha256_detail

/// SHA-256 of `data`, as 64 lowercase hex digits, without an allocation (for a
/// caller that copies them on). The whole blocks are read in place; only the
/// tail (with the padding) is copied, to the stack.
inline std::array<char, 64> sha256_hex_digits(std::string_view data) noexcept {
    std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                          0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
    const std::size_t rest = data.size() % 64; // (so named, g++ sees that it is under 64)
    const std::size_t whole = data.size() - rest;
    sha256_detail::compress_blocks(h, bytes, whole / 64);

    // The rest, the 0x80 marker, zero padding and the 64-bit bit length: one block or two.
    unsigned char tail[128] = {};
    for (std::size_t i = 0; i < rest; ++i)
        tail[i] = bytes[whole + i];
    tail[rest] = 0x80;
    const std::size_t tail_size = rest < 56 ? 64 : 128;
    const std::uint64_t bit_len = static_cast<std::uint64_t>(data.size()) * 8;
    for (int i = 0; i < 8; ++i)
        tail[tail_size - 1 - static_cast<std::size_t>(i)] =
            static_cast<unsigned char>((bit_len >> (8 * i)) & 0xFF);
    sha256_detail::compress_blocks(h, tail, tail_size / 64);

    unsigned char digest[32];
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 4; ++j)
            digest[4 * i + j] = static_cast<unsigned char>((h[i] >> (24 - 8 * j)) & 0xFF);
    std::array<char, 64> hex;
    write_hex(digest, 32, hex.data());
    return hex;
}

/// SHA-256 of `data`, as 64 lowercase hex digits.
inline std::string sha256_hex(std::string_view data) {
    const std::array<char, 64> hex = sha256_hex_digits(data);
    return std::string(hex.data(), hex.size());
}

} // namespace agentware::detail

#endif
