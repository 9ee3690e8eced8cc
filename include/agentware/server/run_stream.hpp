#ifndef AGENTWARE_SERVER_RUN_STREAM_HPP
#define AGENTWARE_SERVER_RUN_STREAM_HPP

// A run's events, kept for the run's life (and a while after) so that any
// number of clients can follow it: a stream started with the run, a join
// later, a reconnect with Last-Event-ID. A reader that has seen everything
// parks an Asio timer here; a new event cancels it, on the reader's own
// executor, so the wake-up is never lost between a reader's check and its wait.

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace agentware::server {

/// One SSE event: its name (`values`, `updates|tools:call_1`, ...), its data
/// (one line of JSON) and its id (the count of events before it in the run).
struct stream_event {
    std::string name;
    std::string data;
    std::size_t id = 0;
};

class run_stream {
public:
    explicit run_stream(std::size_t max_events = 100000) : max_events_(max_events) {}

    void publish(std::string name, std::string data) {
        std::vector<std::shared_ptr<boost::asio::steady_timer>> wake;
        {
            std::lock_guard lock(mutex_);
            if (closed_) return;
            const std::size_t id = first_id_ + events_.size();
            events_.push_back({std::move(name), std::move(data), id});
            if (mirror_) mirror_(events_.back()); // in id order: under the lock
            if (events_.size() > max_events_) {   // the oldest go: a reader behind them hears of a gap
                events_.erase(events_.begin());
                ++first_id_;
            }
            wake.swap(waiters_);
        }
        notify(wake);
    }
    /// Hands every event published from now on to `m` too, in order (under
    /// the stream's lock: `m` must only queue it). Null: no more.
    void mirror(std::function<void(const stream_event&)> m) {
        std::lock_guard lock(mutex_);
        mirror_ = std::move(m);
    }

    /// Starts the stream at `id` when it holds no event from there on: a
    /// follower whose source dropped the events before `id`. The readers
    /// behind hear of a gap.
    void skip_to(std::size_t id) {
        std::vector<std::shared_ptr<boost::asio::steady_timer>> wake;
        {
            std::lock_guard lock(mutex_);
            if (id <= first_id_ + events_.size()) return;
            events_.clear();
            first_id_ = id;
            wake.swap(waiters_);
        }
        notify(wake);
    }

    /// No more events: readers end once they have read the last.
    void close() {
        std::vector<std::shared_ptr<boost::asio::steady_timer>> wake;
        {
            std::lock_guard lock(mutex_);
            closed_ = true;
            closed_at_ = std::chrono::steady_clock::now();
            wake.swap(waiters_);
        }
        notify(wake);
    }
    bool closed() const {
        std::lock_guard lock(mutex_);
        return closed_;
    }
    std::chrono::steady_clock::time_point closed_at() const {
        std::lock_guard lock(mutex_);
        return closed_at_;
    }

    /// The events from id `from` on (appended to `out`); the next id to read
    /// is returned. `gap` is set when events before it were dropped.
    std::size_t read(std::size_t from, std::vector<stream_event>& out, bool& done, bool& gap) const {
        std::lock_guard lock(mutex_);
        gap = from < first_id_;
        if (gap) from = first_id_;
        for (std::size_t i = from - first_id_; i < events_.size(); ++i)
            out.push_back(events_[i]);
        done = closed_;
        // A reader ahead of the events (a follower's stream still filling) stays where it asked.
        return std::max(from, first_id_ + events_.size());
    }
    /// The number of events so far.
    std::size_t size() const {
        std::lock_guard lock(mutex_);
        return first_id_ + events_.size();
    }

    /// Parks `timer` until an event past `seen` or the close: false (and
    /// nothing parked) when there already is one.
    bool wait(std::size_t seen, const std::shared_ptr<boost::asio::steady_timer>& timer) {
        std::lock_guard lock(mutex_);
        if (closed_ || first_id_ + events_.size() > seen) return false;
        waiters_.push_back(timer);
        return true;
    }

    /// What runs.wait and join answer once the run ended: the final values,
    /// {"__interrupt__": [...]} or {"__error__": {...}}.
    void set_outcome(std::string json) {
        std::lock_guard lock(mutex_);
        outcome_ = std::move(json);
    }
    std::string outcome() const {
        std::lock_guard lock(mutex_);
        return outcome_;
    }

    /// Readers (SSE clients) now following; the server caps them per run.
    std::size_t& readers() { return readers_; }
    std::mutex& readers_mutex() { return readers_mutex_; }

private:
    static void notify(std::vector<std::shared_ptr<boost::asio::steady_timer>>& wake) {
        for (auto& t : wake)
            boost::asio::post(t->get_executor(), [t] { t->cancel(); });
    }

    mutable std::mutex mutex_;
    std::vector<stream_event> events_;
    std::size_t first_id_ = 0;
    std::size_t max_events_;
    bool closed_ = false;
    std::chrono::steady_clock::time_point closed_at_;
    std::vector<std::shared_ptr<boost::asio::steady_timer>> waiters_;
    std::function<void(const stream_event&)> mirror_;
    std::string outcome_ = "null";
    std::mutex readers_mutex_;
    std::size_t readers_ = 0;
};

} // namespace agentware::server

#endif
