#ifndef AGENTWARE_SERVER_DETAIL_RUN_QUEUE_WORKER_HPP
#define AGENTWARE_SERVER_DETAIL_RUN_QUEUE_WORKER_HPP

// The run manager's side of a run queue shared by several processes: runs
// created into the queue (and executed here when the thread is free), the
// worker that claims the others, the renewal of each run's lease, the reaper
// of runs whose process died, and the streams of runs another process executes.
//
// Every coroutine here counts itself in `loops_` until it ends, so that a
// shutdown waits for it; each ends soon after `stopping_` (a run's lease
// keeper: once its run has ended or gone back to the queue).

#include <agentware/server/run_manager.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>

namespace agentware::server {

inline boost::asio::awaitable<bool> run_manager::pause(std::chrono::milliseconds d) {
    boost::asio::steady_timer wait(ex_);
    const auto until = std::chrono::steady_clock::now() + d;
    for (;;) {
        {
            std::lock_guard lock(mutex_);
            if (stopping_) co_return false;
        }
        const auto now = std::chrono::steady_clock::now();
        if (now >= until) co_return true;
        wait.expires_after(
            std::min<std::chrono::steady_clock::duration>(std::chrono::milliseconds(50), until - now));
        co_await wait.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    }
}

inline boost::asio::awaitable<std::variant<boost::json::object, run_refused>>
run_manager::create_queued(boost::json::object run, std::shared_ptr<live_run> live, std::string strategy) {
    const std::string run_id = detail::string_or(run, "run_id", "");
    const std::string thread_id = detail::string_or(run, "thread_id", "");
    const std::string assistant_id = detail::string_or(run, "assistant_id", "");
    bool claim = false;
    {
        std::lock_guard lock(mutex_);
        if (stopping_) co_return run_refused{503, shutting_down};
        prune_finished(); // the runs over for longer than keep_streams go
        ++creating_;
        // Room here: the run is this process's at once when its thread is free
        // (the room is held until the queue answers).
        claim = active_ < std::max<std::size_t>(1, options_.max_active_runs);
        if (claim) ++active_;
    }
    queued_run q;
    std::exception_ptr failed;
    bool busy = false;
    const auto asked = std::chrono::steady_clock::now();
    try {
        q = co_await options_.queue->create(run_id, thread_id, assistant_id, run, strategy, std::nullopt,
                                            claim);
    } catch (const server::thread_busy&) {
        busy = true;
    } catch (...) {
        failed = std::current_exception();
    }
    const bool mine = !busy && !failed && q.status == "running";
    {
        std::lock_guard lock(mutex_);
        --creating_;
        if (claim && !mine) --active_;
        if (!busy && !failed) {
            live->record = run;
            live->record["status"] = q.status;
            live->attempt = std::max(1, q.attempt);
            live_[run_id] = live;
            if (mine) {
                live->started = true;
                live->lease_until = asked + options_.queue->lease();
                if (stopping_) {
                    live->draining = true;
                    live->stop.request_stop();
                }
            } else {
                ++loops_;
            }
        }
    }
    if (failed) std::rethrow_exception(failed);
    if (busy) co_return run_refused{422, thread_taken};
    if (mine) {
        boost::asio::co_spawn(ex_, execute(live), boost::asio::detached);
    } else {
        // Queued behind the thread's run, or no room here: whichever worker
        // is free takes it; until one here does, its stream follows it.
        wake_ = true;
        boost::asio::co_spawn(ex_, watch_elsewhere(live), boost::asio::detached);
    }
    run["status"] = q.status;
    co_return run;
}

inline void run_manager::start_claimed(queued_run q, std::chrono::steady_clock::time_point claimed_at) {
    std::shared_ptr<live_run> r;
    {
        std::lock_guard lock(mutex_);
        prune_finished();
        auto it = live_.find(q.run_id);
        if (it != live_.end() && !it->second->started && !it->second->finished) {
            r = it->second; // created or followed here: its stream goes on
        } else {
            r = std::make_shared<live_run>();
            live_[q.run_id] = r;
        }
        r->record = std::move(q.record);
        r->record["status"] = "running";
        r->spec = find_assistant(q.assistant_id);
        if (const auto* k = detail::find(r->record, "kwargs"); k && k->is_object()) {
            if (const auto* s = k->get_object().if_contains("strict_resume"); s && s->is_bool())
                r->strict_resume = s->get_bool();
            // after_seconds, asked of whichever process created the run.
            if (const auto* a = k->get_object().if_contains("run_after_ms"); a && a->is_int64()) {
                const auto wait = std::chrono::milliseconds(a->get_int64()) -
                                  std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::system_clock::now().time_since_epoch());
                if (wait.count() > 0) r->not_before = std::chrono::steady_clock::now() + wait;
            }
        }
        r->attempt = std::max(1, q.attempt);
        r->started = true;
        r->lease_until = claimed_at + options_.queue->lease();
        ++active_;
        if (q.cancel_action) {
            r->cancel_action = *q.cancel_action;
            r->stop.request_stop();
        }
        if (stopping_) {
            r->draining = true;
            r->stop.request_stop();
        }
    }
    boost::asio::co_spawn(ex_, execute(r), boost::asio::detached);
}

