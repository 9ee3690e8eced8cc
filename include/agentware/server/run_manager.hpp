#ifndef AGENTWARE_SERVER_RUN_MANAGER_HPP
#define AGENTWARE_SERVER_RUN_MANAGER_HPP

// Runs: one active run per thread, the others queued or refused as the
// request's multitask_strategy asks; each run a coroutine on the server's
// event loop (an agent with an asynchronous model runs there whole; one with a
// blocking model has its calls made on a pool of threads); their
// events, in the stream modes each run asked for; cancel (interrupt or
// rollback). The store keeps every run's record and the checkpoints its
// agent saves, so the API answers from the store and the manager only holds
// what is alive.
//
// Given a run queue (run_queue.hpp), the processes that share it share the
// runs: a run goes to the queue, its creator runs it when the thread is free
// and it has room, any process's worker claims the others, a lease kept
// renewed says the run is alive, and a run whose process died is taken up
// again by another from its last checkpoint.

#include <agentware/server/assistant.hpp>
#include <agentware/server/detail/record.hpp>
#include <agentware/server/detail/write_behind.hpp>
#include <agentware/server/event_bus.hpp>
#include <agentware/server/ids.hpp>
#include <agentware/server/run_queue.hpp>
#include <agentware/server/run_stream.hpp>
#include <agentware/server/store.hpp>
#include <agentware/server/wire.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <variant>
#include <vector>

namespace agentware::server {

/// Why a run could not be created: the HTTP status and the text the reference
/// server answers with.
struct run_refused {
    int status = 0;
    std::string message;
};

struct run_manager_options {
    std::size_t workers = 32; ///< threads for agents with blocking models (their runs beyond wait)
    /// Runs executing at once, whatever their model; the others wait, pending.
    /// Each executing agent holds its own state and, once it calls a blocking
    /// tool, its tool threads: this bounds them.
    std::size_t max_active_runs = 512;
    std::chrono::seconds keep_streams{120}; ///< how long a finished run's events stay for joins
    /// At start, settle the runs a stopped process left pending or running
    /// (recover()). Off when other live processes share the store: their runs
    /// are not this process's to settle.
    bool recover_runs = true;
    /// The queue the processes of a deployment share (null: this process's
    /// runs are its own). With one, recover() is not needed: leases replace it.
    run_queue* queue = nullptr;
    /// With a queue: where a run's events go for the other processes, whose
    /// clients follow it from there (null: a run's events are its process's).
    event_bus* events = nullptr;
    std::function<void(const std::string&)> log; ///< one line per run that fails
};

namespace detail {

/// The pending interrupts of a saved state, as [{id, value}].
inline boost::json::array pending_interrupts(const boost::json::value& state) {
    const auto* o = state.if_object();
    if (o == nullptr) return {};
    const auto* rec = o->if_contains("__interrupt__");
    if (rec == nullptr || !rec->is_object()) return {};
    const auto* list = rec->get_object().if_contains("interrupts");
    if (list == nullptr || !list->is_array()) return {};
    boost::json::array out;
    for (const auto& i : list->get_array())
        if (const auto* io = i.if_object())
            out.push_back(boost::json::object{{"id", io->contains("id") ? io->at("id") : ""},
                                              {"value", io->contains("value") ? io->at("value") : nullptr}});
    return out;
}

/// True when the thread's last checkpoint waits on an interrupt (its status is then "interrupted").
inline bool waits_on_interrupt(const std::optional<checkpoint_record>& last) {
    return last && !pending_interrupts(last->at("values")).empty();
}

/// What `wait` and `join` answer for a run that ended, from its record and
/// its thread's last checkpoint: {"__error__": ...}, {"__interrupt__": [...]},
/// or the final values.
inline boost::json::object ended_outcome(const boost::json::object& run,
                                         const std::optional<checkpoint_record>& last) {
    if (string_or(run, "status", "") == "error")
        return {
            {"__error__", boost::json::object{{"error", "Error"}, {"message", string_or(run, "error", "")}}}};
    if (!last) return {};
    auto waiting = pending_interrupts(last->at("values"));
    if (!waiting.empty()) return {{"__interrupt__", std::move(waiting)}};
    return langchain_values(last->at("values"));
}

/// Where the paused run waits ("after_model", "tools", ...), or "".
inline std::string pending_point(const boost::json::value& state) {
    const auto* o = state.if_object();
    if (o == nullptr) return {};
    const auto* rec = o->if_contains("__interrupt__");
    if (rec == nullptr || !rec->is_object()) return {};
    return string_or(rec->get_object(), "at", "tools");
}

} // namespace detail

class run_manager {
public:
    /// Runs execute on `ex` (the server's event loop).
    run_manager(store& s, std::vector<assistant_spec> assistants, boost::asio::any_io_executor ex,
                run_manager_options o = {})
        : store_(s), assistants_(std::move(assistants)), options_(std::move(o)), ex_(std::move(ex)),
          pool_(std::max<std::size_t>(1, options_.workers)) {
        for (const auto& a : assistants_)
            ids_.push_back(assistant_uuid(a.graph_id));
    }

