#ifndef AGENTWARE_SERVER_POSTGRES_SCHEMA_HPP
#define AGENTWARE_SERVER_POSTGRES_SCHEMA_HPP

// The server's tables in PostgreSQL and the migrations that make them. Every
// process of a deployment calls migrate() at start; an advisory lock lets
// one of them apply what is missing while the others wait, so the schema is
// made once however many start together, and a newer process brings an
// older database up to date.

#include <agentware/postgres/pool.hpp>

#include <boost/asio/awaitable.hpp>

#include <array>
#include <string_view>

namespace agentware::server::postgres_schema {

/// Migrations in order; each runs once, in its own transaction. Never edit
/// one that has shipped: add the next.
inline constexpr std::array<std::string_view, 3> migrations{
    // 1: threads and the run queue.
    R"sql(
CREATE TABLE agentware_threads (
    thread_id   text PRIMARY KEY,
    record      jsonb NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE agentware_runs (
    run_id              text PRIMARY KEY,
    thread_id           text NOT NULL REFERENCES agentware_threads ON DELETE CASCADE,
    assistant_id        text NOT NULL,
    status              text NOT NULL DEFAULT 'pending'
                        CHECK (status IN ('pending', 'running', 'success', 'error', 'timeout', 'interrupted')),
    record              jsonb NOT NULL DEFAULT '{}',
    multitask_strategy  text NOT NULL DEFAULT 'reject',
    idempotency_key     text UNIQUE,
    owner               text,
    lease_expires_at    timestamptz,
    attempt             integer NOT NULL DEFAULT 0,
    cancel_action       text CHECK (cancel_action IN ('interrupt', 'rollback')),
    cancel_requested_at timestamptz,
    stop_reason         text,
    created_at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at          timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- One running run per thread, whatever the workers do: the database says no.
CREATE UNIQUE INDEX agentware_runs_one_running ON agentware_runs (thread_id) WHERE status = 'running';
CREATE INDEX agentware_runs_pending ON agentware_runs (created_at) WHERE status = 'pending';
CREATE INDEX agentware_runs_thread ON agentware_runs (thread_id, created_at);
CREATE INDEX agentware_runs_lease ON agentware_runs (lease_expires_at) WHERE status = 'running';
)sql",
    // 2: checkpoints, each a snapshot of the state or what changed since the one before (postgres_store.hpp).
    R"sql(
CREATE TABLE agentware_checkpoints (
    thread_id     text NOT NULL REFERENCES agentware_threads ON DELETE CASCADE,
    seq           bigint NOT NULL,
    checkpoint_id text NOT NULL DEFAULT '',
    snapshot      boolean NOT NULL,
    -- The checkpoint less its values: jsonb, so its metadata can be searched.
    record        jsonb NOT NULL,
    -- The values (snapshot) or a delta; json keeps the text as written (jsonb
    -- would give the double 1E0 back as the integer 1, and reorder keys).
    -- NULL: the checkpoint had no values.
    state         json,
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (thread_id, seq)
);
-- Reading a checkpoint starts from the snapshot at or before it.
CREATE INDEX agentware_checkpoints_snapshots ON agentware_checkpoints (thread_id, seq) WHERE snapshot;
)sql",
    // 3: the runs' events, for the processes whose clients follow a run another executes
    // (postgres_event_bus.hpp).
    R"sql(
CREATE TABLE agentware_events (
    run_id     text NOT NULL REFERENCES agentware_runs ON DELETE CASCADE,
    id         bigint NOT NULL,
    event      text NOT NULL,
    data       text NOT NULL,
    PRIMARY KEY (run_id, id)
);
)sql",
};

/// The advisory lock's key: any number that no other program on the database uses.
inline constexpr long long lock_key = 0x6167656e7477;

/// Applies the migrations the database lacks; returns how many it applied.
inline boost::asio::awaitable<int> migrate(postgres::pool& db) {
    auto c = co_await db.acquire();
    co_await c->query("SELECT pg_advisory_lock($1)", lock_key);
    int applied = 0;
    try {
        co_await c->execute(
            "CREATE TABLE IF NOT EXISTS agentware_migrations ("
            "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())");
        const auto done =
            co_await c->query("SELECT coalesce(max(version), 0) AS v FROM agentware_migrations");
        for (auto version = done.as<int>(0, "v") + 1; version <= static_cast<int>(migrations.size());
             ++version) {
            co_await c->execute("BEGIN");
            co_await c->execute(std::string(migrations[static_cast<std::size_t>(version - 1)]));
            co_await c->query("INSERT INTO agentware_migrations (version) VALUES ($1)", version);
            co_await c->execute("COMMIT");
            ++applied;
        }
    } catch (const postgres::error&) {
        // Closing the session rolls back a migration half done and ends the lock.
        c->close();
        throw;
    }
    co_await c->query("SELECT pg_advisory_unlock($1)", lock_key);
    co_return applied;
}

} // namespace agentware::server::postgres_schema

#endif
