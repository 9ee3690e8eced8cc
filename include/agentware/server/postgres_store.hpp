#ifndef AGENTWARE_SERVER_POSTGRES_STORE_HPP
#define AGENTWARE_SERVER_POSTGRES_STORE_HPP

// The store of a deployment whose processes share one PostgreSQL database
// (tables: postgres_schema.hpp). Threads and runs are the rows the run queue
// uses (postgres_run_queue.hpp), so the queue and the store see the same runs.
//
// Checkpoints store what changed. A thread's checkpoints are numbered rows
// (seq); a row holds either the whole `values` (a snapshot) or a delta
// against the row before: `{"at": n, "append": [...], "set": {...},
// "unset": [...]}`, the previous messages cut to their first `n`, the new
// ones appended, the other top-level keys set or removed. A snapshot is
// written once the deltas since the last one weigh as much as it (or after
// `snapshot_every` deltas): a growing thread's snapshots then come at
// doubling intervals, so its storage stays within a few times what its steps
// added (linear in its length, where a snapshot every N rows is quadratic),
// and reading a checkpoint reads at most about twice its size.
//
// To write a delta without reading, the store remembers the last checkpoint
// of the threads it wrote or read last. Another process may have written the
// thread since: the write locks the thread's row, compares the remembered
// last row (seq, checkpoint id, and xmin, the transaction that wrote it) with
// the database's, and reads the thread's tail again when they differ, so the
// memory saves reads and never decides what is stored.
//
// A pool belongs to one thread: every call runs its statements on the
// executor given (a strand, or a one-thread io_context), so the store may be
// called from coroutines on any executor of the server.

#include <agentware/agent/detail/state_diff.hpp>
#include <agentware/postgres/pool.hpp>
#include <agentware/postgres/transaction.hpp>
#include <agentware/server/detail/postgres_calls.hpp>
#include <agentware/server/detail/record.hpp>
#include <agentware/server/store.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace agentware::server {

struct postgres_store_options {
    /// At most this many deltas follow a snapshot (1: every checkpoint is
    /// whole). A snapshot also comes once the deltas since the last one weigh
    /// as much as it. Reading a checkpoint reads back to the snapshot before it.
    std::size_t snapshot_every = 1000;
    /// Threads whose last checkpoint is remembered, to write the next delta
    /// without reading the thread's tail first (least recently used go first).
    std::size_t cached_threads = 256;
    /// The last messages of the previous checkpoint compared by value with the
    /// new one's; older ones are taken as unchanged when these are, so a save
    /// costs what changed, not the history (append_file_checkpointer's rule: a
    /// summary or an inserted message changes the last ones and is seen; an
    /// edit in place older than the window, keeping the count, is not). Only
    /// a run's own checkpoints (source "loop") are compared so; a client's
    /// state update or a fork is compared whole. 0 compares every message.
    std::size_t verify_window = 32;
    /// The worker id of this process's run queue (postgres_run_queue_options),
    /// or empty. Set, a run's own checkpoint (source "loop") is written only
    /// while this worker holds the run (its row `running`, owned by it),
    /// checked in the checkpoint's transaction: a process paused past its
    /// lease cannot add a checkpoint behind the worker that took the run over.
    /// A checkpoint so refused is dropped, as the run's other writes are.
    std::string worker_id{};
};

class postgres_store final : public store {
public:
    /// `executor` runs all of `db`'s work (the pool's thread).
    postgres_store(postgres::pool& db, boost::asio::any_io_executor executor,
                   postgres_store_options options = {})
        : db_(db), executor_(std::move(executor)), o_(options) {
        if (o_.snapshot_every == 0) o_.snapshot_every = 1;
    }

    const postgres_store_options& options() const noexcept { return o_; }

    task<void> put_thread(boost::json::object t) override { return on_executor(write_thread(std::move(t))); }
    task<std::optional<boost::json::object>> thread(std::string thread_id) override {
        return on_executor(read_thread(std::move(thread_id)));
    }
    task<bool> update_thread(std::string thread_id, boost::json::object fields,
                             boost::json::object metadata) override {
        return on_executor(change_thread(std::move(thread_id), std::move(fields), std::move(metadata)));
    }
    task<bool> erase_thread(std::string thread_id) override {
        return on_executor(delete_thread(std::move(thread_id)));
    }
    task<std::vector<boost::json::object>> threads() override { return on_executor(read_threads()); }

