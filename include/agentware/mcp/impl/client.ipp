#ifndef AGENTWARE_MCP_IMPL_CLIENT_IPP
#define AGENTWARE_MCP_IMPL_CLIENT_IPP

// The MCP client's implementation: the protocol above its channels (JSON-RPC
// 2.0, the handshake of either era, requests and their answers, the
// server's requests and notifications, tools/list and tools/call) and the
// client's members. The channels are in impl/stdio_channel.ipp and
// impl/http_channel.ipp.

#include <agentware/mcp/client.hpp>
#include <agentware/mcp/impl/channel.ipp>
#include <agentware/mcp/impl/http_channel.ipp>
#include <agentware/mcp/impl/stdio_channel.ipp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace agentware::mcp::detail {

struct pending_request {
    std::mutex m;
    std::condition_variable_any cv; // waits on a stop token too
    bool done = false;
    boost::json::object result;
    std::optional<mcp_error> error;
    std::exception_ptr deferred; // what the call's own elicitation handler threw, for the caller
    std::size_t notifications = 0;
    // The caller's listener and elicitation handler, called under `m` and
    // cleared (under `m`) before the caller returns, so that they are never
    // called after.
    const call_options* listener = nullptr;
    const call_options* elicitor = nullptr;
    std::int64_t progress_token = 0; // 0: none
    std::vector<std::string> roots;  // the call's roots (client_options::roots_by_call); set once
    // An awaiting coroutine (async_call_tool): resumed on its executor by wake().
    std::optional<boost::asio::any_completion_handler<void()>> waiter;
    boost::asio::any_io_executor waiter_executor;

    /// Under `m`: the blocking caller and the awaiting coroutine look again.
    void wake() {
        cv.notify_all();
        if (!waiter) return;
        boost::asio::post(waiter_executor, [h = std::move(*waiter)]() mutable { std::move(h)(); });
        waiter.reset();
    }
};

/// What one request carries besides its message.
struct request_context {
    std::chrono::milliseconds timeout;
    std::stop_token stop;
    const call_options* listener = nullptr; // with a callable on_event, or null
    std::int64_t progress_token = 0;
    const call_options* elicitor = nullptr;          // with a callable on_elicitation, or null
    const std::vector<std::string>* roots = nullptr; // the call's roots (roots_by_call), or null
};

/// Completes (`void()`) when `p` is done, `deadline` has passed or `stop` is
/// requested, or when woken (the caller looks again); the thread is not held.
template <class CompletionToken>
auto async_wait_woken(std::shared_ptr<pending_request> p, std::chrono::steady_clock::time_point deadline,
                      std::stop_token stop, CompletionToken&& token) {
    return boost::asio::async_initiate<CompletionToken, void()>(
        [p = std::move(p), deadline, stop = std::move(stop)](auto handler) {
            boost::asio::any_io_executor executor = boost::asio::get_associated_executor(handler);
            std::unique_lock lock(p->m);
            if (p->done || stop.stop_requested() || std::chrono::steady_clock::now() >= deadline) {
                lock.unlock();
                boost::asio::post(executor, [h = std::move(handler)]() mutable { std::move(h)(); });
                return;
            }
            p->waiter_executor = std::move(executor);
            p->waiter.emplace(std::move(handler));
        },
        token);
}

/// Wakes a request's waiter (a stop callback, the deadline's timer).
struct request_waker {
    std::shared_ptr<pending_request> p;
    void operator()() const {
        std::lock_guard lock(p->m);
        p->wake();
    }
};

/// Runs `f` on a thread of its own while the awaiting coroutine is suspended
/// (blocking work: a handshake, an HTTP exchange); rethrows what it throws.
template <class F>
boost::asio::awaitable<void> off_executor(F f) {
    const boost::asio::any_io_executor executor = co_await boost::asio::this_coro::executor;
    std::exception_ptr failure;
    co_await boost::asio::async_initiate<decltype(boost::asio::use_awaitable), void()>(
        [&](auto handler) {
            // The guard keeps the executor's context running (so its owner
            // cannot destroy it) until post has returned: post still signals
            // the context after the handler is queued, and the handler may
            // already have run by then.
            std::thread([&f, &failure, work = boost::asio::make_work_guard(executor),
                         h = std::move(handler)]() mutable {
                try {
                    f();
                } catch (...) {
                    failure = std::current_exception();
                }
                boost::asio::post(work.get_executor(), [h = std::move(h)]() mutable { std::move(h)(); });
                work.reset();
            }).detach();
        },
        boost::asio::use_awaitable);
    if (failure) std::rethrow_exception(failure);
}

struct client_state : std::enable_shared_from_this<client_state> {
    server_config config;
    client_options options;
    std::unique_ptr<channel> chan;

    std::recursive_mutex connect_mutex; // connect / restart / close
    bool connected = false;
    bool restarted = false;
    bool era_known = false;

    mutable std::mutex mutex; // what follows
    protocol_era era = protocol_era::legacy;
    std::string version;
    boost::json::object server_info;
    std::map<std::int64_t, std::shared_ptr<pending_request>> pending;
    std::int64_t next_id = 1;
    std::atomic<std::int64_t> next_progress_token{1};
    std::atomic<bool> tools_changed{false};
    std::atomic<std::uint64_t> list_changes{0};
    std::vector<std::thread> responders; // HTTP: answers to server requests

