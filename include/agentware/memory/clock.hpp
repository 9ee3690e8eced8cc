#ifndef AGENTWARE_MEMORY_CLOCK_HPP
#define AGENTWARE_MEMORY_CLOCK_HPP

// The time the memory subsystem sees: the debounce deadline of the update
// queue, the `createdAt`/`updatedAt` stamps it writes and the date that
// dynamic_context reminds the model of. Tests and the replay hand in a
// manual_clock, so nothing in them waits for real time to pass.

#include <agentware/detail/format.hpp>

#include <fmt/chrono.h>
#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace agentware {

class memory_clock {
public:
    using time_point = std::chrono::system_clock::time_point;
    virtual ~memory_clock() = default;
    virtual time_point now() const = 0;
};

/// The real wall clock.
class system_memory_clock final : public memory_clock {
public:
    time_point now() const override { return std::chrono::system_clock::now(); }
};

/// A clock that moves only when told to (thread-safe).
class manual_clock final : public memory_clock {
public:
    explicit manual_clock(time_point start = time_point{}) : now_(start) {}
    time_point now() const override {
        std::lock_guard lock(mutex_);
        return now_;
    }
    void set(time_point t) {
        std::lock_guard lock(mutex_);
        now_ = t;
    }
    void advance(std::chrono::system_clock::duration d) {
        std::lock_guard lock(mutex_);
        now_ += d;
    }

private:
    mutable std::mutex mutex_;
    time_point now_;
};

inline std::shared_ptr<memory_clock> default_memory_clock() {
    static const auto clock = std::make_shared<system_memory_clock>();
    return clock;
}

namespace detail {

/// "2026-11-23T09:00:00Z" (UTC, whole seconds), the form DeerMem stamps facts with.
inline std::string iso_utc(memory_clock::time_point t) {
    return detail::format("{:%Y-%m-%dT%H:%M:%S}Z", std::chrono::time_point_cast<std::chrono::seconds>(t));
}

/// "2026-11-23" (UTC).
inline std::string iso_date(memory_clock::time_point t) {
    return detail::format("{:%Y-%m-%d}", std::chrono::time_point_cast<std::chrono::seconds>(t));
}

/// Reads "YYYY-MM-DDTHH:MM:SS[.fff][Z|+00:00]" (UTC); nullopt-like false when malformed.
inline bool parse_iso_utc(std::string_view s, memory_clock::time_point& out) {
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
