#ifndef AGENTWARE_POSTGRES_POOL_THREAD_HPP
#define AGENTWARE_POSTGRES_POOL_THREAD_HPP

// A pool with an event loop and a thread of its own. A pool belongs to one
// thread; a program whose own work runs on other threads (a server's event
// loop, a test's) keeps its pool here and sends it work with `there()`, from
// a coroutine on any executor, or with `wait()` from a plain thread.

#include <agentware/postgres/pool.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace agentware::postgres {

class pool_thread {
public:
    explicit pool_thread(pool_options options) : db_(std::move(options)), thread_([this] { io_.run(); }) {}
    /// Waits for the work in progress to end.
    ~pool_thread() {
        work_.reset();
        thread_.join();
    }
    pool_thread(const pool_thread&) = delete;
    pool_thread& operator=(const pool_thread&) = delete;

    /// The pool: use it only on executor().
    pool& db() noexcept { return db_; }
    boost::asio::any_io_executor executor() { return io_.get_executor(); }

    /// Runs `work` on the pool's thread; the caller resumes on its own executor.
    template <class T>
    boost::asio::awaitable<T> there(boost::asio::awaitable<T> work) {
        return boost::asio::co_spawn(io_.get_executor(), std::move(work), boost::asio::use_awaitable);
    }
    boost::asio::awaitable<result> query(std::string sql, std::vector<param> params = {}) {
        return there(db_.query_with(std::move(sql), std::move(params)));
    }
    /// Runs `work` on the pool's thread and blocks the calling thread (never
    /// the pool's own) until it ends: for a program's start, before its event loop runs.
    template <class T>
    T wait(boost::asio::awaitable<T> work) {
        return boost::asio::co_spawn(io_.get_executor(), std::move(work), boost::asio::use_future).get();
    }

private:
    boost::asio::io_context io_;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{io_.get_executor()};
    pool db_;
    std::thread thread_;
};

} // namespace agentware::postgres

#endif
