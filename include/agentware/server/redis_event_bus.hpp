#ifndef AGENTWARE_SERVER_REDIS_EVENT_BUS_HPP
#define AGENTWARE_SERVER_REDIS_EVENT_BUS_HPP

// The runs' events in Redis Streams: a stream per run, capped in length and
// expiring after the run, and a PUBLISH of the run's id when events were
// added. An event's stream id is 0-(its id + 1), so a follower reads from the
// id it has (XRANGE) and sees when the cap dropped events it had not read
// (the first id it gets is past the one it asked for: a gap). The bus keeps
// its connections on a thread of its own; calls come from any executor.

#include <agentware/redis/connection.hpp>
#include <agentware/server/event_bus.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace agentware::server {

struct redis_event_bus_options {
    redis::address server;
    /// Events kept per run (XADD MAXLEN ~): a follower further behind gets a gap.
    std::size_t max_events = 100'000;
    /// How long a run's events stay after the last was added.
    std::chrono::seconds expire{86'400};
    std::string key_prefix = "agentware:events:";
    /// The channel PUBLISH announces appends on.
    std::string channel = "agentware_events";
};

class redis_event_bus final : public event_bus {
public:
    explicit redis_event_bus(redis_event_bus_options o) : o_(std::move(o)), thread_([this] { io_.run(); }) {}
    ~redis_event_bus() override {
        unwatch();
        boost::asio::post(io_, [this] { idle_.clear(); });
        work_.reset();
        thread_.join();
    }
    redis_event_bus(const redis_event_bus&) = delete;
    redis_event_bus& operator=(const redis_event_bus&) = delete;

    const redis_event_bus_options& options() const noexcept { return o_; }

    task<void> append(std::string run_id, std::vector<stream_event> events) override {
        return here(append_here(std::move(run_id), std::move(events)));
    }
    task<std::vector<stream_event>> read(std::string run_id, std::size_t from, std::size_t limit) override {
        return here(read_here(std::move(run_id), from, limit));
    }
    /// Nothing to do: each run's stream expires on its own.
    task<std::size_t> prune(std::chrono::seconds) override { co_return 0; }

    void watch(std::function<void(std::string)> on_append) override {
        unwatch();
        auto w = std::make_shared<watching>();
        w->on_append = std::move(on_append);
        {
            std::lock_guard lock(watch_mutex_);
            watching_ = w;
        }
        boost::asio::co_spawn(io_, subscribe(w), boost::asio::detached);
    }
    void unwatch() override {
        std::shared_ptr<watching> w;
        {
            std::lock_guard lock(watch_mutex_);
            w.swap(watching_);
        }
        if (!w) return;
        {
            std::lock_guard lock(w->mutex);
            w->on_append = nullptr;
        }
        boost::asio::post(io_, [w] {
            w->stopped = true;
            if (w->conn) w->conn->cancel();
            if (w->pause) w->pause->cancel();
        });
    }

private:
    struct watching {
        std::mutex mutex;
        std::function<void(std::string)> on_append;
        // On the bus's thread only:
        bool stopped = false;
        redis::connection* conn = nullptr;
        boost::asio::steady_timer* pause = nullptr;
    };

    template <class T>
    task<T> here(task<T> body) {
        return boost::asio::co_spawn(io_, std::move(body), boost::asio::use_awaitable);
    }

    // Runs `call(connection&)` on an idle connection, or a new one. An idle
    // connection may have died meanwhile (Redis restarted): a call that fails
    // on one runs again, once, on a new connection; after a restart nothing
    // of the first try was stored. (Were it cut off halfway by something
    // else, the events it had added would be refused the second time as not
    // newer than the stream's last, and the append reports it.)
    template <class F>
    auto with_connection(F call) -> decltype(call(std::declval<redis::connection&>())) {
        std::optional<redis::connection> c;
        if (!idle_.empty()) {
            c.emplace(std::move(idle_.front()));
            idle_.pop_front();
            bool failed = false;
            try {
                auto out = co_await call(*c);
                give_back(std::move(*c));
                co_return out;
            } catch (const redis::error&) {
                failed = true;
            }
            if (failed) c.reset();
        }
        c.emplace(co_await redis::connection::connect(o_.server));
        auto out = co_await call(*c);
        give_back(std::move(*c));
        co_return out;
    }
    void give_back(redis::connection c) {
        if (c.is_open() && idle_.size() < 8) idle_.push_back(std::move(c));
    }

