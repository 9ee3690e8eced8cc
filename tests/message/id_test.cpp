// message/id.hpp: message ids and tool call ids, unique across blocks and threads.
#include <agentware/message/id.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

using namespace agentware;

TEST_CASE("message ids are msg- followed by 11 letters and digits, short enough not to allocate",
          "[message][id]") {
    const std::string id = make_message_id();
    REQUIRE(id.size() == 15);
    CHECK(id.rfind("msg-", 0) == 0);
    CHECK(std::all_of(id.begin() + 4, id.end(),
                      [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }));
    CHECK(id.capacity() == std::string().capacity()); // still in the inline buffer
    CHECK(make_message_id() != id);
}

TEST_CASE("ids spell their unique bits in base 62, most significant digit first", "[message][id]") {
    const auto naive = [](std::uint64_t bits) {
        std::string out(11, '0');
        for (std::size_t i = 11; i-- > 0;) {
            out[i] = agentware::detail::alnum_digits[bits % 62];
            bits /= 62;
        }
        return out;
    };
    constexpr std::uint64_t p5 = 62ULL * 62 * 62 * 62 * 62;
    for (std::uint64_t bits : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{61}, std::uint64_t{62},
                               p5 - 1, p5, p5 * p5 - 1, p5 * p5, std::uint64_t{1} << 32, ~std::uint64_t{0},
                               std::uint64_t{0x0123456789abcdefULL}, agentware::detail::mix64(42)}) {
        char out[11];
        agentware::detail::write_base62_11(out, bits);
        CHECK(std::string(out, 11) == naive(bits));
    }
    CHECK(naive(~std::uint64_t{0}) == "LygHa16AHYF"); // the largest value still fits 11 digits
}

TEST_CASE("message ids count up by one within a block and stay distinct across blocks", "[message][id]") {
    const auto value_of = [](std::string_view digits) { // the 64-bit value 11 base-62 digits spell
        std::uint64_t v = 0;
        for (char c : digits)
            v = v * 62 +
                static_cast<std::uint64_t>(std::string_view(agentware::detail::alnum_digits).find(c));
        return v;
    };
    constexpr std::uint64_t block_size = 100;
    agentware::detail::message_id_block small(block_size); // a new block every 100 ids
    std::unordered_set<std::string> seen;
    std::unordered_set<std::uint64_t> blocks;
    std::uint64_t previous = 0;
    for (std::uint64_t i = 0; i < 1000; ++i) {
        char out[15];
        small.next(out);
        const std::string id(out, sizeof out);
        REQUIRE(id.rfind("msg-", 0) == 0);
        REQUIRE(std::all_of(id.begin() + 4, id.end(),
                            [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }));
        const std::uint64_t value = value_of(std::string_view(id).substr(4));
        if (i % block_size == 0) {
            // A block starts at a multiple of 2^20, at a place no other block of the process has.
            CHECK(value % (std::uint64_t{1} << agentware::detail::message_id_block::count_bits) == 0);
            CHECK(blocks.insert(value).second);
        } else {
            CHECK(value == previous + 1); // digits carry as in addition
        }
        previous = value;
        seen.insert(id);
    }
    CHECK(seen.size() == 1000);
    CHECK(blocks.size() == 10);
}

TEST_CASE("tool call ids are call_ followed by 24 letters and digits", "[message][id]") {
    const std::string id = make_tool_call_id();
    REQUIRE(id.size() == 29);
    CHECK(id.rfind("call_", 0) == 0);
    CHECK(std::all_of(id.begin() + 5, id.end(),
                      [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }));
    CHECK(make_tool_call_id() != id);
}

TEST_CASE("ids made on several threads at once are all distinct", "[message][id][concurrency]") {
    constexpr int threads = 4;
    constexpr int per_thread = 10000;
    std::vector<std::vector<std::string>> message_ids(threads), call_ids(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            for (int i = 0; i < per_thread; ++i) {
                message_ids[static_cast<std::size_t>(t)].push_back(make_message_id());
                call_ids[static_cast<std::size_t>(t)].push_back(make_tool_call_id());
            }
        });
    }
    for (auto& w : workers)
        w.join();

    std::unordered_set<std::string> messages_seen, calls_seen;
    for (const auto& batch : message_ids)
        messages_seen.insert(batch.begin(), batch.end());
    for (const auto& batch : call_ids)
        calls_seen.insert(batch.begin(), batch.end());
    CHECK(messages_seen.size() == threads * per_thread);
    CHECK(calls_seen.size() == threads * per_thread);
}

TEST_CASE("seed_ids makes the ids that follow a function of the seed and their order", "[message][id]") {
    const auto sequence = [](std::uint64_t seed) {
        seed_ids(seed);
        std::vector<std::string> ids;
        for (int i = 0; i < 3; ++i) {
            ids.push_back(make_message_id());
            ids.push_back(make_tool_call_id());
        }
        // A thread that starts after the seed draws from the same sequence of blocks.
        std::thread([&] { ids.push_back(make_message_id()); }).join();
        return ids;
    };
    const std::vector<std::string> first = sequence(42);
    make_message_id(); // ids made in between do not carry over into the next seeded run
    const std::vector<std::string> again = sequence(42);
    CHECK(first == again);
    const std::vector<std::string> other = sequence(43);
    CHECK(other != first);
    CHECK(std::unordered_set<std::string>(first.begin(), first.end()).size() == first.size());
}
