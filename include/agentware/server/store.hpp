#ifndef AGENTWARE_SERVER_STORE_HPP
#define AGENTWARE_SERVER_STORE_HPP

// What the server keeps: threads, their checkpoints and their runs. Records
// are the API's own JSON objects (a thread as GET /threads/{id} shows it, less
// its values; a run as GET .../runs/{id} shows it), so a store needs no schema
// of its own beyond the keys it indexes by. One interface, so that the
// embedded store (file_store.hpp) and a shared database can stand behind the
// same server.

#include <boost/json/object.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentware::server {

/// A checkpoint: the thread's whole state after a step of a run.
/// Keys: checkpoint_id, parent_checkpoint_id, thread_id, run_id, created_at,
/// step, source ("input", "loop", "update", "fork"), values (the agent
/// state's JSON form), metadata.
using checkpoint_record = boost::json::object;

class store {
public:
    virtual ~store() = default;

    /// Inserts or replaces the thread `t["thread_id"]`.
    virtual void put_thread(const boost::json::object& t) = 0;
    virtual std::optional<boost::json::object> thread(std::string_view thread_id) = 0;
    /// Removes the thread with its checkpoints and runs; false when unknown.
    virtual bool erase_thread(std::string_view thread_id) = 0;
    /// Every thread (the server filters and sorts).
    virtual std::vector<boost::json::object> threads() = 0;

    virtual void add_checkpoint(const checkpoint_record& c) = 0;
    /// The thread's checkpoints, oldest first.
    virtual std::vector<checkpoint_record> checkpoints(std::string_view thread_id) = 0;
    virtual std::optional<checkpoint_record> last_checkpoint(std::string_view thread_id) = 0;
    virtual std::size_t checkpoint_count(std::string_view thread_id) = 0;
    /// Keeps the first `keep` checkpoints of the thread (a rolled back run's are dropped).
    virtual void truncate_checkpoints(std::string_view thread_id, std::size_t keep) = 0;

    /// Inserts or replaces the run `r["run_id"]` (of thread `r["thread_id"]`).
    virtual void put_run(const boost::json::object& r) = 0;
    virtual std::optional<boost::json::object> run(std::string_view run_id) = 0;
    /// The thread's runs, oldest first.
    virtual std::vector<boost::json::object> runs(std::string_view thread_id) = 0;
    virtual bool erase_run(std::string_view run_id) = 0;
};

} // namespace agentware::server

#endif