    client_state(server_config c, client_options o) : config(std::move(c)), options(std::move(o)) {}

    std::string label() const { return "MCP server \"" + config.name + "\""; }

    void make_channel() {
        channel_events ev{[this](boost::json::value&& v) { on_message(std::move(v)); },
                          [this](const mcp_error& e) { fail_all(e); }};
        if (config.type == transport_type::stdio)
            chan = std::make_unique<stdio_channel>(config, options, std::move(ev));
        else
            chan = std::make_unique<http_channel>(config, options, std::move(ev));
    }

    void fail_all(const mcp_error& e) {
        std::map<std::int64_t, std::shared_ptr<pending_request>> failing;
        {
            std::lock_guard lock(mutex);
            failing.swap(pending);
        }
        for (auto& [id, p] : failing) {
            std::lock_guard lock(p->m);
            if (p->done) continue;
            p->error = e;
            p->done = true;
            p->wake();
        }
    }

    void on_message(boost::json::value&& v) {
        if (!v.is_object()) {
            fail_all(mcp_error(mcp_error_kind::protocol, label() +
                                                             " sent a message that is not a JSON object: " +
                                                             excerpt(boost::json::serialize(v))));
            return;
        }
        auto& msg = v.get_object();
        const auto* method = msg.if_contains("method");
        const auto* id = msg.if_contains("id");
        if (method == nullptr) {
            if (id == nullptr || !id->is_int64()) {
                fail_all(mcp_error(
                    mcp_error_kind::protocol,
                    label() + " sent an answer without a known id: " + excerpt(boost::json::serialize(v))));
                return;
            }
            std::shared_ptr<pending_request> p;
            {
                std::lock_guard lock(mutex);
                if (auto it = pending.find(id->as_int64()); it != pending.end()) {
                    p = it->second;
                    pending.erase(it);
                }
            }
            if (!p) return; // an answer to a request we gave up on
            std::lock_guard lock(p->m);
            if (const auto* err = msg.if_contains("error"); err != nullptr) {
                int code = 0;
                std::string text = "unknown error";
                boost::json::value data;
                if (err->is_object()) {
                    const auto& eo = err->get_object();
                    if (const auto* c = eo.if_contains("code"); c && c->is_int64())
                        code = static_cast<int>(c->as_int64());
                    if (const auto* m = eo.if_contains("message"); m && m->is_string()) text = m->as_string();
                    if (const auto* d = eo.if_contains("data")) data = *d;
                }
                p->error = mcp_error(mcp_error_kind::remote, text, code, std::move(data));
            } else if (const auto* res = msg.if_contains("result"); res != nullptr && res->is_object()) {
                p->result = res->get_object();
            } else {
                p->error = mcp_error(
                    mcp_error_kind::protocol,
                    label() + " answered without a result object: " + excerpt(boost::json::serialize(v)));
            }
            p->done = true;
            p->wake();
            return;
        }
        if (!method->is_string()) return;
        const std::string_view name = method->get_string();
        if (id != nullptr) {
            answer_server_request(*id, name, msg);
            return;
        }
        if (name == "notifications/tools/list_changed") {
            tools_changed = true;
            ++list_changes;
        } else if (name == "notifications/progress" || name == "notifications/message") {
            mcp_event e{config.name, std::string(name), {}};
            if (const auto* p = msg.if_contains("params"); p && p->is_object()) e.params = p->get_object();
            if (options.on_event) {
                try {
                    options.on_event(e);
                } catch (...) { // a listener's failure is not the server's
                }
            }
            notify_callers(e);
        }
    }

    /// A progress notification to the call whose token it carries; a log
    /// line to every call in flight (once per event group). A call that
    /// gets more than `max_notifications_per_call` progress notifications
    /// fails (a flooding server), and is forgotten.
    void notify_callers(const mcp_event& e) {
        std::int64_t token = 0;
        const bool progress = e.method == "notifications/progress";
        if (progress) {
            const auto* t = e.params.if_contains("progressToken");
            if (t == nullptr || !t->is_int64() || t->as_int64() == 0) return; // not one of ours
            token = t->as_int64();
        }
        std::vector<std::pair<std::int64_t, std::shared_ptr<pending_request>>> targets;
        {
            std::lock_guard lock(mutex);
            for (const auto& [id, p] : pending)
                if (!progress || p->progress_token == token) targets.emplace_back(id, p);
        }
        std::vector<const void*> groups_done;
        for (const auto& [id, p] : targets) {
            std::unique_lock lock(p->m);
            if (progress && ++p->notifications > options.max_notifications_per_call) {
                if (!p->done) {
                    p->error = mcp_error(mcp_error_kind::limit,
                                         label() + " sent more than " +
                                             std::to_string(options.max_notifications_per_call) +
                                             " progress notifications for one request");
                    p->done = true;
                    p->wake();
                }
                lock.unlock();
                std::lock_guard forget(mutex);
                pending.erase(id);
                continue;
            }
            const call_options* l = p->listener;
            if (l == nullptr) continue;
            if (l->event_group != nullptr) {
                if (std::find(groups_done.begin(), groups_done.end(), l->event_group) != groups_done.end())
                    continue;
                groups_done.push_back(l->event_group);
            }
            try {
                l->on_event(e);
            } catch (...) { // a listener's failure is not the server's
            }
        }
    }

