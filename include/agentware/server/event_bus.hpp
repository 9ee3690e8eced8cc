#ifndef AGENTWARE_SERVER_EVENT_BUS_HPP
#define AGENTWARE_SERVER_EVENT_BUS_HPP

// A run's events across processes: the process that executes a run appends
// them, in order, each with its id (its place in the run's stream); a
// process whose client follows the run (a join, a stream, a reconnect with
// Last-Event-ID) reads them from the id it has. The run manager works through
// this interface; postgres_event_bus.hpp keeps the events in the database the
// processes share. One process needs none: its runs' streams are in memory.

#include <agentware/server/run_stream.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace agentware::server {

class event_bus {
public:
    template <class T>
    using task = boost::asio::awaitable<T>;

    virtual ~event_bus() = default;

    /// Appends events of a run; their ids follow the last appended without a hole.
    virtual task<void> append(std::string run_id, std::vector<stream_event> events) = 0;
    /// The run's events with an id from `from` on, oldest first (at most `limit`).
    virtual task<std::vector<stream_event>> read(std::string run_id, std::size_t from,
                                                 std::size_t limit = 1000) = 0;
    /// Drops the events of runs that ended longer than `older_than` ago.
    virtual task<std::size_t> prune(std::chrono::seconds older_than) = 0;

    /// Calls `on_append` with a run's id when events were appended to it, from
    /// any thread, until unwatch(). A bus that cannot tell never calls it: the
    /// readers also look on their own.
    virtual void watch(std::function<void(std::string)> on_append) = 0;
    virtual void unwatch() = 0;
};

} // namespace agentware::server

#endif
