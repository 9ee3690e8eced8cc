#ifndef AGENTWARE_DETAIL_ISO_TIME_HPP
#define AGENTWARE_DETAIL_ISO_TIME_HPP

// UTC times as text, in the ISO 8601 forms DeerFlow stamps its records with
// (memory facts, the delegation ledger, dates shown to the model).

#include <agentware/detail/format.hpp>

#include <fmt/chrono.h>
#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

namespace agentware {

namespace detail {

/// "2026-11-23T09:00:00Z" (UTC, whole seconds), the form DeerMem stamps facts with.
inline std::string iso_utc(std::chrono::system_clock::time_point t) {
    return detail::format("{:%Y-%m-%dT%H:%M:%S}Z", std::chrono::time_point_cast<std::chrono::seconds>(t));
}

/// "2026-11-23" (UTC).
inline std::string iso_date(std::chrono::system_clock::time_point t) {
    return detail::format("{:%Y-%m-%d}", std::chrono::time_point_cast<std::chrono::seconds>(t));
}

/// Reads "YYYY-MM-DDTHH:MM:SS[.fff][Z|+00:00]" (UTC); nullopt-like false when malformed.
inline bool parse_iso_utc(std::string_view s, std::chrono::system_clock::time_point& out) {
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
    if (s.size() < 19 || std::sscanf(std::string(s.substr(0, 19)).c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo,
                                     &d, &h, &mi, &sec) != 6)
        return false;
    const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{unsigned(mo)},
                                          std::chrono::day{unsigned(d)}};
    if (!ymd.ok()) return false;
    out = std::chrono::sys_days(ymd) + std::chrono::hours(h) + std::chrono::minutes(mi) +
          std::chrono::seconds(sec);
    return true;
}

} // namespace detail

} // namespace agentware

#endif
