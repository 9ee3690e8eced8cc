#ifndef AGENTWARE_SERVER_POSTGRES_RUN_QUEUE_HPP
#define AGENTWARE_SERVER_POSTGRES_RUN_QUEUE_HPP

// The run queue of a deployment whose processes share one PostgreSQL
// database (tables: postgres_schema.hpp). Any process creates runs; any
// worker claims the oldest claimable one with FOR UPDATE SKIP LOCKED, so each
// run goes to exactly one worker; the worker holds a lease it renews, and a
// run whose lease lapsed (its worker died or stalled) goes back to the queue,
// a bounded number of times. One running run per thread is the database's
// own rule (a partial unique index); the multitask strategies sit on top.
// Creation and completion NOTIFY the workers; a cancel NOTIFYs the owner.
//
// A pool belongs to one thread: given an executor (the pool's thread), every
// call runs its statements there, so the queue may be called from any
// executor of the server; without one, calls run on the caller's.

#include <agentware/postgres/pool.hpp>
#include <agentware/postgres/transaction.hpp>
#include <agentware/server/detail/postgres_calls.hpp>
#include <agentware/server/run_queue.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware::server {

struct postgres_run_queue_options {
    /// This process, as the runs' owner column names it (unique per process).
    std::string worker_id;
    /// How long a claim holds without renewal; renew every third of it.
    std::chrono::milliseconds lease{30'000};
    /// How long after a lease lapsed the reaper takes the run back: room for clock skew and a slow renewal.
    std::chrono::milliseconds grace{10'000};
    /// Claims a run gets; the reaper ends a run `error` when its last lease lapses.
    int max_attempts = 3;
};

class postgres_run_queue final : public run_queue {
public:
    /// NOTIFY channels: a run may be claimable (payload: a run or thread id); a run was asked to cancel
    /// (payload: its id).
    static constexpr const char* runs_channel = "agentware_runs";
    static constexpr const char* cancel_channel = "agentware_cancel";

    /// `executor`, when given, runs all of `db`'s work (the pool's thread).
    postgres_run_queue(postgres::pool& db, postgres_run_queue_options options,
                       boost::asio::any_io_executor executor = {})
        : db_(db), o_(std::move(options)), executor_(std::move(executor)) {}
    ~postgres_run_queue() override { unwatch(); }

    const postgres_run_queue_options& options() const noexcept { return o_; }
    std::chrono::milliseconds lease() const override { return o_.lease; }
    std::chrono::milliseconds grace() const override { return o_.grace; }

    task<queued_run> create(std::string run_id, std::string thread_id, std::string assistant_id,
                            boost::json::object record, std::string strategy,
                            std::optional<std::string> idempotency_key = std::nullopt,
                            bool claim = false) override {
        return on_executor(create_here(std::move(run_id), std::move(thread_id), std::move(assistant_id),
                                       std::move(record), std::move(strategy), std::move(idempotency_key),
                                       claim));
    }
    task<std::optional<queued_run>> claim() override { return on_executor(claim_here()); }
    task<lease_state> renew(std::string run_id) override {
        return on_executor(renew_here(std::move(run_id)));
    }
    task<bool> finish(std::string run_id, std::string status, boost::json::object record) override {
        return on_executor(finish_here(std::move(run_id), std::move(status), std::move(record)));
    }
    task<bool> update_thread(std::string run_id, boost::json::object fields) override {
        return on_executor(update_thread_here(std::move(run_id), std::move(fields)));
    }
    task<bool> release(std::string run_id) override { return on_executor(release_here(std::move(run_id))); }
    task<std::optional<std::string>> cancel(std::string run_id, std::string action) override {
        return on_executor(cancel_here(std::move(run_id), std::move(action)));
    }
    task<std::vector<std::pair<std::string, std::string>>> reap() override {
        return on_executor(reap_here());
    }
    /// The run as the queue has it now.
    task<std::optional<queued_run>> run(std::string run_id) {
        return on_executor(run_here(std::move(run_id)));
    }

    /// LISTENs on a connection of its own (the pool's connection string), on
    /// the queue's executor, which watching needs.
    void watch(std::function<void()> on_claimable, std::function<void(std::string)> on_cancel) override {
        if (!executor_) throw std::logic_error("postgres_run_queue: watching needs the pool's executor");
        auto claimable = std::make_shared<std::function<void()>>(std::move(on_claimable));
        heard_.start(
            db_.options().conninfo, {runs_channel, cancel_channel}, executor_,
            [claimable, on_cancel = std::move(on_cancel)](const postgres::notification& n) {
                if (n.channel == cancel_channel) {
                    if (on_cancel) on_cancel(n.payload);
                } else if (*claimable) {
                    (*claimable)();
                }
            },
            [claimable] {
                if (*claimable) (*claimable)();
            });
    }
    /// No callback runs after it returns (one in progress is waited for).
    void unwatch() override { heard_.stop(); }

private:
    template <class T>
    task<T> on_executor(task<T> body) {
        return detail::on_pool(executor_, std::move(body));
    }

    /// Creates a pending run and wakes the workers, in one transaction (or,
    /// with `claim` and the thread free, a run this worker holds at once).
    /// `strategy` is the thread's multitask strategy: "reject" throws
    /// thread_busy when the thread has a pending or running run; "enqueue"
    /// queues behind them; "interrupt" and "rollback" cancel them first. A
    /// reused `idempotency_key` returns the run it made the first time.
    task<queued_run> create_here(std::string run_id, std::string thread_id, std::string assistant_id,
                                 boost::json::object record, std::string strategy,
                                 std::optional<std::string> idempotency_key, bool claim) {
        const std::string record_text = boost::json::serialize(record);
        try {
            co_return co_await postgres::in_transaction(
                db_, [&](postgres::connection& c) -> boost::asio::awaitable<queued_run> {
                    co_await c.query(
                        "INSERT INTO agentware_threads (thread_id) VALUES ($1) ON CONFLICT DO NOTHING",
                        thread_id);
                    // Creates on one thread take turns: the checks below see every run before them.
                    co_await c.query("SELECT 1 FROM agentware_threads WHERE thread_id = $1 FOR UPDATE",
                                     thread_id);
                    if (idempotency_key) {
                        auto prior = co_await c.query(select_columns + " WHERE idempotency_key = $1",
                                                      *idempotency_key);
                        if (!prior.empty()) co_return read_run(prior, 0);
                    }
                    auto active = co_await c.query("SELECT run_id FROM agentware_runs WHERE thread_id = $1 "
                                                   "AND status IN ('pending', 'running')",
                                                   thread_id);
                    if (!active.empty()) {
                        if (strategy == "reject") throw thread_busy(thread_id);
                        if (strategy == "interrupt" || strategy == "rollback")
                            co_await c.query(
                                cancel_where("thread_id") +
                                    "SELECT pg_notify($3, run_id) FROM asked WHERE status = 'running'",
                                thread_id, strategy, cancel_channel);
                    }
                    if (claim && active.empty()) {
                        // The thread is free: the creator runs it (no other worker needs waking).
                        auto made = co_await c.query(
                            "INSERT INTO agentware_runs (run_id, thread_id, assistant_id, record, "
                            "multitask_strategy, idempotency_key, status, owner, attempt, lease_expires_at) "
                            "VALUES ($1, $2, $3, $4::jsonb, $5, $6, 'running', $7, 1, "
                            "clock_timestamp() + $8::bigint * interval '1 millisecond') RETURNING " +
                                columns,
                            run_id, thread_id, assistant_id, record_text, strategy, idempotency_key,
                            o_.worker_id, o_.lease.count());
                        co_return read_run(made, 0);
                    }
                    auto made = co_await c.query(
                        "INSERT INTO agentware_runs (run_id, thread_id, assistant_id, record, "
                        "multitask_strategy, "
                        "idempotency_key) VALUES ($1, $2, $3, $4::jsonb, $5, $6) RETURNING " +
                            columns,
                        run_id, thread_id, assistant_id, record_text, strategy, idempotency_key);
                    co_await c.query("SELECT pg_notify($1, $2)", runs_channel, run_id);
                    co_return read_run(made, 0);
                });
        } catch (const postgres::error& e) {
            // Two creates with one key on two threads: the second finds the first's run.
            if (!idempotency_key || e.sqlstate() != postgres::sqlstate::unique_violation) throw;
        }
        auto prior = co_await db_.query(select_columns + " WHERE idempotency_key = $1", *idempotency_key);
        if (prior.empty())
            throw postgres::error("postgres: the run of idempotency key " + *idempotency_key + " vanished");
        co_return read_run(prior, 0);
    }

    /// Claims the oldest claimable run for this worker: pending, the first
    /// pending run of its thread, its thread running none. nullopt when none is.
    task<std::optional<queued_run>> claim_here() {
        for (int tries = 0;; ++tries) {
            try {
                auto r = co_await db_.query(
                    "UPDATE agentware_runs SET status = 'running', owner = $1, attempt = attempt + 1, "
                    "lease_expires_at = clock_timestamp() + $2::bigint * interval '1 millisecond', "
                    "updated_at = clock_timestamp() "
                    "WHERE run_id = (SELECT r.run_id FROM agentware_runs r WHERE r.status = 'pending' "
                    "AND NOT EXISTS (SELECT 1 FROM agentware_runs o WHERE o.thread_id = r.thread_id AND "
                    "(o.status = 'running' OR (o.status = 'pending' AND (o.created_at, o.run_id) < "
                    "(r.created_at, r.run_id)))) "
                    "ORDER BY r.created_at, r.run_id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING " +
                        columns,
                    o_.worker_id, o_.lease.count());
                if (r.empty()) co_return std::nullopt;
                co_return read_run(r, 0);
            } catch (const postgres::error& e) {
                // Two workers raced to a thread's next run: the index let one win; look again.
                if (e.sqlstate() != postgres::sqlstate::unique_violation || tries >= 3) throw;
            }
        }
    }

    /// Extends this worker's lease on a run, and tells it whether a cancel was asked for.
    task<lease_state> renew_here(std::string run_id) {
        auto r = co_await db_.query(
            "UPDATE agentware_runs SET lease_expires_at = clock_timestamp() + $3::bigint * "
            "interval '1 millisecond' WHERE run_id = $1 AND owner = $2 AND status = 'running' "
            "RETURNING cancel_action",
            run_id, o_.worker_id, o_.lease.count());
        lease_state s;
        s.owned = !r.empty();
        if (s.owned) s.cancel_action = optional_text(r, 0, "cancel_action");
        co_return s;
    }

    /// Ends a run this worker owns with `status` and its final record, and
    /// wakes the workers (the thread's next run may go). False when the
    /// worker no longer owns it: nothing was written.
    task<bool> finish_here(std::string run_id, std::string status, boost::json::object record) {
        auto r = co_await db_.query(
            // The owner stays: the process that ended the run still writes its thread's status.
            "WITH done AS (UPDATE agentware_runs SET status = $3, record = $4::jsonb, "
            "lease_expires_at = NULL, updated_at = clock_timestamp() WHERE run_id = $1 AND owner = $2 AND "
            "status = 'running' RETURNING thread_id) SELECT pg_notify($5, thread_id) FROM done",
            run_id, o_.worker_id, status, boost::json::serialize(record), runs_channel);
        co_return !r.empty();
    }

    task<bool> update_thread_here(std::string run_id, boost::json::object fields) {
        // The fence is the runs' row: this worker owns the run (running, or
        // ended by it), and no run of the thread created after it was claimed.
        auto r = co_await db_.query(
            "UPDATE agentware_threads t SET record = t.record || $3::jsonb, updated_at = clock_timestamp() "
            "FROM agentware_runs r WHERE r.run_id = $1 AND r.owner = $2 AND t.thread_id = r.thread_id "
            "AND NOT EXISTS (SELECT 1 FROM agentware_runs o WHERE o.thread_id = r.thread_id AND "
            "o.run_id <> r.run_id AND o.attempt > 0 AND o.created_at > r.created_at) RETURNING 1",
            run_id, o_.worker_id, boost::json::serialize(fields));
        co_return !r.empty();
    }

    /// Gives a run this worker owns back to the queue without counting the
    /// attempt (a drain at shutdown); false when it is no longer the owner.
    task<bool> release_here(std::string run_id) {
        auto r = co_await db_.query(
            "WITH back AS (UPDATE agentware_runs SET status = 'pending', owner = NULL, lease_expires_at = "
            "NULL, "
            "attempt = attempt - 1, updated_at = clock_timestamp() WHERE run_id = $1 AND owner = $2 AND "
            "status = 'running' RETURNING run_id) SELECT pg_notify($3, run_id) FROM back",
            run_id, o_.worker_id, runs_channel);
        co_return !r.empty();
    }

    /// Asks for a run's cancel, from any process: a pending run ends
    /// `interrupted` at once; a running one records the action and its owner
    /// hears of it (NOTIFY, and its next renewal). The run's status after it,
    /// or nullopt when the run is unknown or already over.
    task<std::optional<std::string>> cancel_here(std::string run_id, std::string action) {
        auto r =
            co_await db_.query(cancel_where("run_id") + "SELECT status, pg_notify($3, run_id) FROM asked",
                               run_id, action, cancel_channel);
        if (r.empty()) co_return std::nullopt;
        co_return r.as<std::string>(0, "status");
    }

    /// Takes back the runs whose lease lapsed more than `grace` ago: pending
    /// again (the next claim resumes from the run's last checkpoint), or
    /// `error` after max_attempts, or `interrupted` when a cancel was asked
    /// for. Returns each run reaped with its new status.
    task<std::vector<std::pair<std::string, std::string>>> reap_here() {
        auto r = co_await db_.query(
            "WITH lapsed AS (UPDATE agentware_runs SET "
            "status = CASE WHEN cancel_action IS NOT NULL THEN 'interrupted' "
            "WHEN attempt >= $1 THEN 'error' ELSE 'pending' END, "
            "stop_reason = CASE WHEN cancel_action IS NOT NULL THEN 'cancelled' "
            "WHEN attempt >= $1 THEN 'lease_expired' ELSE stop_reason END, "
            "owner = NULL, lease_expires_at = NULL, updated_at = clock_timestamp() "
            "WHERE status = 'running' AND lease_expires_at < clock_timestamp() - $2::bigint * interval "
            "'1 millisecond' RETURNING run_id, status) "
            "SELECT run_id, status, pg_notify($3, run_id) FROM lapsed",
            o_.max_attempts, o_.grace.count(), runs_channel);
        std::vector<std::pair<std::string, std::string>> out;
        for (std::size_t i = 0; i < r.size(); ++i)
            out.emplace_back(r.as<std::string>(i, "run_id"), r.as<std::string>(i, "status"));
        co_return out;
    }

    task<std::optional<queued_run>> run_here(std::string run_id) {
        auto r = co_await db_.query(select_columns + " WHERE run_id = $1", run_id);
        if (r.empty()) co_return std::nullopt;
        co_return read_run(r, 0);
    }

    static inline const std::string columns =
        "run_id, thread_id, assistant_id, status, record::text AS record, attempt, cancel_action";
    static inline const std::string select_columns = "SELECT " + columns + " FROM agentware_runs";
    // A cancel of the runs whose `key` column is $1, with action $2, as the
    // CTE `asked` (run_id, status): pending runs end at once; a running one
    // records the action for its owner.
    static std::string cancel_where(std::string_view key) {
        return "WITH asked AS (UPDATE agentware_runs SET "
               "status = CASE WHEN status = 'pending' THEN 'interrupted' ELSE status END, "
               "stop_reason = CASE WHEN status = 'pending' THEN 'cancelled' ELSE stop_reason END, "
               "cancel_action = coalesce(cancel_action, $2), "
               "cancel_requested_at = coalesce(cancel_requested_at, clock_timestamp()), "
               "updated_at = clock_timestamp() "
               "WHERE " +
               std::string(key) + " = $1 AND status IN ('pending', 'running') RETURNING run_id, status) ";
    }

    static std::optional<std::string> optional_text(const postgres::result& r, std::size_t row,
                                                    std::string_view col) {
        auto t = r.text(row, col);
        return t ? std::optional<std::string>(*t) : std::nullopt;
    }

    static queued_run read_run(const postgres::result& r, std::size_t row) {
        queued_run q;
        q.run_id = r.as<std::string>(row, "run_id");
        q.thread_id = r.as<std::string>(row, "thread_id");
        q.assistant_id = r.as<std::string>(row, "assistant_id");
        q.status = r.as<std::string>(row, "status");
        if (auto v = boost::json::parse(r.as<std::string_view>(row, "record")); v.is_object())
            q.record = std::move(v.as_object());
        q.attempt = r.as<int>(row, "attempt");
        q.cancel_action = optional_text(r, row, "cancel_action");
        return q;
    }

    postgres::pool& db_;
    postgres_run_queue_options o_;
    boost::asio::any_io_executor executor_;
    detail::announcements heard_;
};

} // namespace agentware::server

#endif
