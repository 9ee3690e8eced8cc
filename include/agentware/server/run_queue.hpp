#ifndef AGENTWARE_SERVER_RUN_QUEUE_HPP
#define AGENTWARE_SERVER_RUN_QUEUE_HPP

// The run queue that several server processes share: any process creates
// runs, a worker of any process claims each one and holds a lease on it
// while it runs, and a run whose lease lapsed (its worker died) goes back to
// the queue. The run manager works through this interface, so it needs no
// database of its own; postgres_run_queue.hpp is the implementation. A
// single process needs none: the run manager queues its runs itself.

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace agentware::server {

/// A run as the queue keeps it.
struct queued_run {
    std::string run_id;
    std::string thread_id;
    std::string assistant_id;
    /// pending, running, success, error, timeout, interrupted.
    std::string status;
    /// The run's record in the API's JSON form.
    boost::json::object record;
    /// Claims so far (1 on the first).
    int attempt = 0;
    /// "interrupt" or "rollback" once a cancel was asked for.
    std::optional<std::string> cancel_action;
};

/// The `reject` strategy met a thread that has a pending or running run.
class thread_busy : public std::runtime_error {
public:
    explicit thread_busy(const std::string& thread_id)
        : std::runtime_error("Thread " + thread_id + " is busy with another run"), thread_id_(thread_id) {}
    const std::string& thread_id() const noexcept { return thread_id_; }

private:
    std::string thread_id_;
};

/// What a renewal learnt.
struct lease_state {
    /// False once the worker lost the run (another took it over, or it was
    /// deleted): stop, write nothing more.
    bool owned = false;
    std::optional<std::string> cancel_action;
};

class run_queue {
public:
    template <class T>
    using task = boost::asio::awaitable<T>;

    virtual ~run_queue() = default;

    /// How long a claim holds without renewal (renew every third of it).
    virtual std::chrono::milliseconds lease() const = 0;
    /// How long after a lease lapsed the reaper takes the run back.
    virtual std::chrono::milliseconds grace() const = 0;

    /// Creates a pending run under the thread's multitask `strategy` (reject
    /// throws thread_busy; enqueue waits; interrupt and rollback cancel the
    /// runs before it). `claim`: when the thread has no other run, the run is
    /// this worker's at once (running, attempt 1), so its creator executes it
    /// and streams its events itself.
    virtual task<queued_run> create(std::string run_id, std::string thread_id, std::string assistant_id,
                                    boost::json::object record, std::string strategy,
                                    std::optional<std::string> idempotency_key = std::nullopt,
                                    bool claim = false) = 0;
    /// Claims the oldest claimable run for this worker, or nullopt.
    virtual task<std::optional<queued_run>> claim() = 0;
    virtual task<lease_state> renew(std::string run_id) = 0;
    /// Ends a run this worker owns; false when it no longer does (nothing written).
    virtual task<bool> finish(std::string run_id, std::string status, boost::json::object record) = 0;
    /// Sets `fields` of the run's thread while the run is this worker's (it
    /// runs it, or ended it) and no later run of the thread has started: one
    /// statement, so a process that lost the run while it was away (paused
    /// between its check and its write) writes nothing. False when it did not.
    virtual task<bool> update_thread(std::string run_id, boost::json::object fields) = 0;
    /// Gives a run back to the queue without counting the attempt (a drain).
    virtual task<bool> release(std::string run_id) = 0;
    /// Asks for a cancel from any process; the run's status after it, or
    /// nullopt when it is unknown or over.
    virtual task<std::optional<std::string>> cancel(std::string run_id, std::string action) = 0;
    /// Takes back the runs whose lease lapsed; each with its new status.
    virtual task<std::vector<std::pair<std::string, std::string>>> reap() = 0;

    /// Calls `on_claimable` when a run may have become claimable and
    /// `on_cancel` with a run's id when a cancel was asked for it, from any
    /// thread, until unwatch(). A queue that cannot tell calls neither: the
    /// worker also looks on its own, every second.
    virtual void watch(std::function<void()> on_claimable, std::function<void(std::string)> on_cancel) = 0;
    virtual void unwatch() = 0;
};

} // namespace agentware::server

#endif
