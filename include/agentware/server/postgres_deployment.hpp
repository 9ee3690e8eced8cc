#ifndef AGENTWARE_SERVER_POSTGRES_DEPLOYMENT_HPP
#define AGENTWARE_SERVER_POSTGRES_DEPLOYMENT_HPP

// One process of a deployment on a shared PostgreSQL database: the pool (on a
// thread of its own), the schema brought up to date, and the store, the run
// queue and the event bus on it, wired as they must be (the store fences a
// run's checkpoints with the queue's worker id). `agentware serve --database`
// is this; a program of its own makes one and hands it to its server.

#include <agentware/postgres/pool_thread.hpp>
#include <agentware/server/event_bus.hpp>
#include <agentware/server/postgres_event_bus.hpp>
#include <agentware/server/postgres_run_queue.hpp>
#include <agentware/server/postgres_schema.hpp>
#include <agentware/server/postgres_store.hpp>
#include <agentware/server/run_manager.hpp>

#include <memory>
#include <string>
#include <utility>

namespace agentware::server {

struct postgres_deployment_options {
    /// The database's pool: its connection string (never logged), size,
    /// timeouts, and how long a lost connection is retried.
    postgres::pool_options pool{};
    /// The run queue's options; `worker_id` names this process (unique per
    /// process) and is also the store's fence.
    postgres_run_queue_options queue{};
    postgres_store_options store{};
    /// The runs' events; null: PostgreSQL's own bus (postgres_event_bus).
    /// Redis's (redis_event_bus.hpp) goes here.
    std::unique_ptr<event_bus> events{};
};

class postgres_deployment {
public:
    /// Connects, applies the schema's missing migrations (under the advisory
    /// lock, so processes starting together apply each once), and makes the
    /// store, the queue and the bus. Throws postgres::error when the database
    /// cannot be reached or migrated.
    explicit postgres_deployment(postgres_deployment_options o)
        : database_(std::make_unique<postgres::pool_thread>(std::move(o.pool))) {
        migrations_applied_ = database_->wait(postgres_schema::migrate(database_->db()));
        o.store.worker_id = o.queue.worker_id;
        store_ = std::make_unique<postgres_store>(database_->db(), database_->executor(), std::move(o.store));
        queue_ =
            std::make_unique<postgres_run_queue>(database_->db(), std::move(o.queue), database_->executor());
        events_ = o.events ? std::move(o.events)
                           : std::make_unique<postgres_event_bus>(database_->db(), database_->executor());
    }

    postgres_deployment(const postgres_deployment&) = delete;
    postgres_deployment& operator=(const postgres_deployment&) = delete;

    /// How many migrations this start applied (0: the schema was current).
    int migrations_applied() const noexcept { return migrations_applied_; }

    postgres::pool_thread& database() noexcept { return *database_; }
    postgres_store& store() noexcept { return *store_; }
    postgres_run_queue& queue() noexcept { return *queue_; }
    event_bus& events() noexcept { return *events_; }

    /// Makes `runs` (a server's run_manager_options) work the shared queue
    /// and carry its events on the bus; the store is the server's own
    /// argument.
    void use_in(run_manager_options& runs) noexcept {
        runs.queue = queue_.get();
        runs.events = events_.get();
    }

    /// Stops listening for runs and events and ends the pool's thread (the
    /// statements in flight with it), after the server stopped and before it
    /// is destroyed: nothing of the deployment is used afterwards.
    void stop() {
        queue_->unwatch();
        events_->unwatch();
        database_.reset();
    }

private:
    // Declared first: the others use its pool, and go before it.
    std::unique_ptr<postgres::pool_thread> database_;
    int migrations_applied_ = 0;
    std::unique_ptr<postgres_store> store_;
    std::unique_ptr<postgres_run_queue> queue_;
    std::unique_ptr<event_bus> events_;
};

} // namespace agentware::server

#endif