    task<void> add_checkpoint(checkpoint_record c) override {
        return on_executor(write_checkpoint(std::move(c)));
    }
    task<std::vector<checkpoint_record>> checkpoints(std::string thread_id) override {
        return on_executor(read_checkpoints(std::move(thread_id)));
    }
    task<std::optional<checkpoint_record>> last_checkpoint(std::string thread_id) override {
        return on_executor(read_last_checkpoint(std::move(thread_id)));
    }
    task<std::size_t> checkpoint_count(std::string thread_id) override {
        return on_executor(count_checkpoints(std::move(thread_id)));
    }
    task<void> truncate_checkpoints(std::string thread_id, std::size_t keep) override {
        return on_executor(delete_checkpoints_after(std::move(thread_id), keep));
    }

    task<void> put_run(boost::json::object r) override { return on_executor(write_run(std::move(r))); }
    task<std::optional<boost::json::object>> run(std::string run_id) override {
        return on_executor(read_run(std::move(run_id)));
    }
    task<std::vector<boost::json::object>> runs(std::string thread_id) override {
        return on_executor(read_runs(std::move(thread_id)));
    }
    task<bool> erase_run(std::string run_id) override { return on_executor(delete_run(std::move(run_id))); }

    /// The checkpoint `checkpoint_id` of the thread (the last one of that id); nullopt when unknown.
    task<std::optional<checkpoint_record>> checkpoint(std::string thread_id, std::string checkpoint_id) {
        return on_executor(read_checkpoint(std::move(thread_id), std::move(checkpoint_id)));
    }

    /// Drops the thread's oldest checkpoints, keeping the last `keep_last`
    /// whole (the oldest kept becomes a snapshot first). Returns how many were
    /// dropped. What resume needs is the last checkpoint; what history shows,
    /// the kept ones.
    task<std::size_t> prune(std::string thread_id, std::size_t keep_last) {
        return on_executor(delete_checkpoints_before(std::move(thread_id), keep_last));
    }

    /// The bytes the thread's checkpoints take as stored JSON text (records,
    /// snapshots and deltas; before PostgreSQL's own compression).
    task<std::size_t> checkpoint_bytes(std::string thread_id) {
        return on_executor(count_checkpoint_bytes(std::move(thread_id)));
    }

private:
    /// What this process knows of a thread's last checkpoint.
    struct thread_tail {
        std::int64_t seq = -1; ///< -1: the thread has no checkpoint
        std::string checkpoint_id;
        std::string version;            ///< the row's xmin: a write by another transaction changes it
        std::int64_t snapshot_seq = -1; ///< the last snapshot's row
        std::size_t snapshot_bytes = 0; ///< its size
        std::size_t delta_bytes = 0;    ///< the size of the deltas after it
        std::optional<boost::json::value> values;
    };

    /// The last checkpoints of the threads used last, bounded.
    class tail_cache {
    public:
        explicit tail_cache(std::size_t capacity) : capacity_(capacity) {}

        /// The thread's entry, removed: a write owns it until it puts one back.
        std::optional<thread_tail> take(const std::string& thread_id) {
            auto it = index_.find(thread_id);
            if (it == index_.end()) return std::nullopt;
            thread_tail t = std::move(it->second->second);
            order_.erase(it->second);
            index_.erase(it);
            return t;
        }

        /// Remembers `t`, unless an entry of a later row is there already.
        void put(const std::string& thread_id, thread_tail t) {
            if (capacity_ == 0) return;
            if (auto it = index_.find(thread_id); it != index_.end()) {
                if (it->second->second.seq > t.seq) return;
                order_.erase(it->second);
                index_.erase(it);
            }
            order_.emplace_front(thread_id, std::move(t));
            index_.emplace(thread_id, order_.begin());
            if (order_.size() > capacity_) {
                index_.erase(order_.back().first);
                order_.pop_back();
            }
        }

        void forget(const std::string& thread_id) { (void)take(thread_id); }