    /// Begins serving: with a queue, the worker that claims runs and the
    /// reaper of lapsed leases; without, recover(). The server calls it once,
    /// before it takes requests.
    boost::asio::awaitable<void> start() {
        if (options_.queue == nullptr) {
            co_await recover();
            co_return;
        }
        if (options_.events != nullptr)
            options_.events->watch([this](std::string run_id) {
                std::lock_guard lock(mutex_);
                if (auto it = live_.find(run_id); it != live_.end() && !it->second->started)
                    it->second->check_events = true;
            });
        options_.queue->watch([this] { wake_ = true; },
                              [this](std::string run_id) {
                                  std::lock_guard lock(mutex_);
                                  if (auto it = live_.find(run_id); it != live_.end() && it->second->started)
                                      it->second->check_lease = true;
                              });
        {
            std::lock_guard lock(mutex_);
            loops_ += 2;
        }
        boost::asio::co_spawn(ex_, claim_loop(), boost::asio::detached);
        boost::asio::co_spawn(ex_, reap_loop(), boost::asio::detached);
    }
    ~run_manager() {
        begin_shutdown();
        pool_.join();
    }
    run_manager(const run_manager&) = delete;
    run_manager& operator=(const run_manager&) = delete;

    /// Stops taking runs and cancels those pending or running (they end
    /// interrupted, their threads keep their last checkpoint). `drained()`
    /// tells when they have.
    /// With a queue, the runs executing here stop at once and go back to the
    /// queue for another process (their checkpoints kept); the runs followed
    /// here end their streams.
    void begin_shutdown() {
        std::vector<std::shared_ptr<run_stream>> ended;
        {
            std::lock_guard lock(mutex_);
            if (stopping_) return;
            stopping_ = true;
            for (auto& [id, r] : live_) {
                if (r->finished) continue;
                if (options_.queue != nullptr && !r->started) { // followed, not ours
                    r->finished = true;
                    r->finished_at = std::chrono::steady_clock::now();
                    ended.push_back(r->events);
                    continue;
                }
                if (options_.queue != nullptr)
                    r->draining = true;
                else if (r->cancel_action.empty())
                    r->cancel_action = "interrupt";
                r->stop.request_stop();
                if (r->runner) r->runner->cancel();
            }
        }
        if (options_.queue != nullptr) options_.queue->unwatch();
        if (options_.events != nullptr) options_.events->unwatch();
        for (auto& e : ended)
            e->close();
    }
    bool drained() {
        std::lock_guard lock(mutex_);
        return creating_ == 0 && loops_ == 0 &&
               std::all_of(live_.begin(), live_.end(), [](const auto& kv) { return kv.second->finished; });
    }

    store& records() noexcept { return store_; }
    const std::vector<assistant_spec>& assistants() const noexcept { return assistants_; }
    std::string assistant_id(std::size_t i) const { return ids_[i]; }

    /// The assistant named by its id or its graph id, or null.
    const assistant_spec* find_assistant(std::string_view id, std::size_t* index = nullptr) const {
        for (std::size_t i = 0; i < assistants_.size(); ++i)
            if (assistants_[i].graph_id == id || ids_[i] == id) {
                if (index) *index = i;
                return &assistants_[i];
            }
        return nullptr;
    }