    /// Server-to-client requests: `ping`, `roots/list` when enabled (fixed
    /// roots, or a call's), `elicitation/create` when answered; anything
    /// else is refused with JSON-RPC's "method not found".
    void answer_server_request(const boost::json::value& id, std::string_view method,
                               const boost::json::object& msg) {
        boost::json::object reply{{"jsonrpc", "2.0"}, {"id", id}};
        std::optional<given_up_call> given_up; // a call whose elicitation handler ended it
        if (method == "ping") {
            reply["result"] = boost::json::object{};
        } else if (method == "roots/list" && (!options.roots.empty() || options.roots_by_call)) {
            reply["result"] = boost::json::object{{"roots", roots_json(roots_in_flight())}};
        } else if (method == "elicitation/create" && options.on_elicitation) {
            try {
                reply["result"] = elicit(msg.if_contains("params"));
            } catch (const std::exception& e) {
                reply["error"] =
                    boost::json::object{{"code", error_code::internal_error},
                                        {"message", std::string("elicitation failed: ") + e.what()}};
            }
        } else if (method == "elicitation/create" && elicit_for_call(msg, reply, given_up)) {
        } else {
            reply["error"] = boost::json::object{{"code", error_code::method_not_found},
                                                 {"message", "Method not found: " + std::string(method)}};
        }
        if (chan->multiplexed()) {
            try {
                chan->send(reply, "", "", {}, {});
            } catch (const mcp_error&) {
            }
            if (given_up) {
                finish_given_up(*given_up);
                forget(given_up->id);
                cancel(given_up->id, "the client stopped waiting for the user's input");
            }
            return;
        }
        // HTTP: the answer is a POST of its own, while the server holds the
        // stream that asked open; it cannot be sent from inside that stream's read.
        std::lock_guard lock(mutex);
        responders.emplace_back([self = shared_from_this(), reply = std::move(reply), given_up] {
            try {
                self->chan->send(reply, "", "", {}, {});
            } catch (const std::exception&) {
            }
            if (given_up) finish_given_up(*given_up);
        });
    }

    /// A call that ended at its elicitation (the run pauses): what to wake
    /// once the server has been answered.
    struct given_up_call {
        std::int64_t id;
        std::shared_ptr<pending_request> request;
    };

    static void finish_given_up(const given_up_call& g) {
        std::lock_guard lock(g.request->m);
        g.request->done = true;
        g.request->wake();
    }

    /// Gives a server's `elicitation/create` to the oldest call in flight
    /// that has an elicitation handler of its own (the request names no
    /// call). False when no call has one. When the handler throws something
    /// that is not a std::exception (agentware::interrupt: the run pauses),
    /// the server is told the user cancelled, the call ends with what was
    /// thrown, and `given_up` names it (to cancel it on the server).
    bool elicit_for_call(const boost::json::object& msg, boost::json::object& reply,
                         std::optional<given_up_call>& given_up) {
        std::vector<std::pair<std::int64_t, std::shared_ptr<pending_request>>> calls;
        {
            std::lock_guard lock(mutex);
            calls.assign(pending.begin(), pending.end()); // oldest first
        }
        for (auto& [id, p] : calls) {
            std::lock_guard lock(p->m);
            if (p->elicitor == nullptr || p->done) continue;
            try {
                reply["result"] = p->elicitor->on_elicitation(params_of(msg.if_contains("params")));
            } catch (const std::exception& e) {
                reply["error"] =
                    boost::json::object{{"code", error_code::internal_error},
                                        {"message", std::string("elicitation failed: ") + e.what()}};
            } catch (...) {
                // The caller is woken only once the server has its answer
                // (finish_given_up), so that a quick resume cannot reach the
                // server ahead of the "cancel".
                p->deferred = std::current_exception();
                p->elicitor = nullptr;
                reply["result"] = boost::json::object{{"action", "cancel"}};
                given_up = given_up_call{id, p};
            }
            return true;
        }
        return false;
    }

    /// The fixed roots, else those of the oldest call in flight that has some.
    std::vector<std::string> roots_in_flight() const {
        if (!options.roots.empty()) return options.roots;
        std::lock_guard lock(mutex);
        for (const auto& [id, p] : pending) // oldest first
            if (!p->roots.empty()) return p->roots;
        return {};
    }

    /// The roots of a request that carries `ctx`: the fixed ones, else the call's.
    std::vector<std::string> roots_for(const request_context& ctx) const {
        if (!options.roots.empty() || ctx.roots == nullptr) return options.roots;
        return *ctx.roots;
    }

