#ifndef AGENTWARE_POSTGRES_LISTENER_HPP
#define AGENTWARE_POSTGRES_LISTENER_HPP

// LISTEN on channels for as long as the program runs, across database
// restarts: a connection of its own that LISTENs, hands each notification
// to a callback, and when the connection breaks connects again (with a
// growing pause), LISTENs again and says so. NOTIFYs sent while it was away
// are lost — PostgreSQL keeps none for a session that is not there — so the
// `on_listening` callback is where a caller looks for what it missed (the
// run queue: claim whatever is pending).

#include <agentware/postgres/connection.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace agentware::postgres {

struct listener_options {
    std::string conninfo;
    std::vector<std::string> channels;
    /// Called with each notification.
    std::function<void(const notification&)> on_notification;
    /// Called each time the LISTENs are in place: at start and after every
    /// reconnection (look for what was missed meanwhile).
    std::function<void()> on_listening;
    /// Called when the connection broke or could not be made (the message
    /// names the server with its password hidden).
    std::function<void(const std::string&)> on_error;
    std::chrono::milliseconds connect_timeout{10'000};
    /// The pause before reconnecting, doubled after each failure up to the most.
    std::chrono::milliseconds retry_first{100};
    std::chrono::milliseconds retry_most{5'000};
};

class listener {
public:
    explicit listener(listener_options o) : s_(std::make_shared<state>(std::move(o))) {}
    listener(const listener&) = delete;
    listener& operator=(const listener&) = delete;
    ~listener() { stop(); }

    /// Starts listening on `ex` (the event loop's executor).
    void start(const boost::asio::any_io_executor& ex) {
        s_->stopped = false;
        boost::asio::co_spawn(ex, run(s_), [](std::exception_ptr) {});
    }

    /// Stops: the connection closes, no callback runs after it.
    void stop() {
        s_->stopped = true;
        if (s_->conn) s_->conn->cancel();
        if (s_->pause) s_->pause->cancel();
    }

    /// Times the LISTENs were put in place (1 after the first connect).
    int sessions() const noexcept { return s_->sessions; }

private:
    struct state {
        explicit state(listener_options o) : options(std::move(o)) {}
        listener_options options;
        std::optional<connection> conn;
        std::optional<boost::asio::steady_timer> pause;
        bool stopped = false;
        int sessions = 0;
    };

    static std::string quoted(const std::string& channel) {
        std::string out = "\"";
        for (char ch : channel) {
            if (ch == '"') out.push_back('"');
            out.push_back(ch);
        }
        return out + "\"";
    }

    static boost::asio::awaitable<void> run(std::shared_ptr<state> s) {
        namespace asio = boost::asio;
        auto retry = s->options.retry_first;
        while (!s->stopped) {
            std::string failure;
            try {
                s->conn.emplace(
                    co_await connection::connect(s->options.conninfo, s->options.connect_timeout));
                for (const auto& ch : s->options.channels)
                    co_await s->conn->execute("LISTEN " + quoted(ch));
                ++s->sessions;
                retry = s->options.retry_first;
                if (s->options.on_listening && !s->stopped) s->options.on_listening();
                while (!s->stopped) {
                    auto n = co_await s->conn->next_notification();
                    if (s->options.on_notification && !s->stopped) s->options.on_notification(n);
                }
            } catch (const error& e) {
                failure = e.what();
            }
            if (s->conn) s->conn->close();
            s->conn.reset();
            if (s->stopped) break;
            if (s->options.on_error) s->options.on_error(failure);
            s->pause.emplace(co_await asio::this_coro::executor, retry);
            co_await s->pause->async_wait(asio::as_tuple(asio::use_awaitable));
            s->pause.reset();
            retry = std::min(retry * 2, s->options.retry_most);
        }
    }

    std::shared_ptr<state> s_;
};

} // namespace agentware::postgres

#endif