inline boost::asio::awaitable<void> run_manager::claim_loop() {
    auto next_look = std::chrono::steady_clock::now();
    for (;;) {
        if (wake_.exchange(false) || std::chrono::steady_clock::now() >= next_look) {
            // Announcements can be missed (a reconnection): look every second anyway.
            next_look = std::chrono::steady_clock::now() + std::chrono::seconds(1);
            try {
                for (;;) {
                    {
                        std::lock_guard lock(mutex_);
                        if (stopping_ || active_ >= std::max<std::size_t>(1, options_.max_active_runs)) break;
                    }
                    const auto asked = std::chrono::steady_clock::now();
                    auto q = co_await options_.queue->claim();
                    if (!q) break;
                    start_claimed(std::move(*q), asked);
                }
            } catch (const std::exception& e) {
                if (options_.log) options_.log(agentware::detail::format("cannot claim runs: {}", e.what()));
            }
        }
        const bool going_on = co_await pause(std::chrono::milliseconds(50));
        if (!going_on) break;
    }
    std::lock_guard lock(mutex_);
    --loops_;
}

inline boost::asio::awaitable<void> run_manager::reap_loop() {
    const auto every =
        std::max<std::chrono::milliseconds>(options_.queue->grace() / 2, std::chrono::milliseconds(100));
    auto next_prune = std::chrono::steady_clock::now();
    for (;;) {
        const bool going_on = co_await pause(every);
        if (!going_on) break;
        try {
            // The events of runs over for longer than a join may come for them.
            if (options_.events != nullptr && std::chrono::steady_clock::now() >= next_prune) {
                next_prune = std::chrono::steady_clock::now() + std::chrono::minutes(1);
                co_await options_.events->prune(options_.keep_streams);
            }
            auto reaped = co_await options_.queue->reap();
            for (auto& [run_id, status] : reaped) {
                if (status == "pending") { // another attempt: any worker resumes it
                    wake_ = true;
                    continue;
                }
                // Over without its process: its thread says so.
                auto record = co_await store_.run(run_id);
                if (!record) continue;
                const std::string tid = detail::string_or(*record, "thread_id", "");
                auto last = co_await store_.last_checkpoint(tid);
                const bool waiting = detail::waits_on_interrupt(last);
                co_await set_thread_status(tid, waiting             ? "interrupted"
                                                : status == "error" ? "error"
                                                                    : "idle");
            }
        } catch (const std::exception& e) {
            if (options_.log)
                options_.log(agentware::detail::format("cannot reap lapsed runs: {}", e.what()));
        }
    }
    std::lock_guard lock(mutex_);
    --loops_;
}

