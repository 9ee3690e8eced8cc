#ifndef AGENTWARE_MIDDLEWARE_DETAIL_RETRY_LOOP_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_RETRY_LOOP_HPP

// The retry loop of model_retry and tool_retry (LangChain's ModelRetry and
// ToolRetry middlewares), written once for both agent loops: call `next`; on
// an exception the predicate accepts, wait (the model clients' backoff of
// model/retry.hpp, with LangChain's ±25 % jitter) and call again, up to
// `max_retries` more times; then hand the last failure to `on_exhausted`.

#include <agentware/detail/awaitable.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/middleware/detail/call_limits.hpp>
#include <agentware/model/error.hpp>
#include <agentware/model/retry.hpp>
#include <agentware/tool/interrupt.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>

#include <fmt/core.h>

#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

namespace agentware {

/// LangChain's retry parameters (Python names and defaults; delays in seconds).
struct retry_options {
    int max_retries = 2;         ///< retries after the first attempt (3 attempts in all)
    double backoff_factor = 2.0; ///< 0: every delay is `initial_delay`
    double initial_delay = 1.0;  ///< seconds before the first retry
    double max_delay = 60.0;     ///< cap of a delay, before jitter
    bool jitter = true;          ///< ±25 % uniform
    exit_behavior on_failure = exit_behavior::continue_; ///< `continue` or `error`

    // Set in code only (no JSON form):
    /// Whether to retry after this failure. Empty: the default (a model_error
    /// when retryable(), any other exception). A predicate that throws means "no".
    std::function<bool(const std::exception&)> retry_on;
    /// `on_failure` as a function: the text of the message answering in place
    /// of the failed call. Replaces `continue`'s text when set.
    std::function<std::string(const std::exception&)> failure_text;
    /// How to wait (a fake clock in tests and replays). Empty: really wait.
    std::function<void(std::chrono::milliseconds)> sleep;

    void validate() const {
        if (max_retries < 0) throw std::invalid_argument("max_retries must be >= 0");
        if (!(initial_delay >= 0)) throw std::invalid_argument("initial_delay must be >= 0");
        if (!(max_delay >= 0)) throw std::invalid_argument("max_delay must be >= 0");
        if (!(backoff_factor >= 0)) throw std::invalid_argument("backoff_factor must be >= 0");
        if (on_failure == exit_behavior::end)
            throw std::invalid_argument("on_failure must be 'continue' or 'error'");
    }

    /// The delay before retry `retry` (0 for the first): the clients' backoff.
    template <class Rng>
    std::chrono::milliseconds delay(int retry, Rng& rng) const {
        retry_policy p;
        p.max_retries = max_retries;
        p.initial_backoff = std::chrono::milliseconds(static_cast<std::int64_t>(initial_delay * 1000.0));
        p.max_backoff = std::chrono::milliseconds(static_cast<std::int64_t>(max_delay * 1000.0));
        p.multiplier = backoff_factor == 0.0 ? 1.0 : backoff_factor;
        p.jitter = jitter ? 0.25 : 0.0;
        p.symmetric_jitter = true;
        return p.backoff(retry, rng);
    }

    /// The default predicate: the model errors' own verdict, anything else retried.
    static bool default_retry_on(const std::exception& e) {
        if (const auto* m = dynamic_cast<const model_error*>(&e)) return m->retryable();
        return true;
    }

    bool should_retry(std::exception_ptr e) const noexcept {
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& x) {
            try {
                return retry_on ? retry_on(x) : default_retry_on(x);
            } catch (...) {
                return false; // a throwing predicate: give up on this error, keep it
            }
        } catch (...) {
            return false; // not a std::exception: nothing to judge it by
        }
    }

    friend bool operator==(const retry_options& a, const retry_options& b) {
        return a.max_retries == b.max_retries && a.backoff_factor == b.backoff_factor &&
               a.initial_delay == b.initial_delay && a.max_delay == b.max_delay && a.jitter == b.jitter &&
               a.on_failure == b.on_failure;
    }
};

namespace detail {

inline std::mt19937& retry_rng() {
    thread_local std::mt19937 rng{std::random_device{}()};
    return rng;
}

inline std::chrono::milliseconds retry_delay(const retry_options& o, int retry) {
    return o.delay(retry, retry_rng());
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

template <class R, class Request, class Next, class OnExhausted>
R retry_awaited(Request request, Next next, const retry_options* o, OnExhausted on_exhausted) {
    for (int attempt = 0;; ++attempt) {
        std::exception_ptr failure;
        try {
            co_return co_await next(request);
        } catch (...) {
            failure = std::current_exception();
        }
        if (is_interrupt(failure)) std::rethrow_exception(failure); // a pause, not a failure
        if (attempt >= o->max_retries || !o->should_retry(failure))
            co_return on_exhausted(failure, attempt + 1);
        const auto wait = retry_delay(*o, attempt);
        if (o->sleep) {
            o->sleep(wait);
        } else if (wait.count() > 0) {
            boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, wait);
            co_await timer.async_wait(boost::asio::use_awaitable);
        }
    }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/// Calls `next(request)` with retries; `on_exhausted(std::exception_ptr, attempts)`
/// answers (or rethrows) when they are used up or the error is not retried.
/// `o` must outlive the call (it is the middleware's own options).
template <class Request, class Next, class OnExhausted>
auto with_retries(Request& request, Next& next, const retry_options& o, OnExhausted on_exhausted)
    -> decltype(next(request)) {
    using R = decltype(next(request));
    if constexpr (is_awaitable_v<R>) {
        return retry_awaited<R>(request, next, &o, std::move(on_exhausted));
    } else {
        for (int attempt = 0;; ++attempt) {
            std::exception_ptr failure;
            try {
                return next(request);
            } catch (...) {
                failure = std::current_exception();
            }
            if (is_interrupt(failure)) std::rethrow_exception(failure); // a pause, not a failure
            if (attempt >= o.max_retries || !o.should_retry(failure))
                return on_exhausted(failure, attempt + 1);
            const auto wait = retry_delay(o, attempt);
            if (o.sleep)
                o.sleep(wait);
            else if (wait.count() > 0)
                std::this_thread::sleep_for(wait);
        }
    }
}

/// Reads the JSON keys both retry middlewares share (Python's names).
inline void read_retry_options(json_reader& r, retry_options& o) {
    r.read("max_retries", o.max_retries)
        .read("backoff_factor", o.backoff_factor)
        .read("initial_delay", o.initial_delay)
        .read("max_delay", o.max_delay)
        .read("jitter", o.jitter);
    read_exit_behavior(r, "on_failure", o.on_failure, {exit_behavior::continue_, exit_behavior::error});
}

inline void write_retry_options(boost::json::object& jv, const retry_options& o) {
    jv["max_retries"] = o.max_retries;
    jv["backoff_factor"] = o.backoff_factor;
    jv["initial_delay"] = o.initial_delay;
    jv["max_delay"] = o.max_delay;
    jv["jitter"] = o.jitter;
    jv["on_failure"] = to_string(o.on_failure);
}

inline std::string attempts_text(int n) {
    return detail::format("{} {}", n, n == 1 ? "attempt" : "attempts");
}

} // namespace detail

} // namespace agentware

#endif
