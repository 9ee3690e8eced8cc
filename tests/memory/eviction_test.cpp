// Which facts stay at capacity: hybrid-v1's score and its reserved correction slots,
// the confidence policy.
#include <agentware/memory/eviction.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace agentware;
using namespace std::chrono_literals;
using dftest::temp_dir;
using namespace memory_test;

namespace memory_eviction {

memory_fact dated(std::string id, double confidence, std::string created, std::string confirmed = {},
                  std::string category = "context") {
    memory_fact f = fact(id, "about " + id, confidence, std::move(category));
    f.created_at = std::move(created);
    f.last_confirmed_at = std::move(confirmed);
    return f;
}

std::vector<std::string> ids_at(const std::vector<memory_fact>& facts, const std::vector<std::size_t>& at) {
    std::vector<std::string> out;
    for (std::size_t i : at)
        out.push_back(facts[i].id);
    return out;
}

} // namespace memory_eviction

TEST_CASE("hybrid-v1 scores confidence, confirmation freshness and access heat", "[memory]") {
    using namespace memory_eviction;
    const memory_backend_options o;
    const auto now = at(2026, 11, 24);
    // Confirmed 90 days ago: freshness halves once.
    const auto confirmed =
        score_memory_fact(dated("fact_a", 0.8, "2026-01-01T00:00:00Z", "2026-08-26T00:00:00Z"),
                          memory_eviction_hybrid_v1, o, now);
    CHECK(confirmed.confidence == Approx(0.8));
    CHECK(confirmed.confirmation_freshness == Approx(0.5));
    CHECK(confirmed.access_heat == 0);
    CHECK(confirmed.value == Approx(0.65 * 0.8 + 0.25 * 0.5));
    // Never confirmed: its creation counts half.
    CHECK(score_memory_fact(dated("fact_b", 0.8, "2026-08-26T00:00:00Z"), memory_eviction_hybrid_v1, o, now)
              .confirmation_freshness == Approx(0.25));
    // Malformed dates count nothing; a confidence that is not a number counts 0.5.
    memory_fact odd = dated("fact_c", std::nan(""), "not-a-date", "also-not-a-date");
    const auto odd_score = score_memory_fact(odd, memory_eviction_hybrid_v1, o, now);
    CHECK(odd_score.confirmation_freshness == 0);
    CHECK(odd_score.confidence == Approx(0.5));
    CHECK(score_memory_fact(dated("fact_d", 1.7, "x"), memory_eviction_hybrid_v1, o, now).confidence == 1);
    // Access heat: eight fresh accesses saturate; it halves every 30 days before it is squashed.
    const memory_fact_usage hot{8, "2026-11-24T00:00:00Z"}, cooled{8, "2026-10-25T00:00:00Z"}, undated{8, ""};
    CHECK(score_memory_fact(odd, memory_eviction_hybrid_v1, o, now, &hot).access_heat == Approx(1));
    CHECK(score_memory_fact(odd, memory_eviction_hybrid_v1, o, now, &cooled).access_heat ==
          Approx(std::log(5.0) / std::log(9.0)));
    CHECK(score_memory_fact(odd, memory_eviction_hybrid_v1, o, now, &undated).access_heat == 0);
    // The confidence policy is the confidence alone.
    const auto plain = score_memory_fact(dated("fact_a", 0.8, "2026-01-01T00:00:00Z", "2026-11-24T00:00:00Z"),
                                         memory_eviction_confidence, o, now, &hot);
    CHECK(plain.value == Approx(0.8));
    CHECK(plain.confirmation_freshness == 0);
}

TEST_CASE("hybrid-v1 keeps fresh confirmations and reserves slots for corrections", "[memory]") {
    using namespace memory_eviction;
    const memory_backend_options o;
    const auto now = at(2026, 11, 24);
    const std::vector<memory_fact> facts{
        dated("fact_a", 0.95, "2025-11-24T00:00:00Z"),                         // 0.625
        dated("fact_b", 0.75, "2025-11-24T00:00:00Z", "2026-11-24T00:00:00Z"), // 0.7375: confirmed today
        dated("fact_c", 0.80, "2026-11-24T00:00:00Z"),                         // 0.645: new today
        dated("fact_d", 0.85, "2025-11-24T00:00:00Z", {}, "correction"),       // 0.56
        dated("fact_e", 0.90, "2025-11-24T00:00:00Z"),                         // 0.5925
    };
    const auto hybrid = select_facts_for_capacity(facts, 3, memory_eviction_hybrid_v1, o, now);
    CHECK(hybrid.reserved_correction_slots == 1); // min(10, ceil(3 × 0.10))
    CHECK(ids_at(facts, hybrid.kept) == std::vector<std::string>{"fact_b", "fact_c", "fact_d"});
    CHECK(ids_at(facts, hybrid.evicted) == std::vector<std::string>{"fact_e", "fact_a"});
    CHECK(hybrid.scores[1].value == Approx(0.7375));

    const auto by_confidence = select_facts_for_capacity(facts, 3, memory_eviction_confidence, o, now);
    CHECK(by_confidence.reserved_correction_slots == 0);
    CHECK(ids_at(facts, by_confidence.kept) == std::vector<std::string>{"fact_a", "fact_e", "fact_d"});
    CHECK(ids_at(facts, by_confidence.evicted) == std::vector<std::string>{"fact_b", "fact_c"});

    // Without corrections the reserved slot goes to the rest.
    std::vector<memory_fact> plain = facts;
    plain[3].category = "context";
    const auto open = select_facts_for_capacity(plain, 3, memory_eviction_hybrid_v1, o, now);
    CHECK(open.reserved_correction_slots == 0);
    CHECK(ids_at(plain, open.kept) == std::vector<std::string>{"fact_b", "fact_c", "fact_a"});

    // At most eviction_correction_reserved_max slots; never more than there are corrections.
    std::vector<memory_fact> many;
    for (int i = 0; i < 40; ++i)
        many.push_back(dated(fmt::format("fact_{:02}", i), i < 20 ? 0.7 : 0.99, "2026-11-24T00:00:00Z", {},
                             i < 20 ? "correction" : "context"));
    const auto capped = select_facts_for_capacity(many, 30, memory_eviction_hybrid_v1, o, now);
    CHECK(capped.reserved_correction_slots == 3); // ceil(30 × 0.10)
    CHECK(capped.kept.size() == 30);
    memory_backend_options wide = o;
    wide.eviction_correction_reserved_fraction = 1.0;
    wide.eviction_correction_reserved_max = 15;
    CHECK(
        select_facts_for_capacity(many, 30, memory_eviction_hybrid_v1, wide, now).reserved_correction_slots ==
        15);
    CHECK(select_facts_for_capacity(many, 0, memory_eviction_hybrid_v1, wide, now).kept.empty());
}