    static boost::json::array roots_json(const std::vector<std::string>& roots) {
        boost::json::array out;
        for (const auto& r : roots) {
            std::string uri = r.starts_with("file://") ? r : "file://" + r;
            const auto slash = r.find_last_of('/');
            out.push_back(boost::json::object{
                {"uri", uri}, {"name", slash == std::string::npos ? r : r.substr(slash + 1)}});
        }
        return out;
    }

    boost::json::object client_capabilities() const {
        boost::json::object caps;
        if (!options.roots.empty() || options.roots_by_call)
            caps["roots"] = boost::json::object{{"listChanged", false}};
        if (options.on_elicitation || options.elicitation_by_call)
            caps["elicitation"] = boost::json::object{};
        return caps;
    }

    static const boost::json::object& params_of(const boost::json::value* params) {
        static const boost::json::object none;
        return params && params->is_object() ? params->get_object() : none;
    }

    boost::json::object elicit(const boost::json::value* params) const {
        return options.on_elicitation(params_of(params));
    }

    boost::json::object client_info() const {
        return {{"name", options.client_name}, {"version", options.client_version}};
    }

    /// One JSON-RPC exchange, without era handling.
    boost::json::object exchange(std::string_view method, boost::json::object params,
                                 std::chrono::milliseconds timeout) {
        return exchange(method, std::move(params),
                        request_context{timeout, {}, nullptr, 0, nullptr, nullptr});
    }

    mcp_error cancelled_error(std::string_view method) const {
        return mcp_error(mcp_error_kind::cancelled,
                         label() + ": the " + std::string(method) + " request was cancelled by the caller");
    }

    struct started_request {
        std::int64_t id;
        std::shared_ptr<pending_request> p;
        std::optional<resume_point> resumable; // HTTP: where the answer's stream stopped
    };

    void forget(std::int64_t id) {
        std::lock_guard lock(mutex);
        pending.erase(id);
    }

