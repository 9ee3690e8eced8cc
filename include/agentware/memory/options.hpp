#ifndef AGENTWARE_MEMORY_OPTIONS_HPP
#define AGENTWARE_MEMORY_OPTIONS_HPP

// DeerFlow's `memory:` configuration section (reference §10), with DeerMem's
// private settings under `backend_config` (legacy top-level spellings of
// those are accepted too, as DeerFlow migrates them).

#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentware {

struct memory_backend_options {
    std::string storage_path;           ///< a directory; empty: $AGENTWARE_HOME or ./.agentware
    double debounce_seconds = 30;       ///< 1..300
    std::size_t queue_max_depth = 1000; ///< 0 = unlimited
    boost::json::object model;          ///< the memory model's settings; empty = the run's model
    std::size_t max_facts = 100;        ///< 10..500
    double fact_confidence_threshold = 0.7;
    std::string fact_eviction_policy = "confidence"; ///< or "hybrid-v1"
    /// With "confidence": also work out what hybrid-v1 would evict (reported, not acted on).
    bool fact_eviction_shadow_enabled = false;
    double eviction_confidence_weight = 0.65; ///< hybrid-v1's weights: 0..1 each, summing to 1
    double eviction_confirmation_weight = 0.25;
    double eviction_access_weight = 0.10;
    std::size_t eviction_confirmation_half_life_days = 90; ///< 1..3650
    std::size_t eviction_access_half_life_days = 30;       ///< 1..3650
    double eviction_correction_reserved_fraction = 0.10;   ///< of max_facts, kept for corrections
    std::size_t eviction_correction_reserved_max = 10;     ///< 0..100
    std::size_t max_injection_tokens = 2000;               ///< 100..8000
    std::string token_counting = "tiktoken"; ///< or "char" (both use the character estimate here)
    std::vector<std::string> guaranteed_categories{"correction"};
    std::size_t guaranteed_token_budget = 500;
    bool staleness_review_enabled = true;
    std::size_t staleness_age_days = 90;
    std::size_t staleness_min_candidates = 3;
    std::size_t staleness_max_removals_per_cycle = 10;
    std::vector<std::string> staleness_protected_categories{"correction"};
    double staleness_max_lifetime_multiplier = 20.0;
    std::size_t staleness_max_extension_days = 3650;
    bool consolidation_enabled = false;
    std::size_t consolidation_min_facts = 8;
    std::size_t consolidation_max_groups_per_cycle = 3;
    std::size_t consolidation_max_sources = 8;
    std::size_t watermark_max_keys = 4096;
    std::string retrieval_adapter = "fts5";
    /// Pause between two queued items of one batch (DeerFlow sleeps 0.5 s); a flush skips it.
    double between_items_seconds = 0.5;

    friend bool operator==(const memory_backend_options&, const memory_backend_options&) = default;
};

struct memory_options {
    bool enabled = true;
    std::string mode = "middleware"; ///< or "tool" (then only summaries are injected)
    bool injection_enabled = true;
    double shutdown_flush_timeout_seconds = 30.0;
    std::string manager_class = "deermem"; ///< "deermem" or "noop"
    /// DeerFlow's earlier spelling of the memory model: a name of the
    /// configuration's `models` (unset, null or "": the app's default model).
    /// The lead agent makes it (make_lead_agent); backend_config.model is the
    /// other spelling, and giving both is an error.
    std::optional<std::string> model_name;
    memory_backend_options backend_config;

    static constexpr std::string_view config_section = "memory";
    friend bool operator==(const memory_options&, const memory_options&) = default;
};