    /// Creates a run of thread `thread_id` from a validated RunCreate body
    /// (`stateless`: a temporary thread). Returns the run record, or why not.
    boost::asio::awaitable<std::variant<boost::json::object, run_refused>>
    create(std::string thread_id, boost::json::object body, bool stateless) {
        std::size_t index = 0;
        const std::string assistant = detail::string_or(body, "assistant_id", "");
        const assistant_spec* spec = find_assistant(assistant, &index);
        if (spec == nullptr)
            co_return run_refused{404,
                                  agentware::detail::format(
                                      "No assistant found for \"{}\". Make sure the assistant ID is for a "
                                      "valid assistant or a valid graph ID.",
                                      assistant)};
        std::optional<boost::json::object> thread;
        if (!thread_id.empty()) thread = co_await store_.thread(thread_id);
        if (!thread) {
            const bool create = stateless || detail::string_or(body, "if_not_exists", "reject") == "create";
            if (!create)
                co_return run_refused{404,
                                      agentware::detail::format("Thread with ID {} not found", thread_id)};
            if (thread_id.empty()) thread_id = new_uuid7();
            const std::string now = iso_now();
            thread = boost::json::object{{"thread_id", thread_id}, {"created_at", now},
                                         {"updated_at", now},      {"metadata", boost::json::object{}},
                                         {"status", "idle"},       {"config", boost::json::object{}}};
            if (stateless) (*thread)["metadata"].as_object()["__temporary"] = true;
            co_await store_.put_thread(*thread);
        }
        boost::json::object metadata;
        if (const auto* m = thread->if_contains("metadata"); m && m->is_object())
            for (const auto& kv : m->get_object())
                if (!kv.key().starts_with("__")) metadata[kv.key()] = kv.value();
        if (const auto* m = detail::find(body, "metadata"); m && m->is_object())
            for (const auto& kv : m->get_object())
                metadata[kv.key()] = kv.value();
        metadata["graph_id"] = spec->graph_id;
        metadata["assistant_id"] = ids_[index];

        const std::string strategy = detail::string_or(body, "multitask_strategy", "reject");
        const std::string now = iso_now();
        boost::json::object kwargs;
        for (std::string_view k : {"input", "command", "config", "context", "checkpoint", "checkpoint_id"})
            kwargs[k] = body.contains(k) ? body.at(k) : boost::json::value(nullptr);
        if (!kwargs["context"].is_object()) kwargs["context"] = boost::json::object{};
        if (!kwargs["config"].is_object()) kwargs["config"] = boost::json::object{};
        kwargs["stream_mode"] = stream_modes(body);
        kwargs["temporary"] = stateless && detail::string_or(body, "on_completion", "delete") != "keep";
        kwargs["subgraphs"] = body.contains("stream_subgraphs") && body.at("stream_subgraphs").is_bool() &&
                              body.at("stream_subgraphs").get_bool();
        kwargs["resumable"] = body.contains("stream_resumable") && body.at("stream_resumable").is_bool() &&
                              body.at("stream_resumable").get_bool();
        boost::json::object run{
            {"run_id", new_uuid7()},           {"thread_id", thread_id}, {"assistant_id", ids_[index]},
            {"metadata", std::move(metadata)}, {"status", "pending"},    {"kwargs", std::move(kwargs)},
            {"multitask_strategy", strategy},  {"created_at", now},      {"updated_at", now}};

        auto live = std::make_shared<live_run>();
        live->record = run;
        live->spec = spec;
        live->stateless = stateless;
        live->strict_resume = body.contains("strict_resume") && body.at("strict_resume").is_bool() &&
                              body.at("strict_resume").get_bool();
        if (const auto* a = detail::find(body, "after_seconds"); a && a->is_number())
            live->not_before = std::chrono::steady_clock::now() +
                               std::chrono::milliseconds(std::int64_t(a->to_number<double>() * 1000));
        const std::string run_id(run.at("run_id").get_string());
        if (options_.queue != nullptr) {
            run["kwargs"].as_object()["strict_resume"] = live->strict_resume;
            // For whichever process claims it: when the run may start, on the clock processes share.
            if (const auto* a = detail::find(body, "after_seconds"); a && a->is_number())
                run["kwargs"].as_object()["run_after_ms"] =
                    std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count() +
                    std::int64_t(a->to_number<double>() * 1000);
            co_return co_await create_queued(std::move(run), std::move(live), strategy);
        }
        // Refused before the record is written; written before the run may
        // start (the run's own status writes come after this one); checked
        // again after, since another request may have taken the thread meanwhile.
        if (auto refused = refusal(thread_id, strategy)) co_return *refused;
        // Counted until it is live or refused: a shutdown waits for it (drained()).
        {
            std::lock_guard lock(mutex_);
            ++creating_;
        }
        struct created {
            run_manager* self;
            ~created() {
                std::lock_guard lock(self->mutex_);
                --self->creating_;
            }
        } counted{this};
        co_await store_.put_run(run);
        std::optional<run_refused> refused;
        {
            std::lock_guard lock(mutex_);
            refused = refusal_locked(thread_id, strategy);
            if (!refused) {
                auto& q = queues_[thread_id];
                const bool busy = !q.active.empty() || !q.pending.empty();
                live_[run_id] = live;
                if (busy && (strategy == "interrupt" || strategy == "rollback")) {
                    // The runs before it stop (the pending ones start only to
                    // end cancelled, so each gets its end), then it runs.
                    for (const auto& p : q.pending)
                        cancel_locked(p, strategy);
                    if (!q.active.empty()) cancel_locked(q.active, strategy);
                }
                q.pending.push_back(run_id);
                schedule_locked(thread_id);
            }
        }
        if (refused) {
            co_await store_.erase_run(run_id);
            co_return *refused;
        }
        co_return run;
    }

