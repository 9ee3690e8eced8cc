#ifndef AGENTWARE_MEMORY_QUEUE_HPP
#define AGENTWARE_MEMORY_QUEUE_HPP

// DeerMem's update queue (reference §9.1, "Queue") and its background worker.
//
// - One pending item per (thread, user, agent, emergency flag): a new add
//   replaces it (the latest whole conversation wins), unions the signals and
//   moves it to the back.
// - Debounce: every add moves the one deadline to now + debounce; an
//   emergency add (add_nowait, the summarization hook's path) makes it now.
// - Back-pressure: at `max_depth` pending items a new ordinary item without
//   signals is refused (add returns memory_add_result::dropped).
// - The worker thread takes every pending item once the deadline passes and
//   runs them one after the other; add never waits for it, so a run is never
//   held up by memory.
// - flush(timeout) processes everything now and says whether it drained in
//   time; shutdown(timeout) flushes and stops the worker (a worker stuck past
//   the timeout is left to finish on its own, holding only shared state).
//
// The deadline is read from a memory_clock; the worker re-reads it at least
// every `poll` of real time, so a manual clock moved by a test is noticed.
// Without a worker (start_worker = false) nothing runs until run_due() or
// flush() is called: tests drive it step by step.

#include <agentware/memory/clock.hpp>
#include <agentware/memory/updater.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace agentware {

enum class memory_add_result { queued, replaced, dropped };

struct memory_queue_options {
    std::chrono::milliseconds debounce{30000};
    std::size_t max_depth = 1000; ///< 0 = unlimited
    std::chrono::milliseconds between_items{500};
    std::chrono::milliseconds poll{50}; ///< longest real-time sleep before re-reading the clock
    bool start_worker = true;
};

class memory_update_queue {
public:
    /// Runs one item; an exception is recorded (see failures()) and the next item runs.
    using processor = std::function<void(const memory_update_item&)>;

    memory_update_queue(memory_queue_options options, processor process,
                        std::shared_ptr<memory_clock> clock = default_memory_clock())
        : s_(std::make_shared<shared>()) {
        s_->options = options;
        s_->process = std::move(process);
        s_->clock = std::move(clock);
        if (options.start_worker) worker_ = std::thread([s = s_] { worker_loop(*s); });
    }
    ~memory_update_queue() { shutdown(std::chrono::seconds(30)); }
    memory_update_queue(const memory_update_queue&) = delete;
    memory_update_queue& operator=(const memory_update_queue&) = delete;

    /// The ordinary, debounced path.
    memory_add_result add(memory_update_item item) { return enqueue(std::move(item), false); }
    /// The immediate path: not counted against the depth, ignores the watermark, due now.
    memory_add_result add_nowait(memory_update_item item) {
        item.bypass_watermark = true;
        return enqueue(std::move(item), true);
    }

    std::size_t pending() const {
        std::lock_guard lock(s_->mutex);
        return s_->items.size();
    }
    bool processing() const {
        std::lock_guard lock(s_->mutex);
        return s_->processing;
    }

    /// Processes what is due (the deadline passed) on the calling thread. For queues without a worker.
    std::size_t run_due() {
        std::unique_lock lock(s_->mutex);
        if (s_->items.empty() || s_->clock->now() < s_->deadline || s_->processing) return 0;
        return run_batch(*s_, lock, false);
    }

    /// Processes every pending item now; true when the queue drained within `timeout`.
    bool flush(std::chrono::milliseconds timeout) {
        std::unique_lock lock(s_->mutex);
        if (!worker_.joinable()) {
            // No worker: run here (the timeout cannot interrupt a model call).
            while (!s_->items.empty())
                run_batch(*s_, lock, true);
            return true;
        }
        ++s_->flushers;
        s_->wake.notify_all();
        const bool drained =
            s_->idle.wait_for(lock, timeout, [&] { return s_->items.empty() && !s_->processing; });
        --s_->flushers;
        return drained;
    }

    /// Flushes, then stops the worker. Returns whether everything was processed in time.
    bool shutdown(std::chrono::milliseconds timeout) {
        if (stopped_) return true;
        stopped_ = true;
        const bool drained = flush(timeout);
        {
            std::lock_guard lock(s_->mutex);
            s_->stop = true;
        }
        s_->wake.notify_all();
        if (worker_.joinable()) {
            if (drained)
                worker_.join();
            else
                worker_.detach(); // it owns its share of the state
        }
        return drained;
    }