namespace detail {

inline void read_backend_key(json_reader& r, std::string_view key, memory_backend_options& b) {
    if (key == "storage_path")
        r.read("storage_path", b.storage_path);
    else if (key == "debounce_seconds")
        r.read("debounce_seconds", b.debounce_seconds);
    else if (key == "queue_max_depth")
        r.read("queue_max_depth", b.queue_max_depth);
    else if (key == "model") {
        const auto* v = r.find("model");
        if (v && !v->is_null()) b.model = json_read_as<boost::json::object>(*v, r.path_of("model"));
    } else if (key == "max_facts")
        r.read("max_facts", b.max_facts);
    else if (key == "fact_confidence_threshold")
        r.read("fact_confidence_threshold", b.fact_confidence_threshold);
    else if (key == "fact_eviction_policy")
        r.read("fact_eviction_policy", b.fact_eviction_policy);
    else if (key == "fact_eviction_shadow_enabled")
        r.read("fact_eviction_shadow_enabled", b.fact_eviction_shadow_enabled);
    else if (key == "eviction_confidence_weight")
        r.read("eviction_confidence_weight", b.eviction_confidence_weight);
    else if (key == "eviction_confirmation_weight")
        r.read("eviction_confirmation_weight", b.eviction_confirmation_weight);
    else if (key == "eviction_access_weight")
        r.read("eviction_access_weight", b.eviction_access_weight);
    else if (key == "eviction_confirmation_half_life_days")
        r.read("eviction_confirmation_half_life_days", b.eviction_confirmation_half_life_days);
    else if (key == "eviction_access_half_life_days")
        r.read("eviction_access_half_life_days", b.eviction_access_half_life_days);
    else if (key == "eviction_correction_reserved_fraction")
        r.read("eviction_correction_reserved_fraction", b.eviction_correction_reserved_fraction);
    else if (key == "eviction_correction_reserved_max")
        r.read("eviction_correction_reserved_max", b.eviction_correction_reserved_max);
    else if (key == "max_injection_tokens")
        r.read("max_injection_tokens", b.max_injection_tokens);
    else if (key == "token_counting")
        r.read("token_counting", b.token_counting);
    else if (key == "guaranteed_categories")
        r.read("guaranteed_categories", b.guaranteed_categories);
    else if (key == "guaranteed_token_budget")
        r.read("guaranteed_token_budget", b.guaranteed_token_budget);
    else if (key == "staleness_review_enabled")
        r.read("staleness_review_enabled", b.staleness_review_enabled);
    else if (key == "staleness_age_days")
        r.read("staleness_age_days", b.staleness_age_days);
    else if (key == "staleness_min_candidates")
        r.read("staleness_min_candidates", b.staleness_min_candidates);
    else if (key == "staleness_max_removals_per_cycle")
        r.read("staleness_max_removals_per_cycle", b.staleness_max_removals_per_cycle);
    else if (key == "staleness_protected_categories")
        r.read("staleness_protected_categories", b.staleness_protected_categories);
    else if (key == "staleness_max_lifetime_multiplier")
        r.read("staleness_max_lifetime_multiplier", b.staleness_max_lifetime_multiplier);
    else if (key == "staleness_max_extension_days")
        r.read("staleness_max_extension_days", b.staleness_max_extension_days);
    else if (key == "consolidation_enabled")
        r.read("consolidation_enabled", b.consolidation_enabled);
    else if (key == "consolidation_min_facts")
        r.read("consolidation_min_facts", b.consolidation_min_facts);
    else if (key == "consolidation_max_groups_per_cycle")
        r.read("consolidation_max_groups_per_cycle", b.consolidation_max_groups_per_cycle);
    else if (key == "consolidation_max_sources")
        r.read("consolidation_max_sources", b.consolidation_max_sources);
    else if (key == "watermark_max_keys")
        r.read("watermark_max_keys", b.watermark_max_keys);
    else if (key == "retrieval_adapter")
        r.read("retrieval_adapter", b.retrieval_adapter);
    else if (key == "between_items_seconds")
        r.read("between_items_seconds", b.between_items_seconds);
}

inline constexpr std::string_view memory_backend_keys[] = {"storage_path",
                                                           "debounce_seconds",
                                                           "queue_max_depth",
                                                           "model",
                                                           "max_facts",
                                                           "fact_confidence_threshold",
                                                           "fact_eviction_policy",
                                                           "fact_eviction_shadow_enabled",
                                                           "eviction_confidence_weight",
                                                           "eviction_confirmation_weight",
                                                           "eviction_access_weight",
                                                           "eviction_confirmation_half_life_days",
                                                           "eviction_access_half_life_days",
                                                           "eviction_correction_reserved_fraction",
                                                           "eviction_correction_reserved_max",
                                                           "max_injection_tokens",
                                                           "token_counting",
                                                           "guaranteed_categories",
                                                           "guaranteed_token_budget",
                                                           "staleness_review_enabled",
                                                           "staleness_age_days",
                                                           "staleness_min_candidates",
                                                           "staleness_max_removals_per_cycle",
                                                           "staleness_protected_categories",
                                                           "staleness_max_lifetime_multiplier",
                                                           "staleness_max_extension_days",
                                                           "consolidation_enabled",
                                                           "consolidation_min_facts",
                                                           "consolidation_max_groups_per_cycle",
                                                           "consolidation_max_sources",
                                                           "watermark_max_keys",
                                                           "retrieval_adapter",
                                                           "between_items_seconds"};

inline void check_memory_range(const json_reader& r, std::string_view key, double v, double lo, double hi) {
    if (v < lo || v > hi)
        throw json_error(r.path_of(key), detail::format("expected a value from {} to {}, got {}", lo, hi, v));
}

} // namespace detail

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const memory_backend_options& b) {
    boost::json::array guaranteed, protected_;
    for (const auto& c : b.guaranteed_categories)
        guaranteed.emplace_back(c);
    for (const auto& c : b.staleness_protected_categories)
        protected_.emplace_back(c);
    jv = boost::json::object{
        {"storage_path", b.storage_path},
        {"debounce_seconds", b.debounce_seconds},
        {"queue_max_depth", b.queue_max_depth},
        {"model", b.model},
        {"max_facts", b.max_facts},
        {"fact_confidence_threshold", b.fact_confidence_threshold},
        {"fact_eviction_policy", b.fact_eviction_policy},
        {"fact_eviction_shadow_enabled", b.fact_eviction_shadow_enabled},
        {"eviction_confidence_weight", b.eviction_confidence_weight},
        {"eviction_confirmation_weight", b.eviction_confirmation_weight},
        {"eviction_access_weight", b.eviction_access_weight},
        {"eviction_confirmation_half_life_days", b.eviction_confirmation_half_life_days},
        {"eviction_access_half_life_days", b.eviction_access_half_life_days},
        {"eviction_correction_reserved_fraction", b.eviction_correction_reserved_fraction},
        {"eviction_correction_reserved_max", b.eviction_correction_reserved_max},
        {"max_injection_tokens", b.max_injection_tokens},
        {"token_counting", b.token_counting},
        {"guaranteed_categories", std::move(guaranteed)},
        {"guaranteed_token_budget", b.guaranteed_token_budget},
        {"staleness_review_enabled", b.staleness_review_enabled},
        {"staleness_age_days", b.staleness_age_days},
        {"staleness_min_candidates", b.staleness_min_candidates},
        {"staleness_max_removals_per_cycle", b.staleness_max_removals_per_cycle},
        {"staleness_protected_categories", std::move(protected_)},
        {"staleness_max_lifetime_multiplier", b.staleness_max_lifetime_multiplier},
        {"staleness_max_extension_days", b.staleness_max_extension_days},
        {"consolidation_enabled", b.consolidation_enabled},
        {"consolidation_min_facts", b.consolidation_min_facts},
        {"consolidation_max_groups_per_cycle", b.consolidation_max_groups_per_cycle},
        {"consolidation_max_sources", b.consolidation_max_sources},
        {"watermark_max_keys", b.watermark_max_keys},
        {"retrieval_adapter", b.retrieval_adapter},
        {"between_items_seconds", b.between_items_seconds}};
}