    private:
        using entry = std::pair<std::string, thread_tail>;
        std::size_t capacity_;
        std::list<entry> order_; ///< most recently used first
        std::unordered_map<std::string, std::list<entry>::iterator> index_;
    };

    // Runs `body` on the pool's executor; the caller resumes on its own. (The
    // bodies check their arguments too: their errors reach the caller's co_await.)
    template <class T>
    task<T> on_executor(task<T> body) {
        return detail::on_pool(executor_, std::move(body));
    }

    // A thread that checkpoints or runs name before it was put (as file_store makes it).
    static std::string minimal_thread(const std::string& thread_id) {
        return boost::json::serialize(boost::json::object{{"thread_id", thread_id}});
    }

    static boost::json::object object_of(std::string_view text) {
        auto v = boost::json::parse(text);
        if (!v.is_object()) throw std::runtime_error("postgres_store: a stored record is not a JSON object");
        return std::move(v.as_object());
    }

    // --- threads and runs ---------------------------------------------------

    task<void> write_thread(boost::json::object t) {
        const std::string thread_id = detail::record_key(t, "thread_id");
        const std::string record = boost::json::serialize(t);
        co_await db_.query("INSERT INTO agentware_threads (thread_id, record) VALUES ($1, $2::jsonb) "
                           "ON CONFLICT (thread_id) DO UPDATE SET record = excluded.record, "
                           "updated_at = clock_timestamp()",
                           thread_id, record);
    }

    // The run queue makes a thread's row with an empty record: it still names its thread.
    static boost::json::object thread_of(const postgres::result& r, std::size_t row) {
        auto t = object_of(r.as<std::string_view>(row, "record"));
        if (!t.contains("thread_id")) t["thread_id"] = r.as<std::string_view>(row, "thread_id");
        return t;
    }

    task<bool> change_thread(std::string thread_id, boost::json::object fields,
                             boost::json::object metadata) {
        // One statement: the fields another process changed meanwhile stay.
        auto r = co_await db_.query(
            "UPDATE agentware_threads SET updated_at = clock_timestamp(), record = CASE "
            "WHEN $3::jsonb = '{}'::jsonb THEN record || $2::jsonb "
            "ELSE jsonb_set(record || $2::jsonb, '{metadata}', CASE WHEN jsonb_typeof(record->'metadata') = "
            "'object' THEN record->'metadata' ELSE '{}'::jsonb END || $3::jsonb) END "
            "WHERE thread_id = $1 RETURNING 1",
            thread_id, boost::json::serialize(fields), boost::json::serialize(metadata));
        co_return !r.empty();
    }

    task<std::optional<boost::json::object>> read_thread(std::string thread_id) {
        auto r = co_await db_.query(
            "SELECT thread_id, record::text AS record FROM agentware_threads WHERE thread_id = $1",
            thread_id);
        if (r.empty()) co_return std::nullopt;
        co_return thread_of(r, 0);
    }

    task<std::vector<boost::json::object>> read_threads() {
        auto r = co_await db_.query(
            "SELECT thread_id, record::text AS record FROM agentware_threads ORDER BY thread_id");
        std::vector<boost::json::object> out;
        out.reserve(r.size());
        for (std::size_t i = 0; i < r.size(); ++i)
            out.push_back(thread_of(r, i));
        co_return out;
    }

    // Its runs and checkpoints go with it (ON DELETE CASCADE).
    task<bool> delete_thread(std::string thread_id) {
        auto r = co_await db_.query("DELETE FROM agentware_threads WHERE thread_id = $1", thread_id);
        tails_.forget(thread_id);
        co_return r.affected() > 0;
    }

    task<void> write_run(boost::json::object r) {
        const std::string run_id = detail::record_key(r, "run_id");
        const std::string thread_id = detail::record_key(r, "thread_id");
        // The run's thread is made in the same statement: runs reference threads.
        co_await db_.query(
            "WITH thread AS (INSERT INTO agentware_threads (thread_id, record) VALUES ($2, $6::jsonb) "
            "ON CONFLICT DO NOTHING) "
            "INSERT INTO agentware_runs (run_id, thread_id, assistant_id, status, record) "
            "VALUES ($1, $2, $3, $4, $5::jsonb) ON CONFLICT (run_id) DO UPDATE SET "
            "thread_id = excluded.thread_id, assistant_id = excluded.assistant_id, status = excluded.status, "
            "record = excluded.record, updated_at = clock_timestamp()",
            run_id, thread_id, detail::string_or(r, "assistant_id", ""),
            detail::string_or(r, "status", "pending"), boost::json::serialize(r), minimal_thread(thread_id));
    }