inline boost::asio::awaitable<bool> run_manager::still_owned(live_run& r) {
    if (options_.queue == nullptr) co_return true;
    {
        std::lock_guard lock(mutex_);
        if (r.fenced) co_return false;
        if (std::chrono::steady_clock::now() <= r.lease_until) co_return true;
    }
    const std::string run_id = detail::string_or(r.record, "run_id", "");
    const auto asked = std::chrono::steady_clock::now();
    std::optional<lease_state> s;
    try {
        s = co_await options_.queue->renew(run_id);
    } catch (const std::exception&) {
        // Unknown: the database is out of reach. Not owned, as far as writing goes.
    }
    bool fenced = false;
    {
        std::lock_guard lock(mutex_);
        if (s && s->owned) {
            r.lease_until = asked + options_.queue->lease();
            co_return true;
        }
        if (s && !r.fenced) { // another process has it: stop here
            r.fenced = fenced = true;
            r.stop.request_stop();
            if (r.runner) r.runner->cancel();
        }
    }
    if (fenced && options_.log)
        options_.log(agentware::detail::format(
            "run {}: its lease was lost while this process was away; it stops here and writes nothing more",
            run_id));
    co_return false;
}

inline boost::asio::awaitable<void> run_manager::keep_lease(std::shared_ptr<live_run> r) {
    const std::string run_id = detail::string_or(r->record, "run_id", "");
    const auto lease = options_.queue->lease();
    const auto every = std::max<std::chrono::milliseconds>(lease / 3, std::chrono::milliseconds(20));
    auto next = std::chrono::steady_clock::now() + every;
    boost::asio::steady_timer wait(ex_);
    for (;;) {
        {
            std::lock_guard lock(mutex_);
            if (r->finished || r->finishing || r->fenced) break;
        }
        const auto now = std::chrono::steady_clock::now();
        if (r->check_lease.exchange(false) || now >= next) {
            next = now + every;
            std::optional<lease_state> s;
            std::string failure;
            const auto asked = std::chrono::steady_clock::now();
            try {
                s = co_await options_.queue->renew(run_id);
            } catch (const std::exception& e) {
                failure = e.what();
            }
            // Fenced: the run is another's now, or may be (no renewal for a whole lease).
            bool lost = false;
            bool fenced = false;
            {
                std::lock_guard lock(mutex_);
                if (s && s->owned) r->lease_until = asked + lease;
                lost = s ? !s->owned : std::chrono::steady_clock::now() > r->lease_until;
                if (lost && !r->finishing && !r->finished) {
                    r->fenced = fenced = true;
                    r->stop.request_stop();
                    if (r->runner) r->runner->cancel();
                } else if (s && s->cancel_action && !r->finished) {
                    cancel_locked(run_id, *s->cancel_action);
                }
            }
            if (fenced && options_.log)
                options_.log(agentware::detail::format(
                    "run {}: its lease was lost{}; it stops here and writes nothing more", run_id,
                    failure.empty() ? "" : " (" + failure + ")"));
            if (lost) break;
        }
        wait.expires_after(std::chrono::milliseconds(20));
        co_await wait.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    }
    std::lock_guard lock(mutex_);
    --loops_;
}

inline boost::asio::awaitable<bool> run_manager::read_from_bus(live_run& r) {
    const std::string run_id = detail::string_or(r.record, "run_id", "");
    bool any = false;
    for (;;) {
        constexpr std::size_t page = 1000;
        auto events = co_await options_.events->read(run_id, r.events->size(), page);
        for (auto& e : events) {
            // Dropped at the source before this process read them: its readers behind hear of a gap.
            if (e.id > r.events->size()) r.events->skip_to(e.id);
            if (e.id != r.events->size()) continue;
            r.events->publish(std::move(e.name), std::move(e.data));
            any = true;
        }
        if (events.size() < page) co_return any;
    }
}