inline memory_backend_options tag_invoke(boost::json::value_to_tag<memory_backend_options>,
                                         const boost::json::value& jv) {
    json_reader r(jv);
    memory_backend_options b;
    for (auto key : detail::memory_backend_keys)
        detail::read_backend_key(r, key, b);
    r.reject_unknown_keys();
    detail::check_memory_range(r, "debounce_seconds", b.debounce_seconds, 1, 300);
    detail::check_memory_range(r, "max_facts", double(b.max_facts), 10, 500);
    detail::check_memory_range(r, "max_injection_tokens", double(b.max_injection_tokens), 100, 8000);
    detail::check_memory_range(r, "fact_confidence_threshold", b.fact_confidence_threshold, 0, 1);
    detail::check_memory_range(r, "between_items_seconds", b.between_items_seconds, 0, 60);
    json_check_choice(r.path_of("fact_eviction_policy"), b.fact_eviction_policy, {"confidence", "hybrid-v1"});
    detail::check_memory_range(r, "eviction_confidence_weight", b.eviction_confidence_weight, 0, 1);
    detail::check_memory_range(r, "eviction_confirmation_weight", b.eviction_confirmation_weight, 0, 1);
    detail::check_memory_range(r, "eviction_access_weight", b.eviction_access_weight, 0, 1);
    if (const double sum =
            b.eviction_confidence_weight + b.eviction_confirmation_weight + b.eviction_access_weight;
        std::abs(sum - 1.0) > 1e-6)
        throw json_error(
            r.path_of("eviction_confidence_weight"),
            detail::format("the three eviction weights (confidence, confirmation, access) must add up "
                           "to 1, they add up to {:g}",
                           sum));
    detail::check_memory_range(r, "eviction_confirmation_half_life_days",
                               double(b.eviction_confirmation_half_life_days), 1, 3650);
    detail::check_memory_range(r, "eviction_access_half_life_days", double(b.eviction_access_half_life_days),
                               1, 3650);
    detail::check_memory_range(r, "eviction_correction_reserved_fraction",
                               b.eviction_correction_reserved_fraction, 0, 1);
    detail::check_memory_range(r, "eviction_correction_reserved_max",
                               double(b.eviction_correction_reserved_max), 0, 100);
    json_check_choice(r.path_of("token_counting"), b.token_counting, {"tiktoken", "char"});
    return b;
}

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const memory_options& o) {
    jv = boost::json::object{{"enabled", o.enabled},
                             {"mode", o.mode},
                             {"injection_enabled", o.injection_enabled},
                             {"shutdown_flush_timeout_seconds", o.shutdown_flush_timeout_seconds},
                             {"manager_class", o.manager_class},
                             {"backend_config", boost::json::value_from(o.backend_config)}};
    if (o.model_name) jv.as_object()["model_name"] = *o.model_name;
}

