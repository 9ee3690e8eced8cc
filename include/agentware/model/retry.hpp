#ifndef AGENTWARE_MODEL_RETRY_HPP
#define AGENTWARE_MODEL_RETRY_HPP

// When and how long a model client waits before trying a failed call again.

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <optional>
#include <random>
#include <string>
#include <string_view>

namespace agentware {

/// Exponential backoff with jitter for retryable failures (connection errors,
/// timeouts, 408, 409, 429, 5xx). A server's Retry-After replaces the computed
/// delay; one longer than `max_retry_after` ends the retries instead.
struct retry_policy {
    int max_retries = 3; ///< retries after the first attempt; 0 disables them
    std::chrono::milliseconds initial_backoff{500};
    std::chrono::milliseconds max_backoff{20000};
    double multiplier = 2.0;
    double jitter = 0.25; ///< each delay is scaled by a random factor in [1 - jitter, 1]
    std::chrono::milliseconds max_retry_after{60000};
    /// Scale by [1 - jitter, 1 + jitter] instead of [1 - jitter, 1] (LangChain's retry middlewares).
    bool symmetric_jitter = false;

    static retry_policy none() {
        retry_policy p;
        p.max_retries = 0;
        return p;
    }

    /// The delay before retry number `retry` (0 for the first retry).
    template <class Rng>
    std::chrono::milliseconds backoff(int retry, Rng& rng) const {
        const double base = static_cast<double>(initial_backoff.count()) * std::pow(multiplier, retry);
        const double capped = std::min(base, static_cast<double>(max_backoff.count()));
        const double j = std::clamp(jitter, 0.0, 1.0);
        std::uniform_real_distribution<double> factor(1.0 - j, symmetric_jitter ? 1.0 + j : 1.0);
        return std::chrono::milliseconds(static_cast<std::int64_t>(capped * factor(rng)));
    }
};

/// Decorrelated jitter (the "AWS" variant): the next delay is drawn uniformly
/// from [base, min(cap, max(base, 3 * previous))], whole milliseconds. The
/// window is clamped before drawing, so delays do not pile up at the cap, and
/// callers failing together spread out instead of retrying in lockstep.
/// `previous` is the delay drawn last time (the base before the first retry).
template <class Rng>
std::chrono::milliseconds decorrelated_jitter(std::chrono::milliseconds base, std::chrono::milliseconds cap,
                                              std::chrono::milliseconds previous, Rng& rng) {
    const std::int64_t low = std::max<std::int64_t>(0, base.count());
    const std::int64_t high =
        std::max(low, std::min<std::int64_t>(cap.count(), std::max(low, previous.count() * 3)));
    std::uniform_int_distribution<std::int64_t> pick(low, high);
    return std::chrono::milliseconds(std::min<std::int64_t>(pick(rng), std::max(low, cap.count())));
}

namespace detail {

/// Reads a Retry-After value: delta seconds (fractions accepted, which some
/// gateways send) or an HTTP date. Also used for OpenAI's "retry-after-ms".
inline std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value,
                                                                  bool milliseconds = false) {
    while (!value.empty() && value.front() == ' ')
        value.remove_prefix(1);
    while (!value.empty() && value.back() == ' ')
        value.remove_suffix(1);
    if (value.empty()) return std::nullopt;
    if ((value.front() >= '0' && value.front() <= '9') || value.front() == '.') {
        double amount = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), amount);
        if (ec != std::errc{} || end != value.data() + value.size() || !(amount >= 0) || amount > 1e9)
            return std::nullopt;
        return std::chrono::milliseconds(static_cast<std::int64_t>(milliseconds ? amount : amount * 1000.0));
    }
    if (milliseconds) return std::nullopt;
    // IMF-fixdate, e.g. "Wed, 21 Oct 2015 07:28:00 GMT".
    std::tm tm{};
    char month[4] = {};
    char weekday[4] = {};
    int day = 0, year = 0, hour = 0, minute = 0, second = 0;
    const std::string text(value);
    if (std::sscanf(text.c_str(), "%3s, %d %3s %d %d:%d:%d GMT", weekday, &day, month, &year, &hour, &minute,
                    &second) != 7)
        return std::nullopt;
    static constexpr std::string_view months = "JanFebMarAprMayJunJulAugSepOctNovDec";
    const std::size_t m = months.find(month);
    if (m == std::string_view::npos || m % 3 != 0) return std::nullopt;
    tm.tm_year = year - 1900;
    tm.tm_mon = static_cast<int>(m / 3);
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    const std::time_t when = timegm(&tm);
    const std::time_t now = std::time(nullptr);
    return std::chrono::milliseconds(when > now ? static_cast<std::int64_t>(when - now) * 1000 : 0);
}

} // namespace detail

} // namespace agentware

#endif
