#ifndef AGENTWARE_SERVER_POSTGRES_EVENT_BUS_HPP
#define AGENTWARE_SERVER_POSTGRES_EVENT_BUS_HPP

// The runs' events in the PostgreSQL database a deployment's processes share
// (table agentware_events, postgres_schema.hpp), for deployments without
// Redis: the executing process appends a batch of events in one statement
// and NOTIFYs the run's id; a following process reads from the id it has.
// The events go with their run (a foreign key), and prune() drops those of
// runs long over.

#include <agentware/postgres/pool.hpp>
#include <agentware/server/detail/postgres_calls.hpp>
#include <agentware/server/event_bus.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace agentware::server {

class postgres_event_bus final : public event_bus {
public:
    /// NOTIFY channel: events were appended to a run (payload: its id).
    static constexpr const char* channel = "agentware_events";

    /// `executor`, when given, runs all of `db`'s work (the pool's thread).
    explicit postgres_event_bus(postgres::pool& db, boost::asio::any_io_executor executor = {})
        : db_(db), executor_(std::move(executor)) {}
    ~postgres_event_bus() override { unwatch(); }

    task<void> append(std::string run_id, std::vector<stream_event> events) override {
        return detail::on_pool(executor_, append_here(std::move(run_id), std::move(events)));
    }
    task<std::vector<stream_event>> read(std::string run_id, std::size_t from, std::size_t limit) override {
        return detail::on_pool(executor_, read_here(std::move(run_id), from, limit));
    }
    task<std::size_t> prune(std::chrono::seconds older_than) override {
        return detail::on_pool(executor_, prune_here(older_than));
    }

    void watch(std::function<void(std::string)> on_append) override {
        if (!executor_) throw std::logic_error("postgres_event_bus: watching needs the pool's executor");
        heard_.start(
            db_.options().conninfo, {channel}, executor_,
            [on_append = std::move(on_append)](const postgres::notification& n) { on_append(n.payload); },
            {});
    }
    void unwatch() override { heard_.stop(); }

private:
    task<void> append_here(std::string run_id, std::vector<stream_event> events) {
        if (events.empty()) co_return;
        // One statement for the batch: [[id, event, data], ...] as JSON.
        boost::json::array rows;
        rows.reserve(events.size());
        for (auto& e : events)
            rows.push_back(boost::json::array{static_cast<std::int64_t>(e.id), e.name, e.data});
        co_await db_.query(
            "WITH added AS (INSERT INTO agentware_events (run_id, id, event, data) "
            "SELECT $1, (e->>0)::bigint, e->>1, e->>2 FROM json_array_elements($2::json) e "
            // Written again after a lost connection: what had landed stays as it was.
            "ON CONFLICT DO NOTHING RETURNING 1) SELECT pg_notify($3, $1) WHERE EXISTS (SELECT 1 FROM added)",
            run_id, boost::json::serialize(rows), channel);
    }

    task<std::vector<stream_event>> read_here(std::string run_id, std::size_t from, std::size_t limit) {
        auto r =
            co_await db_.query("SELECT id, event, data FROM agentware_events WHERE run_id = $1 AND id >= $2 "
                               "ORDER BY id LIMIT $3",
                               run_id, static_cast<std::int64_t>(from), static_cast<std::int64_t>(limit));
        std::vector<stream_event> out;
        out.reserve(r.size());
        for (std::size_t i = 0; i < r.size(); ++i)
            out.push_back({r.as<std::string>(i, "event"), r.as<std::string>(i, "data"),
                           static_cast<std::size_t>(r.as<std::int64_t>(i, "id"))});
        co_return out;
    }

    task<std::size_t> prune_here(std::chrono::seconds older_than) {
        auto r = co_await db_.query(
            "DELETE FROM agentware_events e USING agentware_runs r WHERE e.run_id = r.run_id AND "
            "r.status NOT IN ('pending', 'running') AND r.updated_at < clock_timestamp() - $1::bigint * "
            "interval '1 second'",
            static_cast<std::int64_t>(older_than.count()));
        co_return r.affected();
    }

    postgres::pool& db_;
    boost::asio::any_io_executor executor_;
    detail::announcements heard_;
};

} // namespace agentware::server

#endif
