#ifndef AGENTWARE_MEMORY_CLOCK_HPP
#define AGENTWARE_MEMORY_CLOCK_HPP

// The time the memory subsystem sees: the debounce deadline of the update
// queue, the `createdAt`/`updatedAt` stamps it writes and the date that
// dynamic_context reminds the model of. Tests and the replay hand in a
// manual_clock, so nothing in them waits for real time to pass.

#include <agentware/detail/iso_time.hpp> // the stamps it writes, as text

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

} // namespace agentware

#endif