    /// Registers the request and sends it (over HTTP: sends it and reads
    /// the answer's stream).
    started_request start_request(std::string_view method, boost::json::object params,
                                  const request_context& ctx) {
        if (ctx.stop.stop_requested()) throw cancelled_error(method);
        auto p = std::make_shared<pending_request>();
        p->listener = ctx.listener;
        p->elicitor = ctx.elicitor;
        p->progress_token = ctx.progress_token;
        if (ctx.roots != nullptr) p->roots = *ctx.roots;
        std::int64_t id;
        {
            std::lock_guard lock(mutex);
            id = next_id++;
            pending[id] = p;
        }
        boost::json::object msg{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
        std::string name;
        if (const auto* n = params.if_contains("name"); n && n->is_string()) name = n->as_string();
        if (const auto* n = params.if_contains("uri"); n && n->is_string()) name = n->as_string();
        msg["params"] = std::move(params);
        try {
            std::optional<resume_point> resumable = chan->send(msg, method, name, ctx.stop, ctx.timeout);
            return {id, std::move(p), std::move(resumable)};
        } catch (const mcp_error& e) {
            abandon(id, *p);
            // Over HTTP a stop ends the exchange inside send (which cancelled the request).
            if (e.kind() == mcp_error_kind::cancelled && !chan->multiplexed()) throw cancelled_error(method);
            throw;
        } catch (...) {
            abandon(id, *p);
            throw;
        }
    }

    /// The caller stops waiting for request `id`: its handlers are let go.
    void abandon(std::int64_t id, pending_request& p) {
        {
            std::lock_guard lock(p.m);
            p.listener = p.elicitor = nullptr;
        }
        forget(id);
    }

    /// The request's outcome once its caller stops waiting: the result, or
    /// the error (a call not answered was stopped or timed out, and is
    /// cancelled; over HTTP its stream ended without the answer).
    boost::json::object finish_request(started_request& r, std::string_view method,
                                       const request_context& ctx) {
        pending_request& p = *r.p;
        std::unique_lock lock(p.m);
        p.listener = p.elicitor = nullptr; // the caller returns from here on
        if (!p.done) {
            lock.unlock();
            forget(r.id);
            if (!chan->multiplexed()) {
                cancel(r.id, "the client stopped waiting for the answer");
                throw mcp_error(mcp_error_kind::protocol, label() + " ended its answer to " +
                                                              std::string(method) + " without a response");
            }
            if (ctx.stop.stop_requested()) {
                cancel(r.id, "cancelled by the client");
                throw cancelled_error(method);
            }
            cancel(r.id, "timeout");
            throw mcp_error(mcp_error_kind::timeout, label() + " did not answer " + std::string(method) +
                                                         " within " + std::to_string(ctx.timeout.count()) +
                                                         " ms; the request was cancelled");
        }
        // Taken out, so that the caller's thread holds the exception's last
        // reference: the reader thread that caught it may drop the request.
        if (p.deferred) std::rethrow_exception(std::exchange(p.deferred, nullptr));
        if (p.error) throw *p.error;
        return std::move(p.result);
    }

    boost::json::object exchange(std::string_view method, boost::json::object params,
                                 const request_context& ctx) {
        started_request r = start_request(method, std::move(params), ctx);
        if (chan->multiplexed()) {
            std::unique_lock lock(r.p->m);
            (void)r.p->cv.wait_for(lock, ctx.stop, ctx.timeout, [&] { return r.p->done; });
        } else if (r.resumable) {
            // The answer's stream ended without the answer: resume it.
            try {
                chan->resume(*r.resumable, ctx.stop, ctx.timeout, [&] {
                    std::lock_guard l(r.p->m);
                    return r.p->done;
                });
            } catch (const mcp_error& e) {
                abandon(r.id, *r.p);
                if (e.kind() != mcp_error_kind::cancelled) throw;
                cancel(r.id, "cancelled by the client");
                throw cancelled_error(method);
            } catch (...) {
                abandon(r.id, *r.p);
                throw;
            }
        }
        return finish_request(r, method, ctx);
    }

    /// exchange() as a coroutine, for a multiplexed channel (stdio): the
    /// reader resumes it on its executor when the answer comes.
    boost::asio::awaitable<boost::json::object> async_exchange(std::string method, boost::json::object params,
                                                               request_context ctx) {
        started_request r = start_request(method, std::move(params), ctx);
        const auto deadline = std::chrono::steady_clock::now() + ctx.timeout;
        boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
        timer.expires_at(deadline);
        timer.async_wait([p = r.p](const boost::system::error_code& ec) {
            if (!ec) request_waker{p}();
        });
        std::optional<std::stop_callback<request_waker>> on_stop;
        if (ctx.stop.stop_possible()) on_stop.emplace(ctx.stop, request_waker{r.p});
        for (;;) {
            co_await async_wait_woken(r.p, deadline, ctx.stop, boost::asio::use_awaitable);
            std::lock_guard lock(r.p->m);
            if (r.p->done || ctx.stop.stop_requested() || std::chrono::steady_clock::now() >= deadline) break;
        }
        timer.cancel();
        co_return finish_request(r, method, ctx);
    }

    void notify(std::string_view method, boost::json::object params) {
        boost::json::object msg{{"jsonrpc", "2.0"}, {"method", method}};
        if (!params.empty()) msg["params"] = std::move(params);
        chan->send(msg, method, "", {}, {});
    }

    /// Tells the server the client gave up on request `id`: over stdio, and
    /// over HTTP in the 2025 era (a POST); in the 2026-07-28 era over HTTP,
    /// closing the request's stream was the cancellation.
    void cancel(std::int64_t id, std::string_view reason) {
        {
            std::lock_guard lock(mutex);
            if (era == protocol_era::modern && !chan->multiplexed()) return;
        }
        try {
            chan->send(cancelled_notification(id, reason), "notifications/cancelled", "", {},
                       cancel_notification_timeout);
        } catch (const std::exception&) {
        }
    }

    boost::json::object modern_meta() const {
        return {{"io.modelcontextprotocol/protocolVersion", modern_protocol_version},
                {"io.modelcontextprotocol/clientCapabilities", client_capabilities()},
                {"io.modelcontextprotocol/clientInfo", client_info()}};
    }

    /// A request in the connection's era: `_meta` and `input_required`
    /// retries in the modern one.
    boost::json::object call(std::string_view method, boost::json::object params,
                             std::chrono::milliseconds timeout) {
        return call(method, std::move(params), request_context{timeout, {}, nullptr, 0, nullptr, nullptr});
    }

    protocol_era current_era() const {
        std::lock_guard lock(mutex);
        return era;
    }

    boost::json::object call(std::string_view method, boost::json::object params,
                             const request_context& ctx) {
        if (current_era() == protocol_era::legacy) return exchange(method, std::move(params), ctx);
        for (std::size_t round = 0;; ++round) {
            boost::json::object result = exchange(method, with_modern_meta(params), ctx);
            if (!answer_input_required(result, params, method, round, ctx)) return result;
        }
    }

    /// call() as a coroutine (a multiplexed channel).
    boost::asio::awaitable<boost::json::object> async_call(std::string method, boost::json::object params,
                                                           request_context ctx) {
        if (current_era() == protocol_era::legacy)
            co_return co_await async_exchange(std::move(method), std::move(params), ctx);
        for (std::size_t round = 0;; ++round) {
            boost::json::object result = co_await async_exchange(method, with_modern_meta(params), ctx);
            if (!answer_input_required(result, params, method, round, ctx)) co_return result;
        }
    }

    /// `params` with the 2026-07-28 era's `_meta` (the request's own keys kept).
    boost::json::object with_modern_meta(const boost::json::object& params) const {
        boost::json::object sent = params;
        boost::json::object meta = modern_meta();
        if (const auto* m = sent.if_contains("_meta"); m && m->is_object())
            for (const auto& [k, v] : m->get_object())
                meta[k] = v;
        sent["_meta"] = std::move(meta);
        return sent;
    }

    /// False when `result` is final. For an `input_required` result, puts
    /// the answers (`inputResponses`) and the `requestState` into `params`
    /// for the next round, or throws when the input cannot be given. The
    /// call's own elicitation handler may throw anything (a paused run).
    bool answer_input_required(const boost::json::object& result, boost::json::object& params,
                               std::string_view method, std::size_t round, const request_context& ctx) {
        const auto* type = result.if_contains("resultType");
        if (type == nullptr || !type->is_string() || type->get_string() != "input_required") return false;
        if (round + 1 >= options.max_input_rounds)
            throw mcp_error(mcp_error_kind::protocol, label() + " asked for input " +
                                                          std::to_string(round + 1) + " times for one " +
                                                          std::string(method) + "; the client gave up");
        boost::json::object responses;
        if (const auto* reqs = result.if_contains("inputRequests"); reqs && reqs->is_object()) {
            for (const auto& [key, req] : reqs->get_object()) {
                std::string what = "an unknown request";
                if (req.is_object())
                    if (const auto* m = req.get_object().if_contains("method"); m && m->is_string())
                        what = m->as_string();
                if (what == "roots/list" && (!options.roots.empty() || options.roots_by_call)) {
                    responses[key] = boost::json::object{{"roots", roots_json(roots_for(ctx))}};
                    continue;
                }
                if (what == "elicitation/create" && (options.on_elicitation || ctx.elicitor != nullptr)) {
                    const boost::json::value* p = req.get_object().if_contains("params");
                    try {
                        responses[key] =
                            options.on_elicitation ? elicit(p) : ctx.elicitor->on_elicitation(params_of(p));
                    } catch (const std::exception& e) {
                        throw mcp_error(mcp_error_kind::input_required,
                                        label() + ": elicitation failed: " + e.what());
                    }
                    continue;
                }
                throw mcp_error(mcp_error_kind::input_required,
                                label() + " needs input the client cannot give yet (" + what +
                                    "): interactive input from the user is not supported");
            }
        }
        params["inputResponses"] = std::move(responses);
        if (const auto* st = result.if_contains("requestState"))
            params["requestState"] = *st;
        else
            params.erase("requestState");
        return true;
    }

    /// The params of a tools/call, and its progress token when someone listens.
    boost::json::object tool_call_params(std::string_view name, const boost::json::object& arguments,
                                         request_context& ctx) {
        boost::json::object params{{"name", name}, {"arguments", arguments}};
        if (options.on_event || ctx.listener != nullptr) {
            ctx.progress_token = next_progress_token++;
            params["_meta"] = boost::json::object{{"progressToken", ctx.progress_token}};
        }
        return params;
    }

    request_context tool_call_context(const call_options& o) const {
        return request_context{o.timeout.value_or(config.tool_call_timeout),
                               o.stop,
                               o.on_event ? &o : nullptr,
                               0,
                               o.on_elicitation ? &o : nullptr,
                               o.roots.empty() ? nullptr : &o.roots};
    }

    // -- connection -------------------------------------------------------

    void connect() {
        std::lock_guard lock(connect_mutex);
        if (connected && chan && chan->alive()) return;
        if (chan) chan->shutdown();
        make_channel();
        chan->start();
        try {
            handshake();
        } catch (...) {
            chan->shutdown();
            throw;
        }
        connected = true;
    }

    void handshake() {
        const auto pref = options.era;
        if (pref == era_preference::modern ||
            (pref == era_preference::automatic && !(era_known && era == protocol_era::legacy))) {
            if (try_modern(pref == era_preference::modern)) return;
        }
        legacy_initialize();
    }

    /// `server/discover`; true when the server speaks 2026-07-28. With
    /// `required`, any other answer is an error.
    bool try_modern(bool required) {
        {
            std::lock_guard lock(mutex);
            era = protocol_era::modern;
        }
        chan->set_era(protocol_era::modern, modern_protocol_version);
        const auto timeout = required || config.type == transport_type::http ? config.session_init_timeout
                                                                             : options.discover_timeout;
        try {
            boost::json::object params{{"_meta", modern_meta()}};
            boost::json::object result = exchange("server/discover", std::move(params), timeout);
            bool supported = false;
            if (const auto* v = result.if_contains("supportedVersions"); v && v->is_array())
                for (const auto& s : v->get_array())
                    supported = supported || (s.is_string() && s.get_string() == modern_protocol_version);
            if (!supported) {
                if (required)
                    throw mcp_error(mcp_error_kind::protocol, label() + " does not list " +
                                                                  std::string(modern_protocol_version) +
                                                                  " among its supported versions");
                return fall_back();
            }
            std::lock_guard lock(mutex);
            version = modern_protocol_version;
            server_info = {};
            if (const auto* m = result.if_contains("_meta"); m && m->is_object())
                if (const auto* si = m->get_object().if_contains("io.modelcontextprotocol/serverInfo");
                    si && si->is_object())
                    server_info = si->get_object();
            if (server_info.empty())
                if (const auto* si = result.if_contains("serverInfo"); si && si->is_object())
                    server_info = si->get_object();
            era_known = true;
            return true;
        } catch (const mcp_error& e) {
            if (required) throw;
            if (e.kind() == mcp_error_kind::closed || e.kind() == mcp_error_kind::limit ||
                e.kind() == mcp_error_kind::configuration)
                throw;
            if (e.kind() == mcp_error_kind::remote && is_modern_error(e.code())) {
                // A recognised 2026-era error: the server speaks that era (the
                // spec's rule: no fall back), unless it names a 2025 version
                // we speak among the versions it supports.
                if (e.code() == error_code::unsupported_protocol_version && lists_legacy_version(e.data()))
                    return fall_back();
                throw mcp_error(mcp_error_kind::protocol,
                                label() + " speaks the " + std::string(modern_protocol_version) +
                                    " era but refused server/discover (" + std::to_string(e.code()) + ": " +
                                    e.what() + "); this client offers " +
                                    std::string(modern_protocol_version),
                                e.code(), e.data());
            }
            if (e.kind() == mcp_error_kind::timeout && config.type == transport_type::stdio) {
                // The spec's rule: a timeout falls back too. The server may be
                // one that never answers anything; initialize finds out.
            }
            return fall_back();
        }
    }

    static bool is_modern_error(int code) noexcept {
        return code == error_code::header_mismatch || code == error_code::missing_client_capability ||
               code == error_code::unsupported_protocol_version;
    }

    /// Whether an UnsupportedProtocolVersion error's data lists a 2025
    /// version this client speaks (`supported` or `supportedVersions`).
    static bool lists_legacy_version(const boost::json::value& data) {
        const auto* o = data.if_object();
        if (!o) return false;
        for (std::string_view key : {"supported", "supportedVersions"})
            if (const auto* v = o->if_contains(key); v && v->is_array())
                for (const auto& s : v->get_array())
                    for (auto known : legacy_protocol_versions)
                        if (s.is_string() && s.get_string() == known) return true;
        return false;
    }

    bool fall_back() {
        {
            std::lock_guard lock(mutex);
            era = protocol_era::legacy;
        }
        chan->set_era(protocol_era::legacy, "");
        return false;
    }

    void legacy_initialize() {
        {
            std::lock_guard lock(mutex);
            era = protocol_era::legacy;
        }
        chan->set_era(protocol_era::legacy, "");
        boost::json::object params{{"protocolVersion", latest_legacy_protocol_version},
                                   {"capabilities", client_capabilities()},
                                   {"clientInfo", client_info()}};
        boost::json::object result;
        try {
            result = exchange("initialize", std::move(params), config.session_init_timeout);
        } catch (const mcp_error& e) {
            if (e.kind() == mcp_error_kind::remote)
                throw mcp_error(mcp_error_kind::protocol, label() + " refused initialize: " + e.what(),
                                e.code(), e.data());
            throw;
        }
        std::string answered;
        if (const auto* v = result.if_contains("protocolVersion"); v && v->is_string())
            answered = v->as_string();
        bool ok = false;
        for (auto s : legacy_protocol_versions)
            ok = ok || answered == s;
        if (!ok) {
            std::string spoken;
            for (auto v : legacy_protocol_versions)
                spoken += std::string(v) + ", ";
            throw mcp_error(mcp_error_kind::protocol,
                            label() + " answered protocol version \"" + answered + "\" to the offered " +
                                std::string(latest_legacy_protocol_version) + "; this client speaks " +
                                spoken + "and " + std::string(modern_protocol_version));
        }
        {
            std::lock_guard lock(mutex);
            version = answered;
            server_info = {};
            if (const auto* si = result.if_contains("serverInfo"); si && si->is_object())
                server_info = si->get_object();
            era_known = true;
        }
        chan->set_era(protocol_era::legacy, answered);
        notify("notifications/initialized", {});
        chan->open_listener();
    }

    /// Connected, and the server alive.
    bool ready() {
        std::lock_guard lock(connect_mutex);
        return connected && chan && chan->alive();
    }

    /// Connects when needed; restarts a crashed stdio server once.
    void ensure_connected() {
        std::lock_guard lock(connect_mutex);
        if (!connected) {
            connect();
            return;
        }
        if (chan->alive()) return;
        if (config.type == transport_type::stdio) {
            if (!options.restart_crashed_server || restarted)
                throw mcp_error(mcp_error_kind::closed,
                                label() + " has stopped" +
                                    (restarted ? " again after a restart" : std::string()));
            restarted = true;
        }
        connected = false;
        connect();
    }

    /// Runs `f` connected; over HTTP, a session the server ended is started
    /// again and `f` run once more.
    template <class F>
    auto with_session(F&& f) {
        ensure_connected();
        try {
            return f();
        } catch (const mcp_error& e) {
            if (config.type != transport_type::http || e.kind() != mcp_error_kind::closed || chan->alive())
                throw;
        }
        ensure_connected();
        return f();
    }

    void close() {
        std::lock_guard lock(connect_mutex);
        if (chan) chan->shutdown();
        connected = false;
        std::vector<std::thread> threads;
        {
            std::lock_guard l(mutex);
            threads.swap(responders);
        }
        for (auto& t : threads)
            if (t.joinable()) t.join();
        fail_all(mcp_error(mcp_error_kind::closed, label() + " was closed"));
    }
};

} // namespace agentware::mcp::detail