    // A run's record with its status from the status column: the run queue
    // moves a run along (claimed, requeued, reaped) by that column alone.
    static inline const std::string run_columns =
        "(record || jsonb_build_object('status', status))::text AS record";

    task<std::optional<boost::json::object>> read_run(std::string run_id) {
        auto r =
            co_await db_.query("SELECT " + run_columns + " FROM agentware_runs WHERE run_id = $1", run_id);
        if (r.empty()) co_return std::nullopt;
        co_return object_of(r.as<std::string_view>(0, "record"));
    }

    task<std::vector<boost::json::object>> read_runs(std::string thread_id) {
        auto r = co_await db_.query("SELECT " + run_columns +
                                        " FROM agentware_runs WHERE thread_id = $1 "
                                        "ORDER BY created_at, run_id",
                                    thread_id);
        std::vector<boost::json::object> out;
        out.reserve(r.size());
        for (std::size_t i = 0; i < r.size(); ++i)
            out.push_back(object_of(r.as<std::string_view>(i, "record")));
        co_return out;
    }

    task<bool> delete_run(std::string run_id) {
        auto r = co_await db_.query("DELETE FROM agentware_runs WHERE run_id = $1", run_id);
        co_return r.affected() > 0;
    }

    // --- checkpoints: deltas ------------------------------------------------

    static const boost::json::array* messages_of(const boost::json::object& values) {
        const auto* m = values.if_contains("messages");
        return m != nullptr && m->is_array() ? &m->as_array() : nullptr;
    }

    // The top-level keys other than the messages (when those are a list).
    static boost::json::object fields_of(const boost::json::object& values) {
        boost::json::object out;
        for (const auto& kv : values)
            if (kv.key() != "messages" || !kv.value().is_array()) out.emplace(kv.key(), kv.value());
        return out;
    }

    /// The delta that turns `before` into `after`; nullopt when a snapshot
    /// serves better: the two are not both objects with (or both without) a
    /// message list, or most of the messages were rewritten (the delta would be
    /// nearly the snapshot's size, and the snapshot shortens later reads).
    static std::optional<boost::json::object> delta_of(const std::optional<boost::json::value>& before,
                                                       const std::optional<boost::json::value>& after,
                                                       std::size_t window) {
        if (!before || !after || !before->is_object() || !after->is_object()) return std::nullopt;
        const auto& old_values = before->as_object();
        const auto& new_values = after->as_object();
        const auto* old_messages = messages_of(old_values);
        const auto* new_messages = messages_of(new_values);
        if ((old_messages == nullptr) != (new_messages == nullptr)) return std::nullopt;
        boost::json::object delta;
        if (new_messages != nullptr) {
            const std::size_t kept =
                window == 0 ? agentware::detail::kept_prefix(*old_messages, *new_messages)
                            : agentware::detail::kept_prefix_within(*old_messages, *new_messages, window);
            if (kept * 2 < new_messages->size()) return std::nullopt;
            delta["at"] = kept;
            if (kept < new_messages->size()) {
                boost::json::array appended(new_messages->begin() + static_cast<std::ptrdiff_t>(kept),
                                            new_messages->end());
                delta["append"] = std::move(appended);
            }
        }
        auto [set, unset] = agentware::detail::changed_fields(fields_of(old_values), fields_of(new_values));
        if (!set.empty()) delta["set"] = std::move(set);
        if (!unset.empty()) delta["unset"] = std::move(unset);
        return delta;
    }

    [[noreturn]] static void corrupt(std::string_view thread_id, std::int64_t seq, std::string_view why) {
        throw std::runtime_error("postgres_store: checkpoint row " + std::to_string(seq) + " of thread " +
                                 std::string(thread_id) + " " + std::string(why));
    }

