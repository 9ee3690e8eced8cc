#ifndef AGENTWARE_MEMORY_EVICTION_HPP
#define AGENTWARE_MEMORY_EVICTION_HPP

// Which facts stay when an agent's memory holds more than `max_facts`
// (reference §9.1 step 6, "Capacity"): DeerMem's `confidence` policy keeps the
// most confident; the opt-in `hybrid-v1` ranks by a bounded score of
// confidence, how recently the user confirmed the fact and how often a search
// returned it lately, and keeps a few slots for corrections. Deterministic and
// explainable: every fact's score comes back with its parts.

#include <agentware/memory/clock.hpp>
#include <agentware/memory/options.hpp>
#include <agentware/memory/storage.hpp>
#include <agentware/message/detail/text.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

namespace agentware {

inline constexpr std::string_view memory_eviction_confidence = "confidence";
inline constexpr std::string_view memory_eviction_hybrid_v1 = "hybrid-v1";

/// How a search used one fact (DeerMem's usage sidecar): its access heat as
/// last recorded and when. Nothing in agentware records it yet (there is no
/// `memory_search`), so the heat term is zero unless a caller hands usage in.
struct memory_fact_usage {
    double access_heat = 0;
    std::string last_accessed_at;
};

using memory_usage_map = std::map<std::string, memory_fact_usage, std::less<>>;

/// One fact's score under a policy, with its bounded parts (each 0..1).
struct memory_fact_score {
    double value = 0;
    double confidence = 0;
    double confirmation_freshness = 0; ///< hybrid-v1 only
    double access_heat = 0;            ///< hybrid-v1 only
};

/// The outcome of a capacity check on one snapshot (the facts are not touched).
struct memory_capacity_decision {
    std::vector<std::size_t> kept;         ///< indexes into the facts, best first (ties: original order)
    std::vector<std::size_t> evicted;      ///< indexes, lowest score first
    std::vector<memory_fact_score> scores; ///< per fact, in the facts' order
    std::size_t reserved_correction_slots = 0;
};

namespace detail {

/// 2^(-elapsed/half_life); elapsed below zero counts as zero.
inline double memory_decay(double elapsed_days, double half_life_days) {
    if (half_life_days <= 0) return 0;
    return std::exp2(-std::max(0.0, elapsed_days) / half_life_days);
}

inline double memory_elapsed_days(std::string_view stamp, memory_clock::time_point now, bool& known) {
    memory_clock::time_point t;
    known = !trim(stamp).empty() && parse_iso_utc(trim(stamp), t);
    if (!known) return 0;
    return std::chrono::duration<double>(now - t).count() / 86400.0;
}

/// A fact's confidence as a score: 0..1, 0.5 when it is not a finite number.
inline double bounded_confidence(double c) { return std::isfinite(c) ? std::clamp(c, 0.0, 1.0) : 0.5; }

/// A confirmation decays from 1 with the half-life; a fact never confirmed
/// counts half, decaying from its creation; no valid date, nothing.
inline double confirmation_freshness(const memory_fact& f, memory_clock::time_point now,
                                     double half_life_days) {
    bool known = false;
    if (double d = memory_elapsed_days(f.last_confirmed_at, now, known); known)
        return memory_decay(d, half_life_days);
    if (double d = memory_elapsed_days(f.created_at, now, known); known)
        return 0.5 * memory_decay(d, half_life_days);
    return 0;
}

/// Recorded heat decayed since the last access, squashed to 0..1 (eight
/// fresh accesses' worth saturates).
inline double normalized_access_heat(const memory_fact_usage* u, memory_clock::time_point now,
                                     double half_life_days) {
    if (!u || !std::isfinite(u->access_heat) || u->access_heat <= 0) return 0;
    bool known = false;
    const double d = memory_elapsed_days(u->last_accessed_at, now, known);
    if (!known) return 0;
    return std::min(1.0, std::log1p(u->access_heat * memory_decay(d, half_life_days)) / std::log(9.0));
}

inline bool is_correction_fact(const memory_fact& f) { return lower(trim(f.category)) == "correction"; }

} // namespace detail

/// Scores one fact under `policy` ("confidence" or "hybrid-v1").
inline memory_fact_score score_memory_fact(const memory_fact& f, std::string_view policy,
                                           const memory_backend_options& o, memory_clock::time_point now,
                                           const memory_fact_usage* usage = nullptr) {
    memory_fact_score s;
    s.confidence = detail::bounded_confidence(f.confidence);
    if (policy != memory_eviction_hybrid_v1) {
        s.value = s.confidence;
        return s;
    }
    s.confirmation_freshness =
        detail::confirmation_freshness(f, now, double(o.eviction_confirmation_half_life_days));
    s.access_heat = detail::normalized_access_heat(usage, now, double(o.eviction_access_half_life_days));
    s.value = o.eviction_confidence_weight * s.confidence +
              o.eviction_confirmation_weight * s.confirmation_freshness +
              o.eviction_access_weight * s.access_heat;
    return s;
}

/// Chooses the `max_facts` facts to keep under `policy`: the best scores,
/// ties in their original order. hybrid-v1 first keeps the best corrections,
/// up to min(eviction_correction_reserved_max, ceil(max_facts ×
/// eviction_correction_reserved_fraction)); slots no correction needs go to
/// the rest.
inline memory_capacity_decision select_facts_for_capacity(const std::vector<memory_fact>& facts,
                                                          std::size_t max_facts, std::string_view policy,
                                                          const memory_backend_options& o,
                                                          memory_clock::time_point now,
                                                          const memory_usage_map* usage = nullptr) {
    memory_capacity_decision d;
    d.scores.reserve(facts.size());
    for (const auto& f : facts) {
        const memory_fact_usage* u = nullptr;
        if (usage)
            if (auto it = usage->find(f.id); it != usage->end()) u = &it->second;
        d.scores.push_back(score_memory_fact(f, policy, o, now, u));
    }
    std::vector<std::size_t> ranked(facts.size());
    std::iota(ranked.begin(), ranked.end(), std::size_t{0});
    std::stable_sort(ranked.begin(), ranked.end(),
                     [&](std::size_t a, std::size_t b) { return d.scores[a].value > d.scores[b].value; });
    std::vector<bool> chosen(facts.size(), false);
    std::size_t taken = 0;
    if (policy == memory_eviction_hybrid_v1 && max_facts > 0) {
        const auto slots = std::min<std::size_t>(
            o.eviction_correction_reserved_max,
            static_cast<std::size_t>(std::ceil(double(max_facts) * o.eviction_correction_reserved_fraction)));
        for (std::size_t i : ranked) {
            if (taken >= std::min(slots, max_facts)) break;
            if (!detail::is_correction_fact(facts[i])) continue;
            chosen[i] = true;
            ++taken;
        }
        d.reserved_correction_slots = taken;
    }
    for (std::size_t i : ranked) {
        if (taken >= max_facts) break;
        if (!chosen[i]) {
            chosen[i] = true;
            ++taken;
        }
    }
    for (std::size_t i : ranked)
        if (chosen[i]) d.kept.push_back(i);
    for (auto it = ranked.rbegin(); it != ranked.rend(); ++it)
        if (!chosen[*it]) d.evicted.push_back(*it);
    return d;
}

} // namespace agentware

#endif