inline boost::asio::awaitable<void> run_manager::publish_to_bus(std::shared_ptr<live_run> r) {
    const std::string run_id = detail::string_or(r->record, "run_id", "");
    try {
        // An earlier attempt's events (its process died) come first, so ids go on from them.
        if (r->attempt > 1) co_await read_from_bus(*r);
    } catch (const std::exception& e) {
        if (options_.log)
            options_.log(
                agentware::detail::format("run {}: cannot read its earlier events: {}", run_id, e.what()));
    }
    event_bus* bus = options_.events;
    auto to_bus = std::make_shared<detail::write_behind<stream_event>>(
        [bus, run_id](std::vector<stream_event> events) -> boost::asio::awaitable<void> {
            co_await bus->append(run_id, std::move(events));
        },
        ex_);
    r->to_bus = to_bus;
    r->events->mirror([to_bus](const stream_event& e) { to_bus->push(e); });
}

inline boost::asio::awaitable<void> run_manager::watch_elsewhere(std::shared_ptr<live_run> r) {
    const std::string run_id = detail::string_or(r->record, "run_id", "");
    const std::string thread_id = detail::string_or(r->record, "thread_id", "");
    std::optional<boost::json::object> outcome; // set once the run ended elsewhere
    bool failed = false;
    bool from_bus = false; // the run's own events came from the bus: nothing to make up at the end
    auto next_look = std::chrono::steady_clock::now();
    // The bus out of reach (Redis restarting) costs the events, not the run's end, read from the store.
    bool bus_failed = false;
    auto from_the_bus = [&]() -> boost::asio::awaitable<void> {
        try {
            from_bus |= co_await read_from_bus(*r);
            bus_failed = false;
        } catch (const std::exception& e) {
            if (!bus_failed && options_.log)
                options_.log(
                    agentware::detail::format("run {}: cannot read its events: {}", run_id, e.what()));
            bus_failed = true;
        }
    };
    try {
        for (;;) {
            const bool going_on = co_await pause(std::chrono::milliseconds(20));
            if (!going_on) break;
            {
                std::lock_guard lock(mutex_);
                if (r->started || r->finished) break; // a worker here took it: its events come
            }
            // Events announced: read them now; else every quarter second, with the run's status.
            const bool told = r->check_events.exchange(false);
            if (told && options_.events != nullptr) co_await from_the_bus();
            if (std::chrono::steady_clock::now() < next_look) continue;
            next_look = std::chrono::steady_clock::now() + std::chrono::milliseconds(250);
            auto record = co_await store_.run(run_id);
            const std::string status = record ? detail::string_or(*record, "status", "") : "";
            // Read after the status: the run's process wrote every event before its end.
            if (options_.events != nullptr) co_await from_the_bus();
            if (status == "pending" || status == "running") continue;
            failed = status == "error";
            std::optional<checkpoint_record> last;
            if (!failed) last = co_await store_.last_checkpoint(thread_id);
            outcome = detail::ended_outcome(record ? *record : boost::json::object{}, last);
            break;
        }
    } catch (const std::exception& e) {
        if (options_.log)
            options_.log(agentware::detail::format("run {}: cannot follow: {}", run_id, e.what()));
    }
    bool ours = false;
    {
        std::lock_guard lock(mutex_);
        if (!r->started && !r->finished) {
            r->finished = ours = true;
            r->finished_at = std::chrono::steady_clock::now();
        }
    }
    if (ours) {
        if (outcome) {
            if (!from_bus) { // no bus: the beginning and the end, as the run's stream would have them
                r->events->publish("metadata", boost::json::serialize(
                                                   boost::json::object{{"run_id", run_id}, {"attempt", 1}}));
                bool values = false;
                if (const auto* k = detail::find(r->record, "kwargs"); k && k->is_object())
                    if (const auto* m = k->get_object().if_contains("stream_mode"); m && m->is_array())
                        values = std::find(m->get_array().begin(), m->get_array().end(),
                                           boost::json::value("values")) != m->get_array().end();
                if (failed)
                    r->events->publish("error", boost::json::serialize(outcome->at("__error__")));
                else if (values)
                    r->events->publish("values", boost::json::serialize(*outcome));
            }
            r->events->set_outcome(boost::json::serialize(*outcome));
        }
        r->events->close();
    }
    std::lock_guard lock(mutex_);
    --loops_;
}

} // namespace agentware::server

#endif