    // Applies one stored row to the values of the row before it.
    static void apply_row(std::optional<boost::json::value>& values, bool snapshot,
                          std::optional<std::string_view> state, std::string_view thread_id,
                          std::int64_t seq) {
        if (snapshot) {
            values = state ? std::optional<boost::json::value>(boost::json::parse(*state)) : std::nullopt;
            return;
        }
        if (!values || !values->is_object()) corrupt(thread_id, seq, "is a delta without a state before it");
        if (!state) corrupt(thread_id, seq, "is a delta without its text");
        auto parsed = boost::json::parse(*state);
        if (!parsed.is_object()) corrupt(thread_id, seq, "is a delta that is not a JSON object");
        if (const auto why = agentware::detail::apply_state_changes(values->as_object(), parsed.as_object());
            !why.empty())
            corrupt(thread_id, seq, why);
    }

    static checkpoint_record with_values(std::string_view record,
                                         const std::optional<boost::json::value>& values) {
        auto c = object_of(record);
        if (values) c["values"] = *values;
        return c;
    }

    // The thread's ($1) rows, with what rebuilding checkpoints needs.
    static constexpr std::string_view select_rows =
        "SELECT seq, snapshot, checkpoint_id, xmin::text AS version, record::text AS record, "
        "state::text AS state FROM agentware_checkpoints WHERE thread_id = $1";

    // The rows that rebuild the checkpoint whose seq `upto` (SQL) is: the last
    // snapshot at or before it and the deltas after that. None when `upto` is NULL.
    static std::string chain_sql(std::string_view upto) {
        std::string sql(select_rows);
        sql += " AND seq <= ";
        sql += upto;
        sql += " AND seq >= (SELECT max(seq) FROM agentware_checkpoints WHERE thread_id = $1 AND snapshot "
               "AND seq <= ";
        sql += upto;
        sql += ") ORDER BY seq";
        return sql;
    }

    // The rows of the thread's last checkpoint.
    static inline const std::string tail_sql =
        chain_sql("(SELECT max(seq) FROM agentware_checkpoints WHERE thread_id = $1)");

    // Rebuilds the last checkpoint of rows that chain_sql selected.
    static thread_tail tail_of(const postgres::result& r, std::string_view thread_id) {
        thread_tail t;
        for (std::size_t i = 0; i < r.size(); ++i) {
            const auto seq = r.as<std::int64_t>(i, "seq");
            const bool snapshot = r.as<bool>(i, "snapshot");
            const auto state = r.text(i, "state");
            apply_row(t.values, snapshot, state, thread_id, seq);
            const std::size_t bytes = state ? state->size() : 0;
            if (snapshot) {
                t.snapshot_seq = seq;
                t.snapshot_bytes = bytes;
                t.delta_bytes = 0;
            } else {
                t.delta_bytes += bytes;
            }
            t.seq = seq;
        }
        if (!r.empty()) {
            t.checkpoint_id = r.as<std::string>(r.size() - 1, "checkpoint_id");
            t.version = r.as<std::string>(r.size() - 1, "version");
        }
        return t;
    }

    // Whether `t` is the thread's last row as the database has it now (`last`: that row, or none).
    static bool still_last(const thread_tail& t, const postgres::result& last) {
        if (last.empty()) return t.seq < 0;
        return t.seq == last.as<std::int64_t>(0, "seq") &&
               t.checkpoint_id == last.as<std::string_view>(0, "checkpoint_id") &&
               t.version == last.as<std::string_view>(0, "version");
    }

    // A record's `changes`, taken out of it; nullopt when it has whole `values`.
    static std::optional<boost::json::object> take_changes(checkpoint_record& c) {
        auto it = c.find("changes");
        if (it == c.end()) return std::nullopt;
        if (!it->value().is_object())
            throw std::invalid_argument("postgres_store: a checkpoint's \"changes\" must be an object");
        if (c.contains("values"))
            throw std::invalid_argument(
                "postgres_store: a checkpoint holds \"values\" or \"changes\", not both");
        boost::json::object changes = std::move(it->value().as_object());
        c.erase(it);
        return changes;
    }