/// Reads DeerFlow's `memory:` section; a bad value is a json_error naming
/// its key (`memory.backend_config.max_facts: expected a value from 10 to 500, got 5`).
inline memory_options tag_invoke(boost::json::value_to_tag<memory_options>, const boost::json::value& jv) {
    json_reader r(jv, std::string(memory_options::config_section));
    memory_options o;
    r.read("enabled", o.enabled)
        .read("mode", o.mode)
        .read("injection_enabled", o.injection_enabled)
        .read("shutdown_flush_timeout_seconds", o.shutdown_flush_timeout_seconds)
        .read("manager_class", o.manager_class);
    json_check_choice(r.path_of("mode"), o.mode, {"middleware", "tool"});
    json_check_choice(r.path_of("manager_class"), o.manager_class, {"deermem", "noop"});
    if (o.shutdown_flush_timeout_seconds < 0)
        throw json_error(r.path_of("shutdown_flush_timeout_seconds"), "expected a non-negative number");
    // DeerFlow's earlier top-level `model_name` (its shipped files set it to null).
    if (const auto* v = r.find("model_name"); v && !v->is_null())
        if (auto name = json_read_as<std::string>(*v, r.path_of("model_name")); !name.empty())
            o.model_name = std::move(name);
    // Legacy spelling: backend keys at the top level, merged under backend_config.
    boost::json::object backend;
    if (const auto* b = r.find("backend_config"); b && !b->is_null())
        backend = json_read_as<boost::json::object>(*b, r.path_of("backend_config"));
    for (auto key : detail::memory_backend_keys)
        if (const auto* v = r.find(key); v && !backend.contains(key)) backend[key] = *v;
    r.reject_unknown_keys();
    try {
        o.backend_config =
            boost::json::value_to<memory_backend_options>(boost::json::value(std::move(backend)));
    } catch (const json_error& e) {
        throw e.within(r.path_of("backend_config"));
    }
    if (o.model_name && !o.backend_config.model.empty())
        throw json_error(r.path_of("model_name"),
                         "the memory model is also given by backend_config.model; keep one of them");
    return o;
}

} // namespace agentware

#endif