    static std::string stream_id(std::size_t event_id) { return "0-" + std::to_string(event_id + 1); }

    task<void> append_here(std::string run_id, std::vector<stream_event> events) {
        if (events.empty()) co_return;
        const std::string key = o_.key_prefix + run_id;
        std::vector<redis::connection::command_args> commands;
        commands.reserve(events.size() + 2);
        for (auto& e : events)
            commands.push_back({"XADD", key, "MAXLEN", "~", std::to_string(o_.max_events), stream_id(e.id),
                                "e", std::move(e.name), "d", std::move(e.data)});
        commands.push_back({"EXPIRE", key, std::to_string(o_.expire.count())});
        commands.push_back({"PUBLISH", o_.channel, run_id});
        auto replies = co_await with_connection([&](redis::connection& c) { return c.pipeline(commands); });
        for (const auto& r : replies)
            r.ok("XADD");
    }

    task<std::vector<stream_event>> read_here(std::string run_id, std::size_t from, std::size_t limit) {
        auto r = co_await with_connection([&](redis::connection& c) {
            return c.command("XRANGE", o_.key_prefix + run_id, stream_id(from), "+", "COUNT",
                             std::to_string(limit));
        });
        r.ok("XRANGE");
        std::vector<stream_event> out;
        out.reserve(r.items.size());
        for (const auto& entry : r.items) {
            if (entry.items.size() != 2) continue;
            const std::string& id = entry.items[0].text; // 0-N
            stream_event e;
            e.id = static_cast<std::size_t>(std::stoull(id.substr(id.find('-') + 1))) - 1;
            const auto& fields = entry.items[1].items;
            for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
                if (fields[i].text == "e") e.name = fields[i + 1].text;
                if (fields[i].text == "d") e.data = fields[i + 1].text;
            }
            out.push_back(std::move(e));
        }
        co_return out;
    }

    // SUBSCRIBE on a connection of its own, again after each break (with a pause).
    task<void> subscribe(std::shared_ptr<watching> w) {
        auto retry = std::chrono::milliseconds(100);
        while (!w->stopped) {
            try {
                auto c = co_await redis::connection::connect(o_.server);
                w->conn = &c;
                (co_await c.command("SUBSCRIBE", o_.channel)).ok("SUBSCRIBE");
                retry = std::chrono::milliseconds(100);
                while (!w->stopped) {
                    auto m = co_await c.next(); // ["message", channel, run id]
                    if (m.items.size() == 3 && m.items[0].text == "message") {
                        std::lock_guard lock(w->mutex);
                        if (w->on_append) w->on_append(m.items[2].text);
                    }
                }
            } catch (const redis::error&) {
                // Broken or stopped: announcements meanwhile are lost; followers also poll.
            }
            w->conn = nullptr;
            if (w->stopped) break;
            boost::asio::steady_timer pause(io_, retry);
            w->pause = &pause;
            co_await pause.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
            w->pause = nullptr;
            retry = std::min(retry * 2, std::chrono::milliseconds(5000));
        }
    }

    redis_event_bus_options o_;
    boost::asio::io_context io_;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{io_.get_executor()};
    std::deque<redis::connection> idle_; // on the bus's thread only
    std::mutex watch_mutex_;
    std::shared_ptr<watching> watching_;
    std::thread thread_;
};

} // namespace agentware::server

#endif