    /// Why a new run of the thread would be refused now, if it would.
    std::optional<run_refused> refusal(const std::string& thread_id, const std::string& strategy) {
        std::lock_guard lock(mutex_);
        return refusal_locked(thread_id, strategy);
    }

    /// The events of a run, while they are kept (its life and `keep_streams` after).
    std::shared_ptr<run_stream> stream(std::string_view run_id) {
        std::lock_guard lock(mutex_);
        auto it = live_.find(run_id);
        return it == live_.end() ? nullptr : it->second->events;
    }

    /// True while the run is pending or running here.
    bool active(std::string_view run_id) {
        std::lock_guard lock(mutex_);
        auto it = live_.find(run_id);
        return it != live_.end() && !it->second->finished;
    }

    /// Cancels a pending or running run: `interrupt` (it ends interrupted) or
    /// `rollback` (it and its checkpoints are deleted). False when the run is not active.
    bool cancel(std::string_view run_id, std::string_view action, std::string reason = {}) {
        {
            std::lock_guard lock(mutex_);
            auto it = live_.find(run_id);
            if (it == live_.end() || it->second->finished) return false;
            it->second->cancel_reason = std::move(reason);
            cancel_locked(std::string(run_id), action);
        }
        return true;
    }

    /// cancel(), and with a queue the same asked of the run's process,
    /// wherever it runs: true when the run was pending or running.
    boost::asio::awaitable<bool> request_cancel(std::string run_id, std::string action,
                                                std::string reason = {}) {
        const bool here = cancel(run_id, action, std::move(reason));
        if (options_.queue == nullptr) co_return here;
        auto status = co_await options_.queue->cancel(run_id, action);
        co_return here || status.has_value();
    }

    /// A stream for a run that another process executes or executed: its
    /// events from the event bus, and its end when the store says it ended
    /// (without a bus: its outcome and, in `values` mode, its final values).
    /// Null without a queue.
    std::shared_ptr<run_stream> follow(const boost::json::object& record) {
        if (options_.queue == nullptr) return nullptr;
        const std::string run_id = detail::string_or(record, "run_id", "");
        std::shared_ptr<live_run> r;
        {
            std::lock_guard lock(mutex_);
            if (auto it = live_.find(run_id); it != live_.end()) return it->second->events;
            if (stopping_) return nullptr;
            prune_finished();
            r = std::make_shared<live_run>();
            r->record = record;
            live_[run_id] = r;
            ++loops_;
        }
        boost::asio::co_spawn(ex_, watch_elsewhere(r), boost::asio::detached);
        return r->events;
    }

