#ifndef AGENTWARE_POSTGRES_CONNECTION_HPP
#define AGENTWARE_POSTGRES_CONNECTION_HPP

// One connection to PostgreSQL, driven by the event loop: libpq's
// asynchronous calls (PQconnectPoll, PQsendQueryParams, PQconsumeInput) with
// Asio waiting on libpq's own socket, so a server holds many connections on
// one thread and a statement in flight blocks nothing. A connection runs one
// operation at a time; a pool (pool.hpp) runs them side by side.

#include <agentware/postgres/conninfo.hpp>
#include <agentware/postgres/error.hpp>
#include <agentware/postgres/result.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>
#include <libpq-fe.h>

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace agentware::postgres {

/// A message sent with NOTIFY (or pg_notify) on a channel this connection LISTENs to.
struct notification {
    std::string channel;
    std::string payload;
    int sender_pid = 0;
};

/// A statement parameter, sent as text: a string, a number, a boolean, or SQL
/// NULL (nullptr, an empty optional). The value is copied (a std::string
/// rvalue is moved), so nothing the caller holds must outlive the call: the
/// statement may wait for a pooled connection long after it.
class param {
public:
    param(std::nullptr_t) : null_(true) {}
    param(const std::string& s) : text_(s) {}
    param(std::string&& s) : text_(std::move(s)) {}
    param(std::string_view s) : text_(s) {}
    param(const char* s) : text_(s) {}
    param(bool b) : text_(b ? "true" : "false") {}
    template <class T>
        requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
    param(T v) : text_(fmt::format("{}", v)) {}
    template <class T>
    param(const std::optional<T>& v) : param(v ? param(*v) : param(nullptr)) {}

    /// The text libpq sends; nullptr for NULL.
    const char* c_str() const noexcept { return null_ ? nullptr : text_.c_str(); }

private:
    std::string text_;
    bool null_ = false;
};

/// The parameters of a statement, in order.
template <class... Args>
std::vector<param> params_of(Args&&... args) {
    std::vector<param> params;
    params.reserve(sizeof...(Args));
    (params.emplace_back(std::forward<Args>(args)), ...);
    return params;
}

namespace detail {

namespace asio = boost::asio;

// What a connection handle shares with its timers: the handle moves, the state stays put.
struct connection_state {
    explicit connection_state(const asio::any_io_executor& ex) : socket(ex) {}
    connection_state(const connection_state&) = delete;
    connection_state& operator=(const connection_state&) = delete;
    ~connection_state() { close(); }

    void close() noexcept {
        // libpq owns the descriptor: Asio lets go of it before libpq closes it.
        if (socket.is_open()) socket.release();
        if (conn) PQfinish(conn);
        conn = nullptr;
    }

    // libpq may open a new socket while it connects (another host, another
    // SSL mode), possibly under the same number: bind afresh before each wait.
    void bind_socket() {
        if (socket.is_open()) socket.release();
        const int fd = PQsocket(conn);
        if (fd < 0) throw error("postgres: the connection has no socket", {}, true);
        boost::system::error_code ec;
        socket.assign(fd, ec);
        if (ec)
            throw error(fmt::format("postgres: cannot watch the connection's socket: {}", ec.message()), {},
                        true);
    }

    std::string libpq_message() const {
        std::string m = conn ? PQerrorMessage(conn) : "not connected";
        while (!m.empty() && (m.back() == '\n' || m.back() == ' '))
            m.pop_back();
        return m;
    }

    bool bad() const noexcept { return !conn || lost || PQstatus(conn) != CONNECTION_OK; }

    error failure(std::string_view what) {
        lost = lost || !conn || PQstatus(conn) != CONNECTION_OK;
        return error(fmt::format("postgres: {}: {}", what, libpq_message()), {}, lost);
    }

    error failure_of(PGresult* r) {
        const char* primary = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
        const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        lost = lost || PQstatus(conn) != CONNECTION_OK;
        std::string message = primary ? primary : PQresultErrorMessage(r);
        while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
            message.pop_back();
        if (message.empty()) message = libpq_message();
        return state ? error(fmt::format("postgres: {} (SQLSTATE {})", message, state), state, lost)
                     : error(fmt::format("postgres: {}", message), {}, lost);
    }

    PGconn* conn = nullptr;
    asio::posix::stream_descriptor socket;
    bool busy = false;
    bool lost = false;
    bool timed_out = false;
};

} // namespace detail

class connection {
public:
    using executor_type = boost::asio::any_io_executor;

    /// Connects with a libpq connection string (keywords or a URI; TLS, the
    /// password and the rest as libpq reads them, PGPASSWORD included). Errors
    /// name the server with its password redacted.
    static boost::asio::awaitable<connection>
    connect(std::string conninfo, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
        namespace asio = boost::asio;
        auto ex = co_await asio::this_coro::executor;
        auto st = std::make_shared<detail::connection_state>(ex);
        // Every failure names the server, its password redacted, and counts as a lost connection.
        const auto cannot_connect = [&](const std::string& why) {
            return error(fmt::format("postgres: cannot connect to \"{}\": {}", redact(conninfo), why), {},
                         true);
        };
        st->conn = PQconnectStart(conninfo.c_str());
        if (!st->conn || PQstatus(st->conn) == CONNECTION_BAD) throw cannot_connect(st->libpq_message());
        // libpq leaves the time limit of an asynchronous connect to its caller.
        asio::steady_timer timer(ex, timeout);
        timer.async_wait(
            [weak = std::weak_ptr<detail::connection_state>(st)](const boost::system::error_code& ec) {
                if (auto s = weak.lock(); s && !ec) {
                    s->timed_out = true;
                    if (s->socket.is_open()) s->socket.cancel();
                }
            });
        for (auto poll = PGRES_POLLING_WRITING; poll != PGRES_POLLING_OK; poll = PQconnectPoll(st->conn)) {
            if (poll == PGRES_POLLING_FAILED) throw cannot_connect(st->libpq_message());
            st->bind_socket();
            const auto wait = poll == PGRES_POLLING_READING ? asio::posix::stream_descriptor::wait_read
                                                            : asio::posix::stream_descriptor::wait_write;
            auto [ec] = co_await st->socket.async_wait(wait, asio::as_tuple(asio::use_awaitable));
            if (st->timed_out) throw cannot_connect(fmt::format("no answer within {} ms", timeout.count()));
            if (ec) throw cannot_connect(ec.message());
        }
        timer.cancel();
        // The server's notices (NOTICE, WARNING: "already exists, skipping")
        // are not errors, and a library does not write to the program's stderr.
        PQsetNoticeProcessor(
            st->conn, [](void*, const char*) {}, nullptr);
        if (PQsetnonblocking(st->conn, 1) != 0) throw st->failure("cannot make the connection non-blocking");
        st->bind_socket();
        co_return connection(std::move(st));
    }

    /// Runs one statement with $1, $2, ... bound to `args` (the extended
    /// protocol: values never mix with the SQL text) and returns its rows.
    template <class... Args>
    boost::asio::awaitable<result> query(std::string_view sql, Args&&... args) {
        return query_with(std::string(sql), params_of(std::forward<Args>(args)...));
    }

    /// query() with the parameters as a list built at run time. (Coroutines
    /// here take what they keep by value: a reference into the caller's
    /// expression would have to outlive every suspension.)
    boost::asio::awaitable<result> query_with(std::string sql, std::vector<param> params) {
        auto st = state_;
        const busy_guard guard(*st);
        std::vector<const char*> values;
        values.reserve(params.size());
        for (const auto& p : params)
            values.push_back(p.c_str());
        if (!PQsendQueryParams(st->conn, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                               nullptr, nullptr, 0))
            throw st->failure("cannot send the statement");
        co_await flush(*st);
        co_return co_await collect(*st);
    }

    /// Runs a script of several statements without parameters (a migration),
    /// in one round trip; the last statement's rows are returned.
    boost::asio::awaitable<result> execute(std::string script) {
        auto st = state_;
        const busy_guard guard(*st);
        if (!PQsendQuery(st->conn, script.c_str())) throw st->failure("cannot send the script");
        co_await flush(*st);
        co_return co_await collect(*st);
    }

    /// A notification already received, without waiting.
    std::optional<notification> poll_notification() { return received(*state_); }

    /// Waits for the next notification on a channel this connection LISTENs to.
    /// cancel() ends the wait with an error that leaves the connection usable.
    boost::asio::awaitable<notification> next_notification() {
        namespace asio = boost::asio;
        auto st = state_;
        const busy_guard guard(*st);
        for (;;) {
            if (!PQconsumeInput(st->conn))
                throw st->failure("the connection failed while waiting for a notification");
            if (auto n = received(*st)) co_return std::move(*n);
            auto [ec] = co_await st->socket.async_wait(asio::posix::stream_descriptor::wait_read,
                                                       asio::as_tuple(asio::use_awaitable));
            if (ec == asio::error::operation_aborted)
                throw error("postgres: the wait for a notification was cancelled");
            if (ec)
                throw error(fmt::format("postgres: waiting for a notification: {}", ec.message()), {}, true);
        }
    }

    /// Ends the operation waiting on this connection's socket. A statement cut
    /// short this way leaves the connection unusable; a notification wait does not.
    void cancel() {
        if (state_->socket.is_open()) state_->socket.cancel();
    }

    /// True while the connection can run a statement: connected, no statement
    /// cut short, not inside a transaction left open. Reads what the server
    /// sent meanwhile, so a server that closed the connection is noticed here.
    bool usable() const {
        auto& st = *state_;
        if (st.bad() || st.busy) return false;
        if (!PQconsumeInput(st.conn)) st.lost = true;
        return !st.bad() && PQtransactionStatus(st.conn) == PQTRANS_IDLE;
    }

    /// The server process serving this connection (pg_backend_pid()).
    int backend_pid() const noexcept { return state_->conn ? PQbackendPID(state_->conn) : 0; }

    PGconn* native() const noexcept { return state_->conn; }

    void close() noexcept { state_->close(); }

private:
    explicit connection(std::shared_ptr<detail::connection_state> st) : state_(std::move(st)) {}

    struct busy_guard {
        explicit busy_guard(detail::connection_state& s) : st(s) {
            if (!st.conn) throw error("postgres: the connection is closed", {}, true);
            if (st.busy)
                throw std::logic_error(
                    "postgres::connection runs one operation at a time; a pool runs statements side by side");
            st.busy = true;
        }
        ~busy_guard() { st.busy = false; }
        busy_guard(const busy_guard&) = delete;
        busy_guard& operator=(const busy_guard&) = delete;
        detail::connection_state& st;
    };

    static std::optional<notification> received(detail::connection_state& st) {
        PGnotify* n = st.conn ? PQnotifies(st.conn) : nullptr;
        if (!n) return std::nullopt;
        notification out{n->relname, n->extra ? n->extra : "", n->be_pid};
        PQfreemem(n);
        return out;
    }

    static boost::asio::awaitable<void> wait(detail::connection_state& st,
                                             boost::asio::posix::stream_descriptor::wait_type w) {
        namespace asio = boost::asio;
        auto [ec] = co_await st.socket.async_wait(w, asio::as_tuple(asio::use_awaitable));
        if (ec) {
            // A statement interrupted halfway leaves the protocol out of step.
            st.lost = true;
            throw error(fmt::format("postgres: the statement was interrupted: {}", ec.message()), {}, true);
        }
    }

    static boost::asio::awaitable<void> flush(detail::connection_state& st) {
        for (;;) {
            const int f = PQflush(st.conn);
            if (f == 0) co_return;
            if (f < 0) throw st.failure("cannot send the statement");
            co_await wait(st, boost::asio::posix::stream_descriptor::wait_write);
        }
    }

    // Reads every result of what was sent; the first error is thrown once the
    // connection is idle again, so it stays usable after a failed statement.
    static boost::asio::awaitable<result> collect(detail::connection_state& st) {
        result last;
        std::optional<error> failed;
        for (;;) {
            while (PQisBusy(st.conn)) {
                co_await wait(st, boost::asio::posix::stream_descriptor::wait_read);
                if (!PQconsumeInput(st.conn)) throw st.failure("the connection failed during the statement");
            }
            PGresult* r = PQgetResult(st.conn);
            if (!r) break;
            result current(r);
            switch (PQresultStatus(r)) {
            case PGRES_COMMAND_OK:
            case PGRES_TUPLES_OK:
            case PGRES_EMPTY_QUERY:
                if (!failed) last = std::move(current);
                break;
            case PGRES_COPY_IN:
            case PGRES_COPY_OUT:
            case PGRES_COPY_BOTH:
                st.lost = true;
                throw error("postgres: COPY is not supported by this client", {}, true);
            default:
                if (!failed) failed = st.failure_of(r);
                if (st.bad()) throw *failed;
            }
        }
        if (failed) throw *failed;
        co_return last;
    }

    std::shared_ptr<detail::connection_state> state_;
};

} // namespace agentware::postgres

#endif