    // Whether `changes` can be stored as the row after `tail` as it is: a
    // delta while the deltas since the snapshot weigh less than it, and while
    // it keeps at least half of the messages (else the snapshot shortens later reads).
    bool stored_as_delta(const thread_tail& tail, const boost::json::object& changes,
                         std::size_t text_bytes) const {
        if (tail.seq < 0 || static_cast<std::size_t>(tail.seq + 1 - tail.snapshot_seq) >= o_.snapshot_every)
            return false;
        if (tail.delta_bytes + text_bytes >= tail.snapshot_bytes) return false;
        if (const auto* at = changes.if_contains("at")) {
            const auto* append = changes.if_contains("append");
            const std::size_t added = append != nullptr && append->is_array() ? append->as_array().size() : 0;
            if (at->to_number<std::size_t>() * 2 < at->to_number<std::size_t>() + added) return false;
        }
        return true;
    }

    task<void> write_checkpoint(checkpoint_record c) {
        const std::string thread_id = detail::record_key(c, "thread_id");
        std::optional<boost::json::object> changes = take_changes(c);
        std::optional<boost::json::value> values;
        if (auto it = c.find("values"); it != c.end()) {
            values = std::move(it->value());
            c.erase(it);
        }
        const std::string checkpoint_id = detail::string_or(c, "checkpoint_id", "");
        const std::string parent_id = detail::string_or(c, "parent_checkpoint_id", "");
        // A run's own saves compare the last messages; a client's update (or a
        // fork) may edit any message, and is compared whole.
        const std::size_t window = detail::string_or(c, "source", "") == "loop" ? o_.verify_window : 0;
        const std::string record = boost::json::serialize(c);
        std::optional<thread_tail> known = tails_.take(thread_id);
        // Set when the row written is `changes` after the remembered tail: its
        // values are made from the tail's after the commit, without a copy.
        bool changes_after_known = false;
        const std::string run_id = detail::string_or(c, "run_id", "");
        const bool fenced =
            !o_.worker_id.empty() && !run_id.empty() && detail::string_or(c, "source", "") == "loop";
        bool refused = false;

        auto written =
            co_await postgres::in_transaction(db_, [&](postgres::connection& db) -> task<thread_tail> {
                changes_after_known = false;
                refused = false;
                // A thread's checkpoint writers take turns (adds, truncations, prunes, in
                // any process): the last row read below stays the last until this commits.
                if (!co_await lock_thread(db, thread_id)) {
                    co_await db.query(
                        "INSERT INTO agentware_threads (thread_id, record) VALUES ($1, $2::jsonb) "
                        "ON CONFLICT DO NOTHING",
                        thread_id, minimal_thread(thread_id));
                    co_await lock_thread(db, thread_id);
                }
                if (fenced) {
                    // After the thread, in the order a run's creation locks them. FOR SHARE:
                    // a worker's claim of the run passes it by until this write commits.
                    auto owned =
                        co_await db.query("SELECT 1 FROM agentware_runs WHERE run_id = $1 AND owner = $2 "
                                          "AND status = 'running' FOR SHARE",
                                          run_id, o_.worker_id);
                    if (owned.empty()) {
                        refused = true;
                        co_return thread_tail{};
                    }
                }
                auto last =
                    co_await db.query("SELECT seq, checkpoint_id, xmin::text AS version FROM "
                                      "agentware_checkpoints WHERE thread_id = $1 ORDER BY seq DESC LIMIT 1",
                                      thread_id);
                // Written again after a lost connection whose commit had landed: done.
                if (!last.empty() && last.as<std::string_view>(0, "checkpoint_id") == checkpoint_id) {
                    auto tail = co_await db.query(tail_sql, thread_id);
                    co_return tail_of(tail, thread_id);
                }
                if (!known || !still_last(*known, last)) {
                    if (last.empty()) {
                        known = thread_tail{};
                    } else {
                        auto tail = co_await db.query(tail_sql, thread_id);
                        known = tail_of(tail, thread_id);
                    }
                }

                thread_tail next;
                next.seq = known->seq + 1;
                std::optional<boost::json::object> delta;
                std::optional<std::string> state;
                if (changes && known->seq >= 0 && known->checkpoint_id == parent_id && known->values &&
                    known->values->is_object()) {
                    // The usual save of a run: what changed since the thread's last row.
                    if (const auto why =
                            agentware::detail::state_changes_error(known->values->as_object(), *changes);
                        !why.empty())
                        throw std::invalid_argument("postgres_store: checkpoint " + checkpoint_id + " " +
                                                    std::string(why));
                    state = boost::json::serialize(*changes);
                    if (stored_as_delta(*known, *changes, state->size())) {
                        delta = *changes;
                        changes_after_known = true;
                    } else {
                        values = *known->values; // a snapshot: the whole state, made once
                        auto applied = *changes;
                        agentware::detail::apply_state_changes(values->as_object(), applied);
                        state.reset();
                    }
                } else if (changes) {
                    // Another row came between: the changes apply to their parent's values.
                    auto base = co_await db.query(chain_sql("(SELECT max(seq) FROM agentware_checkpoints "
                                                            "WHERE thread_id = $1 AND checkpoint_id = $2)"),
                                                  thread_id, parent_id);
                    if (base.empty())
                        throw std::invalid_argument("postgres_store: checkpoint " + checkpoint_id +
                                                    " follows " + parent_id + ", which thread " + thread_id +
                                                    " does not have");
                    values = tail_of(base, thread_id).values;
                    auto applied = *changes;
                    if (!values || !values->is_object())
                        throw std::invalid_argument("postgres_store: checkpoint " + checkpoint_id +
                                                    " changes a state that is not an object");
                    if (const auto why = agentware::detail::apply_state_changes(values->as_object(), applied);
                        !why.empty())
                        throw std::invalid_argument("postgres_store: checkpoint " + checkpoint_id + " " +
                                                    std::string(why));
                }
                if (!changes_after_known) {
                    if (known->seq >= 0 &&
                        static_cast<std::size_t>(next.seq - known->snapshot_seq) < o_.snapshot_every)
                        delta = delta_of(known->values, values, window);
                    if (delta) {
                        state = boost::json::serialize(*delta);
                        if (known->delta_bytes + state->size() >= known->snapshot_bytes) delta.reset();
                    }
                    if (!delta && values) state = boost::json::serialize(*values);
                }
                auto made = co_await db.query(
                    "INSERT INTO agentware_checkpoints (thread_id, seq, checkpoint_id, snapshot, record, "
                    "state) "
                    "VALUES ($1, $2, $3, $4, $5::jsonb, $6::json) RETURNING xmin::text AS version",
                    thread_id, next.seq, checkpoint_id, !delta.has_value(), record, state);
                next.checkpoint_id = checkpoint_id;
                next.version = made.as<std::string>(0, "version");
                const std::size_t bytes = state ? state->size() : 0;
                next.snapshot_seq = delta ? known->snapshot_seq : next.seq;
                next.snapshot_bytes = delta ? known->snapshot_bytes : bytes;
                next.delta_bytes = delta ? known->delta_bytes + bytes : 0;
                co_return next;
            });
        if (refused) {
            if (known) tails_.put(thread_id, std::move(*known));
            co_return;
        }
        if (changes_after_known) {
            written.values = std::move(known->values);
            agentware::detail::apply_state_changes(written.values->as_object(), *changes);
        } else if (!written.values) {
            written.values = std::move(values);
        }
        tails_.put(thread_id, std::move(written));
    }