    /// Threads with a run pending or running.
    bool thread_busy(std::string_view thread_id) {
        std::lock_guard lock(mutex_);
        auto it = queues_.find(thread_id);
        return it != queues_.end() && (!it->second.active.empty() || !it->second.pending.empty());
    }

    /// Cancels every run of a thread (it is being deleted).
    void cancel_thread(std::string_view thread_id) {
        std::lock_guard lock(mutex_);
        auto it = queues_.find(thread_id);
        if (it == queues_.end()) return;
        for (const auto& p : it->second.pending)
            cancel_locked(p, "interrupt");
        if (!it->second.active.empty()) cancel_locked(it->second.active, "interrupt");
    }

    /// Runs left pending or running by a process that stopped: the running ones
    /// end in error (their agent's last checkpoint is kept, so an interrupted
    /// thread can still be resumed); the pending ones run again. The server
    /// calls it once, before it takes requests.
    boost::asio::awaitable<void> recover() {
        if (!options_.recover_runs || options_.queue != nullptr) co_return;
        auto threads = co_await store_.threads();
        for (auto& t : threads) {
            const std::string tid = detail::string_or(t, "thread_id", "");
            bool changed = false;
            auto runs = co_await store_.runs(tid);
            for (auto& r : runs) {
                const std::string status = detail::string_or(r, "status", "");
                if (status != "pending" && status != "running") continue;
                r["status"] = "error";
                r["updated_at"] = iso_now();
                r["error"] = "the server stopped during the run";
                co_await store_.put_run(r);
                changed = true;
            }
            if (changed || detail::string_or(t, "status", "") == "busy") {
                auto last = co_await store_.last_checkpoint(tid);
                t["status"] = detail::waits_on_interrupt(last) ? "interrupted" : "idle";
                t["updated_at"] = iso_now();
                co_await store_.put_thread(t);
            }
        }
    }

    /// The modes a RunCreate asks for, as a list (default ["values"]).
    static boost::json::array stream_modes(const boost::json::object& body) {
        const auto* m = detail::find(body, "stream_mode");
        if (m == nullptr) return {"values"};
        if (m->is_string()) return {m->get_string()};
        if (m->is_array()) return m->get_array();
        return {"values"};
    }

private:
    struct live_run {
        boost::json::object record;
        const assistant_spec* spec = nullptr;
        std::shared_ptr<run_stream> events = std::make_shared<run_stream>();
        std::stop_source stop;
        std::string cancel_action; ///< "", "interrupt" or "rollback"
        std::string cancel_reason;
        std::shared_ptr<assistant_run> runner;
        std::size_t checkpoints_before = 0;
        bool stateless = false;
        bool strict_resume = false;
        bool started = false; ///< executing here (with a queue: claimed by this process)
        bool finished = false;
        int attempt = 1;        ///< the queue's claims of the run so far
        bool draining = false;  ///< stopping for a shutdown: back to the queue, not ended
        bool fenced = false;    ///< the lease was lost: another process owns the run now
        bool finishing = false; ///< its end is being written: renewals stop
        /// With a queue: the lease holds until then, as this process counts
        /// (from before its last renewal was sent).
        std::chrono::steady_clock::time_point lease_until{};
        std::atomic<bool> check_lease{false};  ///< a cancel was announced: renew now
        std::atomic<bool> check_events{false}; ///< followed: events were appended elsewhere, read now
        /// Executing with an event bus: its events on their way there.
        std::shared_ptr<detail::write_behind<stream_event>> to_bus;
        std::chrono::steady_clock::time_point not_before{};
        std::chrono::steady_clock::time_point finished_at{};
    };
    struct thread_queue {
        std::string active;
        std::deque<std::string> pending;
    };

    // Kept for parity: the reference server's texts.
    static constexpr const char* shutting_down = "The server is shutting down.";
    static constexpr const char* thread_taken =
        "Thread is already running a task. Wait for it to finish or choose a different multitask strategy.";