    /// "thread/user/agent: what went wrong" for failed items, oldest first (at most 100 kept).
    std::vector<std::string> failures() const {
        std::lock_guard lock(s_->mutex);
        return {s_->failures.begin(), s_->failures.end()};
    }
    std::vector<std::string> take_failures() {
        std::lock_guard lock(s_->mutex);
        std::vector<std::string> out(s_->failures.begin(), s_->failures.end());
        s_->failures.clear();
        return out;
    }

private:
    struct shared {
        memory_queue_options options;
        processor process;
        std::shared_ptr<memory_clock> clock;
        std::mutex mutex;
        std::condition_variable wake, idle;
        std::deque<memory_update_item> items;
        memory_clock::time_point deadline{};
        bool processing = false;
        bool stop = false;
        int flushers = 0;
        std::deque<std::string> failures;
    };

    memory_add_result enqueue(memory_update_item item, bool emergency) {
        std::lock_guard lock(s_->mutex);
        auto& items = s_->items;
        auto same = std::find_if(items.begin(), items.end(), [&](const memory_update_item& i) {
            return i.thread_id == item.thread_id && i.user_id == item.user_id &&
                   i.agent_name == item.agent_name && i.bypass_watermark == item.bypass_watermark;
        });
        memory_add_result result = memory_add_result::queued;
        if (same != items.end()) {
            for (auto& sig : same->signals)
                if (std::find(item.signals.begin(), item.signals.end(), sig) == item.signals.end())
                    item.signals.push_back(sig);
            items.erase(same);
            result = memory_add_result::replaced;
        } else if (!emergency && item.signals.empty() && s_->options.max_depth > 0 &&
                   items.size() >= s_->options.max_depth) {
            return memory_add_result::dropped;
        }
        items.push_back(std::move(item));
        const auto now = s_->clock->now();
        // A pending emergency item keeps the deadline at "now".
        const bool urgent =
            emergency || std::any_of(items.begin(), items.end(),
                                     [](const memory_update_item& i) { return i.bypass_watermark; });
        s_->deadline = urgent ? now : now + s_->options.debounce;
        s_->wake.notify_all();
        return result;
    }

    // Takes every pending item and runs them with the lock released.
    static std::size_t run_batch(shared& s, std::unique_lock<std::mutex>& lock, bool flushing) {
        std::deque<memory_update_item> batch;
        batch.swap(s.items);
        s.processing = true;
        lock.unlock();
        std::size_t done = 0;
        for (std::size_t i = 0; i < batch.size(); ++i) {
            if (i > 0 && !flushing && s.options.between_items.count() > 0) {
                std::unique_lock pause(s.mutex);
                s.wake.wait_for(pause, s.options.between_items, [&] { return s.stop || s.flushers > 0; });
            }
            try {
                s.process(batch[i]);
                ++done;
            } catch (const std::exception& e) {
                record_failure(s, batch[i], e.what());
            } catch (...) {
                record_failure(s, batch[i], "unknown error");
            }
        }
        lock.lock();
        s.processing = false;
        s.idle.notify_all();
        return done;
    }

    static void record_failure(shared& s, const memory_update_item& item, const std::string& what) {
        std::lock_guard lock(s.mutex);
        s.failures.push_back(item.thread_id + "/" + item.user_id + "/" + item.agent_name + ": " + what);
        while (s.failures.size() > 100)
            s.failures.pop_front();
    }

    static void worker_loop(shared& s) {
        std::unique_lock lock(s.mutex);
        while (true) {
            if (s.stop && s.items.empty()) break;
            const bool due = !s.items.empty() && (s.flushers > 0 || s.stop || s.clock->now() >= s.deadline);
            if (due) {
                run_batch(s, lock, s.flushers > 0 || s.stop);
                continue; // a timer that fired meanwhile: go round once more
            }
            if (s.items.empty())
                s.wake.wait(lock);
            else {
                const auto left = s.deadline - s.clock->now();
                const auto nap = std::min<std::chrono::nanoseconds>(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(left), s.options.poll);
                s.wake.wait_for(lock, std::max<std::chrono::nanoseconds>(nap, std::chrono::nanoseconds(1)));
            }
        }
        s.idle.notify_all();
    }

    std::shared_ptr<shared> s_;
    std::thread worker_;
    bool stopped_ = false;
};

} // namespace agentware

#endif
