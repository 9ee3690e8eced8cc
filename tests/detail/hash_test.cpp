// The digests: SHA-256 against FIPS 180-4's examples, and the x86 SHA
// extensions' path against the portable one on every tail length.
#include <agentware/detail/hash.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>

using namespace agentware::detail;

namespace {

// The digest with the portable rounds only, padding done by hand.
std::string portable_sha256(std::string_view data) {
    std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                          0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::string padded(data);
    padded.push_back('\x80');
    while (padded.size() % 64 != 56)
        padded.push_back('\0');
    const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
    for (int i = 7; i >= 0; --i)
        padded.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
    for (std::size_t at = 0; at < padded.size(); at += 64)
        sha256_detail::compress(h, reinterpret_cast<const unsigned char*>(padded.data()) + at);
    unsigned char digest[32];
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 4; ++j)
            digest[4 * i + j] = static_cast<unsigned char>((h[i] >> (24 - 8 * j)) & 0xFF);
    return to_hex(digest, 32);
}

} // namespace

TEST_CASE("SHA-256 gives the standard's digests", "[hash]") {
    CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    CHECK(sha256_hex(std::string(1'000'000, 'a')) ==
          "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    CHECK(portable_sha256("abc") == sha256_hex("abc"));
}

TEST_CASE("SHA-256 on the SHA extensions and without them agree", "[hash]") {
#if AGENTWARE_SHA256_X86
    if (!sha256_detail::has_sha_extensions())
        WARN("this processor has no SHA extensions: only the portable rounds ran");
#endif
    // Every tail length (one block of padding or two), and several whole blocks before it.
    std::mt19937 random(20261128);
    for (std::size_t n = 0; n < 300; ++n) {
        std::string data(n, '\0');
        for (char& c : data)
            c = static_cast<char>(random() & 0xFF);
        INFO("length " << n);
        CHECK(sha256_hex(data) == portable_sha256(data));
    }
    const std::string long_text(100'000, 'q');
    CHECK(sha256_hex(long_text) == portable_sha256(long_text));
}