    std::optional<run_refused> refusal_locked(const std::string& thread_id, const std::string& strategy) {
        if (stopping_) return run_refused{503, shutting_down};
        prune_finished();
        auto q = queues_.find(thread_id);
        const bool busy = q != queues_.end() && (!q->second.active.empty() || !q->second.pending.empty());
        if (busy && strategy == "reject") return run_refused{422, thread_taken};
        return std::nullopt;
    }

    // With the lock: the thread's next run becomes ready when none is active.
    void schedule_locked(const std::string& thread_id) {
        auto& q = queues_[thread_id];
        if (!q.active.empty() || q.pending.empty()) return;
        q.active = q.pending.front();
        q.pending.pop_front();
        ready_.push_back(live_.at(q.active));
        start_ready_locked();
    }

    // With the lock: starts ready runs while fewer than max_active_runs execute.
    void start_ready_locked() {
        while (!ready_.empty() && active_ < std::max<std::size_t>(1, options_.max_active_runs)) {
            auto run = std::move(ready_.front());
            ready_.pop_front();
            run->started = true;
            ++active_;
            // Posted: the coroutine must not start under this lock.
            boost::asio::post(
                ex_, [this, run] { boost::asio::co_spawn(ex_, execute(run), boost::asio::detached); });
        }
    }

    // The run is over: the thread's next run may start.
    void end_run(const std::shared_ptr<live_run>& r) {
        const std::string tid(r->record.at("thread_id").get_string());
        if (options_.queue != nullptr) {
            {
                std::lock_guard lock(mutex_);
                r->finished = true;
                r->finished_at = std::chrono::steady_clock::now();
                r->runner.reset();
                --active_;
            }
            wake_ = true; // room for another claim
            r->events->close();
            return;
        }
        {
            std::lock_guard lock(mutex_);
            r->finished = true;
            r->finished_at = std::chrono::steady_clock::now();
            r->runner.reset();
            --active_;
            auto& q = queues_[tid];
            if (q.active == detail::string_or(r->record, "run_id", "")) q.active.clear();
            schedule_locked(tid); // during a shutdown, queued runs start only to end cancelled
            start_ready_locked();
            if (q.active.empty() && q.pending.empty()) queues_.erase(tid);
        }
        r->events->close();
    }

    void cancel_locked(const std::string& run_id, std::string_view action) {
        auto it = live_.find(run_id);
        if (it == live_.end() || it->second->finished) return;
        auto& r = *it->second;
        if (r.cancel_action.empty()) r.cancel_action = std::string(action);
        r.stop.request_stop();
        if (r.runner) r.runner->cancel();
    }

    void prune_finished() {
        const auto now = std::chrono::steady_clock::now();
        std::erase_if(live_, [&](const auto& kv) {
            return kv.second->finished && now - kv.second->finished_at > options_.keep_streams;
        });
    }

    /// With `run_id` and a shared queue, fenced by the run (run_queue::update_thread).
    boost::asio::awaitable<void> set_thread_status(std::string thread_id, std::string status,
                                                   std::string run_id = {}) {
        // Made before the co_await: g++ 12 mishandles a braced list under it.
        boost::json::object fields;
        fields["status"] = status;
        fields["updated_at"] = iso_now();
        if (options_.queue != nullptr && !run_id.empty())
            co_await options_.queue->update_thread(std::move(run_id), std::move(fields));
        else
            co_await store_.update_thread(std::move(thread_id), std::move(fields), boost::json::object());
    }
    boost::asio::awaitable<void> set_run_status(live_run& r, std::string status) {
        r.record["status"] = status;
        r.record["updated_at"] = iso_now();
        if (options_.queue == nullptr) {
            co_await store_.put_run(r.record);
            co_return;
        }
        if (status == "pending" || status == "running") co_return; // the queue's own moves
        if (!co_await still_owned(r)) co_return;
        {
            std::lock_guard lock(mutex_);
            r.finishing = true;
        }
        const std::string run_id = detail::string_or(r.record, "run_id", "");
        co_await events_written(r); // a follower that sees the end has every event
        if (!co_await options_.queue->finish(run_id, status, r.record) && options_.log)
            options_.log(agentware::detail::format(
                "run {}: another process took it over; its end here ({}) was not written", run_id, status));
    }
    // The run's events are all on the bus (failures there are logged, not the run's).
    boost::asio::awaitable<void> events_written(live_run& r) {
        if (!r.to_bus) co_return;
        try {
            co_await r.to_bus->flush();
        } catch (const std::exception& e) {
            if (options_.log)
                options_.log(
                    agentware::detail::format("run {}: its events did not all reach the other processes: {}",
                                              detail::string_or(r.record, "run_id", ""), e.what()));
        }
    }
    // Before a write, with a queue: false when the run is another process's
    // now. A lease past its time as this process counts it (a process paused
    // past its lease) is renewed first, so the answer is the database's.
    boost::asio::awaitable<bool> still_owned(live_run& r);
    bool flag(const live_run& r, bool live_run::*which) {
        std::lock_guard lock(mutex_);
        return r.*which;
    }

