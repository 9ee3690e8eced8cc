#ifndef AGENTWARE_SERVER_HTTP_HPP
#define AGENTWARE_SERVER_HTTP_HPP

// The server's requests and responses, and the router that maps a method and
// a path (`/threads/{thread_id}/runs/{run_id}`) to a handler. A handler is a
// function of the request, plain or a coroutine (one that asks the store, whose
// answer may take a database round trip): it answers, or names a run whose
// events the connection then streams (SSE) or waits on (runs.wait, join,
// cancel with wait) — the session (server.hpp) does the waiting, so a handler
// never blocks a connection's thread.

#include <agentware/json/reader.hpp>
#include <agentware/server/run_stream.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>

#include <concepts>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware::server {

struct http_request {
    std::string method;
    std::string path;                           ///< without the query, percent-decoded per segment
    std::map<std::string, std::string> query;   ///< decoded
    std::map<std::string, std::string> headers; ///< names lower-cased
    std::string body;
    std::map<std::string, std::string> params; ///< the path's {names}

    std::string header(const std::string& name) const {
        auto it = headers.find(name);
        return it == headers.end() ? std::string() : it->second;
    }
    std::string param(const std::string& name) const {
        auto it = params.find(name);
        return it == params.end() ? std::string() : it->second;
    }
    std::optional<std::string> query_value(const std::string& name) const {
        auto it = query.find(name);
        if (it == query.end()) return std::nullopt;
        return it->second;
    }
};

struct http_response {
    unsigned status = 200;
    std::string content_type = "application/json";
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;

    /// What the connection does after the head.
    enum class mode {
        whole,  ///< send `body`
        events, ///< stream the run's events as SSE
        await,  ///< wait for the run's end, then send `then()` (keep-alive newlines while waiting when
                ///< `keep_alive`)
    } kind = mode::whole;
    std::shared_ptr<run_stream> stream;
    std::size_t from = 0;                ///< events: the first event id to send
    std::string run_id;                  ///< events: the run, as a `gap` event names it
    bool event_ids = true;               ///< events: `id:` lines (stateless runs have none)
    bool keep_alive = true;              ///< await: newlines while waiting
    std::function<void()> on_disconnect; ///< the client left before the end
    std::function<http_response()> then; ///< await: the answer once the run ended

    static http_response json(const boost::json::value& v, unsigned status = 200) {
        http_response r;
        r.status = status;
        r.body = boost::json::serialize(v);
        return r;
    }
    static http_response text(unsigned status, std::string message) {
        http_response r;
        r.status = status;
        r.content_type = "text/plain; charset=utf-8";
        r.body = std::move(message);
        return r;
    }
    /// DeerFlow's gateway errors: {"detail": "..."}.
    static http_response detail(unsigned status, std::string message) {
        return json(boost::json::object{{"detail", std::move(message)}}, status);
    }
    static http_response empty(unsigned status) {
        http_response r;
        r.status = status;
        r.content_type.clear();
        return r;
    }
};

/// A bad request body: 422 with the field's path, in the shape clients of
/// the reference server parse (a list of issues, each with its path).
inline http_response validation_error(const json_error& e) {
    boost::json::array path;
    std::string p = e.path();
    std::size_t at = 0;
    while (at < p.size()) {
        const std::size_t dot = p.find_first_of(".[", at);
        std::string part = p.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
        if (!part.empty()) {
            if (part.back() == ']') part.pop_back();
            if (!part.empty() && part.find_first_not_of("0123456789") == std::string::npos)
                path.push_back(std::stoll(part));
            else if (!part.empty())
                path.push_back(boost::json::string(part));
        }
        if (dot == std::string::npos) break;
        at = dot + 1;
    }
    return http_response::json(
        boost::json::object{{"detail", e.what()},
                            {"error", boost::json::object{{"name", "ValidationError"},
                                                          {"issues", boost::json::array{boost::json::object{
                                                                         {"path", std::move(path)},
                                                                         {"message", e.problem()}}}}}}},
        422);
}

/// `%2F` and the like decoded (a `+` stays: paths are not forms).
inline std::string percent_decode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
            out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

namespace detail {

/// A handler that calls `self->*f`, keeps `keep_alive` (the owner of `self`)
/// alive, and answers a file that cannot be read or written as DeerFlow's
/// gateway does: 500 with the reason in `detail`.
template <class Owner>
std::function<http_response(http_request&)> gateway_handler(Owner* self,
                                                            http_response (Owner::*f)(http_request&),
                                                            std::shared_ptr<const void> keep_alive) {
    return [self, f, keep_alive = std::move(keep_alive)](http_request& q) {
        try {
            return (self->*f)(q);
        } catch (const std::runtime_error& e) {
            return http_response::detail(500, e.what());
        }
    };
}

} // namespace detail

/// Routes by method and path pattern; `{name}` matches one segment, a last
/// `{name:path}` the rest of the path.
class router {
public:
    using handler = std::function<boost::asio::awaitable<http_response>(http_request&)>;

    void add(std::string method, std::string pattern, handler h) {
        routes_.push_back({std::move(method), split(pattern), std::move(h)});
    }
    /// A handler that answers at once.
    template <class F>
        requires std::same_as<std::invoke_result_t<F&, http_request&>, http_response>
    void add(std::string method, std::string pattern, F f) {
        add(std::move(method), std::move(pattern),
            handler([f = std::move(f)](http_request& q) mutable -> boost::asio::awaitable<http_response> {
                co_return f(q);
            }));
    }

    /// The response of the matching route; 404 (no path) or 405 (no method) otherwise.
    boost::asio::awaitable<http_response> dispatch(http_request& req) const {
        auto segments = split(req.path);
        for (auto& s : segments)
            s = percent_decode(s);
        bool path_known = false;
        for (const auto& r : routes_) {
            std::map<std::string, std::string> params;
            if (!match(r.pattern, segments, params)) continue;
            path_known = true;
            if (r.method != req.method) continue;
            req.params = std::move(params);
            co_return co_await r.run(req);
        }
        if (path_known) co_return http_response::text(405, "Method Not Allowed");
        co_return http_response::text(404, "Not Found");
    }

private:
    struct route {
        std::string method;
        std::vector<std::string> pattern;
        handler run;
    };

    static std::vector<std::string> split(std::string_view path) {
        std::vector<std::string> out;
        std::size_t at = 0;
        while (at <= path.size()) {
            const std::size_t slash = path.find('/', at);
            const auto seg =
                path.substr(at, slash == std::string_view::npos ? std::string_view::npos : slash - at);
            if (!seg.empty()) out.emplace_back(seg);
            if (slash == std::string_view::npos) break;
            at = slash + 1;
        }
        return out;
    }

    static bool match(const std::vector<std::string>& pattern, const std::vector<std::string>& path,
                      std::map<std::string, std::string>& params) {
        for (std::size_t i = 0; i < pattern.size(); ++i) {
            const std::string& p = pattern[i];
            const bool var = p.size() > 2 && p.front() == '{' && p.back() == '}';
            if (var && p.ends_with(":path}")) {
                if (i >= path.size()) return false;
                std::string rest;
                for (std::size_t j = i; j < path.size(); ++j)
                    rest += (j == i ? "" : "/") + path[j];
                params[p.substr(1, p.size() - 7)] = rest;
                return true;
            }
            if (i >= path.size()) return false;
            if (var)
                params[p.substr(1, p.size() - 2)] = path[i];
            else if (p != path[i])
                return false;
        }
        return pattern.size() == path.size();
    }

    std::vector<route> routes_;
};

} // namespace agentware::server

#endif
