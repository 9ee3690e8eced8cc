// The `memory:` section in JSON, the eviction settings included; bad keys and values named.
#include <agentware/memory/options.hpp>

#include "../support/json_errors.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <string>
#include <string_view>

using namespace agentware;
using namespace std::chrono_literals;
using dftest::temp_dir;
using namespace memory_test;

TEST_CASE("the memory section reads from JSON and names a bad key", "[memory]") {
    auto read = [](std::string_view text) {
        return boost::json::value_to<memory_options>(boost::json::parse(text));
    };
    auto o = read(R"({"enabled": true, "injection_enabled": false,
                      "backend_config": {"debounce_seconds": 5, "max_facts": 50, "storage_path": "/tmp/m"}})");
    CHECK(!o.injection_enabled);
    CHECK(o.backend_config.debounce_seconds == 5);
    CHECK(o.backend_config.max_facts == 50);
    CHECK(read(R"({"max_facts": 20})").backend_config.max_facts == 20); // legacy top-level key
    const auto error = test_support::read_error<memory_options>;
    CHECK(error(R"({"backend_config": {"max_facts": 5}})") ==
          "memory.backend_config.max_facts: expected a value from 10 to 500, got 5");
    CHECK(error(R"({"backend_config": {"debounce_seconds": "x"}})") ==
          "memory.backend_config.debounce_seconds: expected a number, got \"x\"");
    CHECK(error(R"({"mode": "both"})") == "memory.mode: expected \"middleware\" or \"tool\", got \"both\"");
    CHECK(
        error(R"({"backend_config": {"bogus": 1}})").starts_with("memory.backend_config.bogus: unknown key"));
    CHECK(error(R"({"injection_enabled": 3})") == "memory.injection_enabled: expected true or false, got 3");
    auto round = boost::json::value_to<memory_options>(boost::json::value_from(o));
    CHECK(round == o);
}

TEST_CASE("memory.model_name, DeerFlow's earlier spelling of the memory model", "[memory]") {
    auto read = [](std::string_view text) {
        return boost::json::value_to<memory_options>(boost::json::parse(text));
    };
    CHECK_FALSE(read(R"({})").model_name);
    CHECK_FALSE(read(R"({"model_name": null})").model_name); // DeerFlow's shipped files
    CHECK_FALSE(read(R"({"model_name": ""})").model_name);
    const auto o = read(R"({"model_name": "helper"})");
    CHECK(o.model_name == std::optional<std::string>("helper"));
    CHECK(boost::json::value_to<memory_options>(boost::json::value_from(o)) == o);
    const auto error = test_support::read_error<memory_options>;
    CHECK(error(R"({"model_name": 3})") == "memory.model_name: expected a string, got 3");
    CHECK(error(R"({"model_name": "a", "backend_config": {"model": {"model_name": "b"}}})") ==
          "memory.model_name: the memory model is also given by backend_config.model; keep one of them");
}

TEST_CASE("the eviction settings read from JSON and a bad one names its key", "[memory]") {
    auto read = [](std::string_view text) {
        return boost::json::value_to<memory_options>(boost::json::parse(text));
    };
    const auto error = test_support::read_error<memory_options>;
    const auto o =
        read(R"({"backend_config": {"fact_eviction_policy": "hybrid-v1", "fact_eviction_shadow_enabled": true,
        "eviction_confidence_weight": 0.5, "eviction_confirmation_weight": 0.3, "eviction_access_weight": 0.2,
        "eviction_confirmation_half_life_days": 60, "eviction_access_half_life_days": 14,
        "eviction_correction_reserved_fraction": 0.2, "eviction_correction_reserved_max": 4}})");
    const auto& b = o.backend_config;
    CHECK(b.fact_eviction_policy == "hybrid-v1");
    CHECK(b.fact_eviction_shadow_enabled);
    CHECK(b.eviction_confirmation_weight == Approx(0.3));
    CHECK(b.eviction_access_half_life_days == 14);
    CHECK(b.eviction_correction_reserved_max == 4);
    CHECK(boost::json::value_to<memory_options>(boost::json::value_from(o)) == o);
    CHECK(read(R"({"fact_eviction_policy": "hybrid-v1"})").backend_config.fact_eviction_policy ==
          "hybrid-v1"); // legacy top-level spelling
    const memory_backend_options defaults;
    CHECK(defaults.fact_eviction_policy == "confidence");
    CHECK_FALSE(defaults.fact_eviction_shadow_enabled);
    CHECK(defaults.eviction_confidence_weight + defaults.eviction_confirmation_weight +
              defaults.eviction_access_weight ==
          Approx(1.0));
    CHECK(
        error(R"({"backend_config": {"fact_eviction_policy": "lru"}})") ==
        "memory.backend_config.fact_eviction_policy: expected \"confidence\" or \"hybrid-v1\", got \"lru\"");
    CHECK(error(R"({"backend_config": {"eviction_access_weight": 1.5}})") ==
          "memory.backend_config.eviction_access_weight: expected a value from 0 to 1, got 1.5");
    CHECK(error(R"({"backend_config": {"eviction_confidence_weight": 0.7}})") ==
          "memory.backend_config.eviction_confidence_weight: the three eviction weights (confidence, "
          "confirmation, access) must add up to 1, they add up to 1.05");
    CHECK(error(R"({"backend_config": {"eviction_access_half_life_days": 0}})") ==
          "memory.backend_config.eviction_access_half_life_days: expected a value from 1 to 3650, got 0");
    CHECK(error(R"({"backend_config": {"fact_eviction_shadow_enabled": "yes"}})") ==
          "memory.backend_config.fact_eviction_shadow_enabled: expected true or false, got \"yes\"");
}