namespace agentware::mcp {

AGENTWARE_DECL client::client(server_config config, client_options options)
    : state_(std::make_shared<detail::client_state>(std::move(config), std::move(options))) {}

AGENTWARE_DECL client::~client() {
    try {
        close();
    } catch (...) {
    }
}

AGENTWARE_DECL void client::connect() { state_->connect(); }
AGENTWARE_DECL void client::close() { state_->close(); }
AGENTWARE_DECL const server_config& client::config() const noexcept { return state_->config; }
AGENTWARE_DECL const client_options& client::options() const noexcept { return state_->options; }

AGENTWARE_DECL protocol_era client::era() const {
    std::lock_guard lock(state_->mutex);
    return state_->era;
}
AGENTWARE_DECL std::string client::protocol_version() const {
    std::lock_guard lock(state_->mutex);
    return state_->version;
}
AGENTWARE_DECL boost::json::object client::server_info() const {
    std::lock_guard lock(state_->mutex);
    return state_->server_info;
}
AGENTWARE_DECL std::string client::stderr_tail() const {
    std::lock_guard lock(state_->connect_mutex);
    return state_->chan ? state_->chan->stderr_tail() : std::string();
}
AGENTWARE_DECL bool client::tools_changed() const noexcept { return state_->tools_changed; }
AGENTWARE_DECL std::uint64_t client::tools_list_changes() const noexcept { return state_->list_changes; }

AGENTWARE_DECL boost::json::object client::request(std::string_view method, boost::json::object params,
                                                   std::optional<std::chrono::milliseconds> timeout) {
    return state_->with_session(
        [&] { return state_->call(method, params, timeout.value_or(state_->config.tool_call_timeout)); });
}

AGENTWARE_DECL std::vector<tool_info> client::list_tools() {
    return state_->with_session([&] { return list_tools_once(); });
}

AGENTWARE_DECL std::vector<tool_info> client::list_tools_once() {
    state_->tools_changed = false;
    std::vector<tool_info> out;
    std::string cursor;
    for (std::size_t page = 0;; ++page) {
        if (page >= state_->options.max_list_pages)
            throw mcp_error(mcp_error_kind::limit, state_->label() + " listed more than " +
                                                       std::to_string(state_->options.max_list_pages) +
                                                       " pages of tools");
        boost::json::object params;
        if (!cursor.empty()) params["cursor"] = cursor;
        const boost::json::object result =
            state_->call("tools/list", std::move(params), state_->config.session_init_timeout);
        const auto* tools = result.if_contains("tools");
        if (tools == nullptr || !tools->is_array())
            throw mcp_error(mcp_error_kind::protocol,
                            state_->label() + " answered tools/list without a tools array");
        for (const auto& t : tools->get_array()) {
            if (!t.is_object()) continue;
            const auto& o = t.get_object();
            tool_info info;
            if (const auto* n = o.if_contains("name"); n && n->is_string()) info.name = n->as_string();
            if (info.name.empty())
                throw mcp_error(mcp_error_kind::protocol, state_->label() + " listed a tool without a name");
            if (const auto* v = o.if_contains("title"); v && v->is_string()) info.title = v->as_string();
            if (const auto* v = o.if_contains("description"); v && v->is_string())
                info.description = v->as_string();
            if (const auto* v = o.if_contains("inputSchema"); v && v->is_object())
                info.input_schema = v->get_object();
            else
                info.input_schema = {{"type", "object"}};
            if (const auto* v = o.if_contains("outputSchema"); v && v->is_object())
                info.output_schema = v->get_object();
            out.push_back(std::move(info));
        }
        const auto* next = result.if_contains("nextCursor");
        if (next == nullptr || !next->is_string() || next->get_string().empty()) break;
        cursor = next->as_string();
    }
    return out;
}

AGENTWARE_DECL boost::json::object client::call_tool(std::string_view name,
                                                     const boost::json::object& arguments,
                                                     std::optional<std::chrono::milliseconds> timeout) {
    call_options options;
    options.timeout = timeout;
    return call_tool(name, arguments, options);
}

AGENTWARE_DECL boost::json::object
client::call_tool(std::string_view name, const boost::json::object& arguments, const call_options& options) {
    detail::request_context ctx = state_->tool_call_context(options);
    return state_->with_session([&] {
        boost::json::object params = state_->tool_call_params(name, arguments, ctx);
        return state_->call("tools/call", std::move(params), ctx);
    });
}

AGENTWARE_DECL boost::asio::awaitable<boost::json::object>
client::async_call_tool(std::string name, boost::json::object arguments, call_options options) {
    const std::shared_ptr<detail::client_state> state = state_;
    if (state->config.type != transport_type::stdio) {
        boost::json::object result;
        co_await detail::off_executor([&] { result = call_tool(name, arguments, options); });
        co_return result;
    }
    if (!state->ready()) co_await detail::off_executor([&] { state->ensure_connected(); });
    detail::request_context ctx = state->tool_call_context(options);
    boost::json::object params = state->tool_call_params(name, arguments, ctx);
    co_return co_await state->async_call("tools/call", std::move(params), ctx);
}

AGENTWARE_DECL void client::ping() {
    state_->ensure_connected();
    if (era() == protocol_era::modern)
        state_->call("server/discover", {}, state_->config.session_init_timeout);
    else
        state_->call("ping", {}, state_->config.session_init_timeout);
}

} // namespace agentware::mcp

#endif