    // --- checkpoints: reading -----------------------------------------------

    task<std::vector<checkpoint_record>> read_checkpoints(std::string thread_id) {
        auto r = co_await db_.query(std::string(select_rows) + " ORDER BY seq", thread_id);
        std::vector<checkpoint_record> out;
        out.reserve(r.size());
        std::optional<boost::json::value> values;
        for (std::size_t i = 0; i < r.size(); ++i) {
            apply_row(values, r.as<bool>(i, "snapshot"), r.text(i, "state"), thread_id,
                      r.as<std::int64_t>(i, "seq"));
            out.push_back(with_values(r.as<std::string_view>(i, "record"), values));
        }
        co_return out;
    }

    task<std::optional<checkpoint_record>> read_last_checkpoint(std::string thread_id) {
        auto r = co_await db_.query(tail_sql, thread_id);
        if (r.empty()) co_return std::nullopt;
        thread_tail t = tail_of(r, thread_id);
        auto c = with_values(r.as<std::string_view>(r.size() - 1, "record"), t.values);
        // A resumed thread's next write follows this one: remember it.
        tails_.put(thread_id, std::move(t));
        co_return c;
    }

    task<std::optional<checkpoint_record>> read_checkpoint(std::string thread_id, std::string checkpoint_id) {
        auto r = co_await db_.query(
            chain_sql(
                "(SELECT max(seq) FROM agentware_checkpoints WHERE thread_id = $1 AND checkpoint_id = $2)"),
            thread_id, checkpoint_id);
        if (r.empty()) co_return std::nullopt;
        const thread_tail t = tail_of(r, thread_id);
        co_return with_values(r.as<std::string_view>(r.size() - 1, "record"), t.values);
    }

