// model/retry.hpp: the backoff between a model client's attempts, and the Retry-After forms.
#include <agentware/model/retry.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <random>

using namespace agentware;
using namespace std::chrono_literals;

TEST_CASE("retry policy: backoff grows, is capped and jittered, Retry-After forms", "[retry]") {
    retry_policy p;
    p.initial_backoff = 100ms;
    p.max_backoff = 1000ms;
    p.jitter = 0.5;
    std::minstd_rand rng(1);
    for (int i = 0; i < 50; ++i) {
        const auto d0 = p.backoff(0, rng), d3 = p.backoff(3, rng), d9 = p.backoff(9, rng);
        CHECK((d0 >= 50ms && d0 <= 100ms));
        CHECK((d3 >= 400ms && d3 <= 800ms));
        CHECK((d9 >= 500ms && d9 <= 1000ms));
    }
    CHECK(detail::parse_retry_after("2") == std::chrono::milliseconds(2000));
    CHECK(detail::parse_retry_after(" 0.25 ") == std::chrono::milliseconds(250));
    CHECK(detail::parse_retry_after("0") == std::chrono::milliseconds(0));
    CHECK(detail::parse_retry_after("150", true) == std::chrono::milliseconds(150));
    CHECK(detail::parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") ==
          std::chrono::milliseconds(0)); // in the past
    CHECK_FALSE(detail::parse_retry_after("soon"));
    CHECK_FALSE(detail::parse_retry_after("-1"));
}
