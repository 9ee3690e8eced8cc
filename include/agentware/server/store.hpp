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

#include <agentware/agent/detail/state_diff.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace agentware::server {

/// A checkpoint: the thread's whole state after a step of a run.
/// Keys: checkpoint_id, parent_checkpoint_id, thread_id, run_id, created_at,
/// step, source ("input", "loop", "update", "fork"), values (the agent
/// state's JSON form), metadata.
///
/// A record given to `add_checkpoint` may hold `changes` instead of
/// `values`: what changed since its parent checkpoint, `{"at": n, "append":
/// [...], "set": {...}, "unset": [...]}` (the parent's messages cut to their
/// first n, the new ones appended, the other keys set or removed). A run's
/// saves are written so, and a save then costs what changed, not the whole
/// history. The store keeps the checkpoint with its whole values: a record it
/// gives back always has `values`.
using checkpoint_record = boost::json::object;

/// Turns the record `c`'s `changes` into whole `values`: its parent's, found
/// among `earlier` (the thread's checkpoints, oldest first), with the changes
/// applied. A record without `changes` is left as it is. Throws
/// std::invalid_argument when the parent is not there or the changes do not apply.
inline void apply_checkpoint_changes(checkpoint_record& c, const std::vector<checkpoint_record>& earlier) {
    auto it = c.find("changes");
    if (it == c.end()) return;
    const auto* parent_id = c.if_contains("parent_checkpoint_id");
    const auto* id = c.if_contains("checkpoint_id");
    const std::string name = id != nullptr && id->is_string() ? std::string(id->get_string()) : "";
    if (!it->value().is_object() || c.contains("values"))
        throw std::invalid_argument("checkpoint " + name +
                                    ": \"changes\" must be an object, given without \"values\"");
    const checkpoint_record* parent = nullptr;
    if (parent_id != nullptr && parent_id->is_string())
        for (auto e = earlier.rbegin(); e != earlier.rend() && parent == nullptr; ++e)
            if (const auto* eid = e->if_contains("checkpoint_id"); eid != nullptr && *eid == *parent_id)
                parent = &*e;
    const auto* base = parent != nullptr ? parent->if_contains("values") : nullptr;
    if (base == nullptr || !base->is_object())
        throw std::invalid_argument("checkpoint " + name +
                                    " holds changes of a parent checkpoint the thread does not have");
    boost::json::value values = *base;
    if (const auto why = agentware::detail::apply_state_changes(values.as_object(), it->value().as_object());
        !why.empty())
        throw std::invalid_argument("checkpoint " + name + " " + std::string(why));
    c.erase(it);
    c["values"] = std::move(values);
}

/// `update_thread`'s change made to a thread's record `t`.
inline void merge_thread(boost::json::object& t, const boost::json::object& fields,
                         const boost::json::object& metadata) {
    for (const auto& kv : fields)
        t[kv.key()] = kv.value();
    if (metadata.empty()) return;
    auto& m = t["metadata"];
    if (!m.is_object()) m = boost::json::object{};
    for (const auto& kv : metadata)
        m.as_object()[kv.key()] = kv.value();
}

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
    /// Sets the top-level `fields` of thread `thread_id` and adds `metadata`'s
    /// keys to its metadata, the rest as stored: one write, so what another
    /// writer changed meanwhile in other fields (a run's status, a client's
    /// metadata, in another process) stays. False when the thread is unknown.
    /// This default reads and writes the whole thread; a store shared by
    /// several processes makes it one statement.
    virtual task<bool> update_thread(std::string thread_id, boost::json::object fields,
                                     boost::json::object metadata) {
        auto t = co_await thread(thread_id);
        if (!t) co_return false;
        merge_thread(*t, fields, metadata);
        co_await put_thread(std::move(*t));
        co_return true;
    }

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