    task<std::size_t> count_checkpoints(std::string thread_id) {
        auto r = co_await db_.query("SELECT count(*) AS n FROM agentware_checkpoints WHERE thread_id = $1",
                                    thread_id);
        co_return r.as<std::size_t>(0, "n");
    }

    task<std::size_t> count_checkpoint_bytes(std::string thread_id) {
        auto r = co_await db_.query("SELECT coalesce(sum(octet_length(record::text) + "
                                    "coalesce(octet_length(state::text), 0)), 0) AS n "
                                    "FROM agentware_checkpoints WHERE thread_id = $1",
                                    thread_id);
        co_return r.as<std::size_t>(0, "n");
    }

    // --- checkpoints: dropping ----------------------------------------------

    // Takes the thread's turn among checkpoint writers; false when the thread is unknown.
    static task<bool> lock_thread(postgres::connection& db, std::string thread_id) {
        auto r = co_await db.query("SELECT 1 FROM agentware_threads WHERE thread_id = $1 FOR NO KEY UPDATE",
                                   thread_id);
        co_return !r.empty();
    }

    task<void> delete_checkpoints_after(std::string thread_id, std::size_t keep) {
        const auto dropped =
            co_await postgres::in_transaction(db_, [&](postgres::connection& db) -> task<std::uint64_t> {
                if (!co_await lock_thread(db, thread_id)) co_return 0;
                auto r =
                    co_await db.query("DELETE FROM agentware_checkpoints WHERE thread_id = $1 AND seq IN "
                                      "(SELECT seq FROM agentware_checkpoints WHERE thread_id = $1 "
                                      "ORDER BY seq OFFSET $2)",
                                      thread_id, keep);
                co_return r.affected();
            });
        if (dropped > 0) tails_.forget(thread_id);
    }

    task<std::size_t> delete_checkpoints_before(std::string thread_id, std::size_t keep_last) {
        const auto dropped =
            co_await postgres::in_transaction(db_, [&](postgres::connection& db) -> task<std::uint64_t> {
                if (!co_await lock_thread(db, thread_id)) co_return 0;
                std::int64_t first_kept = std::numeric_limits<std::int64_t>::max();
                if (keep_last > 0) {
                    auto first = co_await db.query("SELECT seq, snapshot FROM agentware_checkpoints WHERE "
                                                   "thread_id = $1 ORDER BY seq DESC OFFSET $2 LIMIT 1",
                                                   thread_id, keep_last - 1);
                    if (first.empty()) co_return 0; // no more than keep_last
                    first_kept = first.as<std::int64_t>(0, "seq");
                    if (!first.as<bool>(0, "snapshot")) {
                        auto chain = co_await db.query(chain_sql("$2"), thread_id, first_kept);
                        const thread_tail t = tail_of(chain, thread_id);
                        std::optional<std::string> state;
                        if (t.values) state = boost::json::serialize(*t.values);
                        co_await db.query(
                            "UPDATE agentware_checkpoints SET snapshot = true, state = $3::json "
                            "WHERE thread_id = $1 AND seq = $2",
                            thread_id, first_kept, state);
                    }
                }
                auto r =
                    co_await db.query("DELETE FROM agentware_checkpoints WHERE thread_id = $1 AND seq < $2",
                                      thread_id, first_kept);
                co_return r.affected();
            });
        // The last row may have become a snapshot (keep_last 1): read it again when next written.
        if (dropped > 0) tails_.forget(thread_id);
        co_return static_cast<std::size_t>(dropped);
    }

    postgres::pool& db_;
    boost::asio::any_io_executor executor_;
    postgres_store_options o_;
    tail_cache tails_{o_.cached_threads};
};

} // namespace agentware::server

#endif