    // One run, start to end.
    boost::asio::awaitable<void> execute(std::shared_ptr<live_run> r) {
        if (options_.queue != nullptr) {
            {
                std::lock_guard lock(mutex_);
                ++loops_;
            }
            boost::asio::co_spawn(ex_, keep_lease(r), boost::asio::detached);
            if (options_.events != nullptr) co_await publish_to_bus(r);
        }
        try {
            if (r->spec == nullptr) { // claimed from the queue: made by a process with other assistants
                r->record["error"] = agentware::detail::format(
                    "this server has no assistant {}", detail::string_or(r->record, "assistant_id", ""));
                co_await set_run_status(*r, "error");
            } else {
                co_await run_body(*r);
            }
        } catch (const std::exception& e) {
            if (options_.log)
                options_.log(agentware::detail::format("run {}: {}",
                                                       detail::string_or(r->record, "run_id", ""), e.what()));
        }
        end_run(r);
    }
    boost::asio::awaitable<void> run_body(live_run& r);

    // The queue's side of the manager (run_queue_worker.hpp).
    boost::asio::awaitable<std::variant<boost::json::object, run_refused>>
    create_queued(boost::json::object run, std::shared_ptr<live_run> live, std::string strategy);
    void start_claimed(queued_run q, std::chrono::steady_clock::time_point claimed_at);
    boost::asio::awaitable<void> claim_loop();
    boost::asio::awaitable<void> reap_loop();
    boost::asio::awaitable<void> keep_lease(std::shared_ptr<live_run> r);
    boost::asio::awaitable<void> watch_elsewhere(std::shared_ptr<live_run> r);
    // The bus's events of the run that this process's stream lacks; true when there were any.
    boost::asio::awaitable<bool> read_from_bus(live_run& r);
    // The events of an earlier attempt first (a run taken over), then this one's, go to the bus.
    boost::asio::awaitable<void> publish_to_bus(std::shared_ptr<live_run> r);
    // Waits `d`, in short steps, until the manager stops.
    boost::asio::awaitable<bool> pause(std::chrono::milliseconds d);

    store& store_;
    std::vector<assistant_spec> assistants_;
    std::vector<std::string> ids_;
    run_manager_options options_;
    boost::asio::any_io_executor ex_;
    boost::asio::thread_pool pool_;
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<live_run>, std::less<>> live_;
    std::map<std::string, thread_queue, std::less<>> queues_;
    std::deque<std::shared_ptr<live_run>> ready_; ///< runs whose thread is free, waiting for room
    std::size_t active_ = 0;                      ///< runs executing
    std::size_t creating_ = 0; ///< create() calls between their record's write and their end
    std::size_t loops_ = 0;    ///< the queue's coroutines (claims, reaping, leases, follows) still running
    bool stopping_ = false;
    std::atomic<bool> wake_{false}; ///< a run may be claimable: look now, not at the next second
};

} // namespace agentware::server

#include <agentware/server/detail/run_execution.hpp>
#include <agentware/server/detail/run_queue_worker.hpp>

#endif
