#ifndef AGENTWARE_SERVER_STORE_HPP
#define AGENTWARE_SERVER_STORE_HPP

// What the server keeps: threads, their checkpoints and their runs. Records
// are the API's own JSON objects (a thread as GET /threads/{id} shows it, less
// its values; a run as GET .../runs/{id} shows it), so a store needs no schema
// of its own beyond the keys it indexes by. One interface, so that the
// embedded store (file_store.hpp) and a shared database (postgres_store.hpp)
// can stand behind the same server.
//
// Every call is a coroutine: a database answers after a round trip, and the
// server's event loop goes on serving other clients meanwhile. A store that
// has its answer at once (the embedded one) returns it without suspending.
// Arguments are taken by value: a coroutine may outlive its caller's temporaries.

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace agentware::server {

/// A checkpoint: the thread's whole state after a step of a run.
/// Keys: checkpoint_id, parent_checkpoint_id, thread_id, run_id, created_at,
/// step, source ("input", "loop", "update", "fork"), values (the agent
/// state's JSON form), metadata.
using checkpoint_record = boost::json::object;

class store {
public:
    template <class T>
    using task = boost::asio::awaitable<T>;

    virtual ~store() = default;

    /// Inserts or replaces the thread `t["thread_id"]`.
    virtual task<void> put_thread(boost::json::object t) = 0;
    virtual task<std::optional<boost::json::object>> thread(std::string thread_id) = 0;
    /// Removes the thread with its checkpoints and runs; false when unknown.
    virtual task<bool> erase_thread(std::string thread_id) = 0;
    /// Every thread (the server filters and sorts).
    virtual task<std::vector<boost::json::object>> threads() = 0;

    virtual task<void> add_checkpoint(checkpoint_record c) = 0;
    /// The thread's checkpoints, oldest first.
    virtual task<std::vector<checkpoint_record>> checkpoints(std::string thread_id) = 0;
    virtual task<std::optional<checkpoint_record>> last_checkpoint(std::string thread_id) = 0;
    virtual task<std::size_t> checkpoint_count(std::string thread_id) = 0;
    /// Keeps the first `keep` checkpoints of the thread (a rolled back run's are dropped).
    virtual task<void> truncate_checkpoints(std::string thread_id, std::size_t keep) = 0;

    /// Inserts or replaces the run `r["run_id"]` (of thread `r["thread_id"]`).
    virtual task<void> put_run(boost::json::object r) = 0;
    virtual task<std::optional<boost::json::object>> run(std::string run_id) = 0;
    /// The thread's runs, oldest first.
    virtual task<std::vector<boost::json::object>> runs(std::string thread_id) = 0;
    virtual task<bool> erase_run(std::string run_id) = 0;
};

} // namespace agentware::server

#endif
