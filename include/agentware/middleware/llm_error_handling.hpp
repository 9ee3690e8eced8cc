#ifndef AGENTWARE_MIDDLEWARE_LLM_ERROR_HANDLING_HPP
#define AGENTWARE_MIDDLEWARE_LLM_ERROR_HANDLING_HPP

// llm_error_handling: keeps a failing model provider from ending the run
// (DeerFlow's LLMErrorHandlingMiddleware). Around every model call it
//  1. classifies what the call threw (the model clients' typed model_error,
//     then the provider's words): quota, auth, burst_rate, transient, busy or
//     generic;
//  2. retries the retriable ones with decorrelated jitter (a server's
//     Retry-After wins), reporting each retry as an `llm_retry` event on the
//     run's stream;
//  3. counts the failures that survive their retries in a circuit breaker
//     shared by every run the middleware serves: after `failure_threshold` in
//     a row it opens for `recovery_timeout`, during which calls fail at once;
//     then one probe call is let through (half open), and its outcome closes
//     or reopens the breaker;
//  4. with `max_concurrent_calls`, lets at most that many calls reach the
//     provider at once (the others wait their turn);
//  5. answers a final failure with an ai message (no tool calls) that says
//     what happened, marked `deerflow_error_fallback`, so the run ends with a
//     readable answer instead of an error.
//
// Time comes from an injectable clock: `system_retry_clock` sleeps for real,
// `manual_retry_clock` only advances, so tests and replays retry at once and
// the breaker's sixty seconds pass when a test says so.

#include <agentware/detail/awaitable.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/call_slots.hpp>
#include <agentware/model/chat_model.hpp>
#include <agentware/model/detail/provider_error.hpp>
#include <agentware/model/error.hpp>
#include <agentware/model/retry.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace agentware {

/// Where llm_error_handling takes the time from and how it waits.
class retry_clock {
public:
    virtual ~retry_clock() = default;
    virtual std::chrono::steady_clock::time_point now() const = 0;
    /// Waits `delay` (the blocking loop; the coroutine loop uses a timer when
    /// `sleeps()` is true and calls this otherwise).
    virtual void sleep(std::chrono::milliseconds delay) = 0;
    /// True when sleep() really waits.
    virtual bool sleeps() const noexcept = 0;
};

/// The steady clock; waits for real.
class system_retry_clock final : public retry_clock {
public:
    std::chrono::steady_clock::time_point now() const override { return std::chrono::steady_clock::now(); }
    void sleep(std::chrono::milliseconds delay) override { std::this_thread::sleep_for(delay); }
    bool sleeps() const noexcept override { return true; }
};

/// A clock that stands still until told to move; sleep() moves it instead of
/// waiting. For tests and replays. Safe to use from several threads.
class manual_retry_clock final : public retry_clock {
public:
    std::chrono::steady_clock::time_point now() const override {
        return std::chrono::steady_clock::time_point(std::chrono::milliseconds(now_ms_.load()));
    }
    void sleep(std::chrono::milliseconds delay) override {
        advance(delay);
        slept_ms_.fetch_add(delay.count());
    }
    bool sleeps() const noexcept override { return false; }
    void advance(std::chrono::milliseconds by) { now_ms_.fetch_add(by.count()); }
    /// The total of all sleeps so far.
    std::chrono::milliseconds slept() const { return std::chrono::milliseconds(slept_ms_.load()); }

private:
    std::atomic<std::int64_t> now_ms_{0};
    std::atomic<std::int64_t> slept_ms_{0};
};

/// DeerFlow's `llm_call:` section, and its `circuit_breaker:` section folded in.
struct llm_error_handling_options {
    /// At most this many calls to the provider in flight at once, across every
    /// run the middleware (and its copies) serves; 0: no cap. A call over the
    /// cap waits for a slot (a coroutine waits without holding its thread).
    int max_concurrent_calls = 0;
    int retry_max_attempts = 3; ///< attempts in all, the first included (1: no retries)
    std::chrono::milliseconds retry_base_delay{1000};
    std::chrono::milliseconds retry_cap_delay{8000};
    std::chrono::milliseconds burst_retry_base_delay{5000}; ///< the base for burst-rate 429s
    int failure_threshold = 5;                              ///< circuit_breaker.failure_threshold
    std::chrono::seconds recovery_timeout{60};              ///< circuit_breaker.recovery_timeout_sec

    void validate() const {
        if (max_concurrent_calls < 0) throw std::invalid_argument("max_concurrent_calls must be >= 0");
        if (retry_max_attempts < 1) throw std::invalid_argument("retry_max_attempts must be >= 1");
        if (retry_base_delay.count() < 0 || retry_cap_delay.count() < 0 || burst_retry_base_delay.count() < 0)
            throw std::invalid_argument("retry delays must be >= 0");
        if (failure_threshold < 1) throw std::invalid_argument("failure_threshold must be >= 1");
        if (recovery_timeout.count() < 0) throw std::invalid_argument("recovery_timeout_sec must be >= 0");
    }

    static constexpr std::string_view config_section = "llm_call";
    static constexpr std::string_view circuit_breaker_section = "circuit_breaker";
    friend bool operator==(const llm_error_handling_options&, const llm_error_handling_options&) = default;
};

/// How llm_error_handling sees one failure.
struct llm_failure {
    bool retriable = false;
    std::string reason; ///< quota, auth, burst_rate, transient, busy, generic
    std::string type;   ///< the model_error kind ("rate_limited", ...), or "exception"
    std::string detail; ///< the error's text
    std::optional<std::chrono::milliseconds> retry_after;
    bool timeout = false;
};

class llm_error_handling {
public:
    // Text kept for parity with DeerFlow (reference §5.16g).
    static constexpr std::string_view quota_text =
        "The configured LLM provider rejected the request because the account is out of quota, billing is "
        "unavailable, or usage is restricted. Please fix the provider account and try again.";
    // Text kept for parity with DeerFlow (reference §5.16g).
    static constexpr std::string_view auth_text = "The configured LLM provider rejected the request because "
                                                  "authentication or access is invalid. Please "
                                                  "check the provider credentials and try again.";
    // Text kept for parity with DeerFlow (reference §5.16g).
    static constexpr std::string_view unavailable_text =
        "The configured LLM provider is temporarily unavailable after multiple retries. Please wait a moment "
        "and continue the conversation.";
    // Text kept for parity with DeerFlow (reference §5.16g; the burst-rate reason of its current code).
    static constexpr std::string_view burst_text =
        "The configured LLM provider is temporarily throttling requests because the request rate increased "
        "too quickly (burst-rate limit). Please wait a moment and try again.";
    // Text kept for parity with DeerFlow (reference §5.16g).
    static constexpr std::string_view failed_format = "LLM request failed: {}";
    // Text kept for parity with DeerFlow (reference §5.16g).
    static constexpr std::string_view circuit_open_text =
        "The configured LLM provider is currently unavailable due to continuous failures. Circuit breaker is "
        "engaged to protect the system. Please wait a moment before trying again.";
    // Text kept for parity with DeerFlow (reference §5.16g).
    static constexpr std::string_view retry_format = "LLM request retry {}/{}: {}. Retrying in {}s.";
    static constexpr std::string_view fallback_key = "deerflow_error_fallback";
    static constexpr int burst_rate_attempts = 2; ///< DeerFlow's budget for burst-rate 429s
    static constexpr int timeout_attempts = 2;    ///< DeerFlow's budget for stream-chunk timeouts

    enum class circuit_state { closed, open, half_open };

    llm_error_handling() : llm_error_handling(llm_error_handling_options{}) {}
    explicit llm_error_handling(llm_error_handling_options o,
                                std::shared_ptr<retry_clock> clock = std::make_shared<system_retry_clock>(),
                                std::optional<std::uint64_t> seed = std::nullopt)
        : options_(std::move(o)), shared_(std::make_shared<shared_state>()) {
        options_.validate();
        if (!clock) throw std::invalid_argument("llm_error_handling: the clock must not be null");
        shared_->clock = std::move(clock);
        shared_->rng.seed(seed ? *seed : std::random_device{}());
        if (options_.max_concurrent_calls > 0)
            shared_->slots = std::make_unique<detail::call_slots>(options_.max_concurrent_calls);
    }

    const llm_error_handling_options& options() const noexcept { return options_; }
    retry_clock& clock() const noexcept { return *shared_->clock; }

    circuit_state state() const {
        std::lock_guard lock(shared_->mutex);
        return shared_->state;
    }
    int consecutive_failures() const {
        std::lock_guard lock(shared_->mutex);
        return shared_->failures;
    }
    /// Calls waiting for a slot under `max_concurrent_calls` now (0 without a cap).
    std::size_t calls_waiting() const { return shared_->slots ? shared_->slots->waiting() : 0; }

    /// DeerFlow's `_classify_error`, with the clients' typed errors first.
    static llm_failure classify(std::exception_ptr e) {
        llm_failure f;
        int status = 0;
        std::optional<model_error_kind> kind;
        try {
            std::rethrow_exception(e);
        } catch (const model_error& me) {
            kind = me.kind();
            status = me.http_status();
            f.type = std::string(to_string(me.kind()));
            f.detail = me.what();
            f.retry_after = me.retry_after();
            f.timeout = me.kind() == model_error_kind::timeout;
        } catch (const std::exception& se) {
            f.type = "exception";
            f.detail = se.what();
        } catch (...) {
            f.type = "exception";
            f.detail = "unknown error";
        }
        if (f.detail.empty()) f.detail = f.type;
        const std::string& d = f.detail;
        auto any_of = [&](const auto& patterns) {
            return std::any_of(patterns.begin(), patterns.end(),
                               [&](std::string_view p) { return detail::contains_nocase(d, p); });
        };
        // Patterns kept for parity with DeerFlow (reference §5.16g).
        static constexpr std::array<std::string_view, 9> quota{
            "insufficient_quota", "quota",    "billing",  "credit", "payment",
            "余额不足",           "超出限额", "额度不足", "欠费"};
        static constexpr std::array<std::string_view, 9> auth{
            "authentication", "unauthorized", "invalid api key", "invalid_api_key", "permission", "forbidden",
            "access denied",  "无权",         "未授权"};
        static constexpr std::array<std::string_view, 5> burst{
            "limit_burst_rate", "rate increased too quickly", "burst rate", "请求速率增长过快", "突发速率"};
        static constexpr std::array<std::string_view, 12> busy{"server busy",      "temporarily unavailable",
                                                               "try again later",  "please retry",
                                                               "please try again", "overloaded",
                                                               "high demand",      "rate limit",
                                                               "负载较高",         "服务繁忙",
                                                               "稍后重试",         "请稍后重试"};
        auto set = [&](bool retriable, std::string_view reason) {
            f.retriable = retriable;
            f.reason = std::string(reason);
            return f;
        };
        if (any_of(quota)) return set(false, "quota");
        if (kind == model_error_kind::authentication || any_of(auth)) return set(false, "auth");
        if (any_of(burst)) return set(true, "burst_rate");
        if (kind == model_error_kind::connection || kind == model_error_kind::timeout ||
            kind == model_error_kind::invalid_response)
            return set(true, "transient");
        static constexpr std::array<int, 8> retriable_status{408, 409, 425, 429, 500, 502, 503, 504};
        if (std::find(retriable_status.begin(), retriable_status.end(), status) != retriable_status.end() ||
            (status == 0 && (kind == model_error_kind::rate_limited || kind == model_error_kind::server)))
            return set(true, "transient");
        if (any_of(busy)) return set(true, "busy");
        return set(false, "generic");
    }

    /// The attempts a failure may take in all: the configured number, tightened
    /// for burst-rate 429s and timeouts.
    int max_attempts_for(const llm_failure& f) const {
        int n = options_.retry_max_attempts;
        if (f.reason == "burst_rate") n = std::min(n, burst_rate_attempts);
        if (f.timeout) n = std::min(n, timeout_attempts);
        return n;
    }

    /// The text of the retry event.
    static std::string retry_message(int attempt, int max_attempts, std::chrono::milliseconds wait,
                                     std::string_view reason) {
        const auto seconds = std::max<long long>(1, std::llround(static_cast<double>(wait.count()) / 1000.0));
        // Text kept for parity with DeerFlow (reference §5.16g).
        std::string_view why = reason == "busy"         ? "provider is busy"
                               : reason == "burst_rate" ? "provider is throttling request burst rate"
                                                        : "provider request failed temporarily";
        return fmt::format(fmt::runtime(retry_format), attempt, max_attempts, why, seconds);
    }

    /// The ai message that answers in place of a failed call.
    static message fallback_message(std::string_view text, std::string_view type, std::string_view reason,
                                    std::string_view detail) {
        message m = ai_message(std::string(text));
        m.metadata[fallback_key] = true;
        m.metadata["error_type"] = type;
        m.metadata["error_reason"] = reason;
        m.metadata["error_detail"] = detail;
        return m;
    }

    static message fallback_for(const llm_failure& f) {
        std::string text;
        if (f.reason == "quota")
            text = quota_text;
        else if (f.reason == "auth")
            text = auth_text;
        else if (f.reason == "burst_rate")
            text = burst_text;
        else if (f.reason == "busy" || f.reason == "transient")
            text = unavailable_text;
        else
            text = fmt::format(fmt::runtime(failed_format), f.detail);
        return fallback_message(text, f.type, f.reason, f.detail);
    }

    static message circuit_open_message() {
        return fallback_message(circuit_open_text, "CircuitBreakerOpen", "circuit_open",
                                "LLM circuit breaker is open");
    }

    // --- the hook ---

    auto wrap_model_call(auto& req, auto&& next) {
        using R = decltype(next(req));
        if constexpr (detail::is_awaitable_v<R>)
            return call_async<R>(req, next);
        else
            return call_blocking(req, next);
    }

private:
    struct shared_state {
        mutable std::mutex mutex;
        circuit_state state = circuit_state::closed;
        int failures = 0;
        std::chrono::steady_clock::time_point open_until{};
        bool probe_in_flight = false;
        std::shared_ptr<retry_clock> clock;
        std::minstd_rand rng;
        std::unique_ptr<detail::call_slots> slots; // max_concurrent_calls; null: no cap
    };

    // What to do after an attempt failed.
    struct decision {
        std::optional<std::chrono::milliseconds> wait; // retry after this delay
        std::optional<message> answer;                 // or answer with this
    };

    /// True when the call may go ahead (closed, or the one half-open probe).
    bool admit() {
        std::lock_guard lock(shared_->mutex);
        auto& s = *shared_;
        if (s.state == circuit_state::open) {
            if (s.clock->now() < s.open_until) return false;
            s.state = circuit_state::half_open;
            s.probe_in_flight = false;
        }
        if (s.state == circuit_state::half_open) {
            if (s.probe_in_flight) return false;
            s.probe_in_flight = true;
        }
        return true;
    }

    void record_success() {
        std::lock_guard lock(shared_->mutex);
        auto& s = *shared_;
        s.failures = 0;
        s.state = circuit_state::closed;
        s.probe_in_flight = false;
    }

    void record_failure() {
        std::lock_guard lock(shared_->mutex);
        auto& s = *shared_;
        const auto until = s.clock->now() + options_.recovery_timeout;
        if (s.state == circuit_state::half_open) {
            s.state = circuit_state::open;
            s.open_until = until;
            s.probe_in_flight = false;
            return;
        }
        if (++s.failures >= options_.failure_threshold) {
            s.open_until = until;
            if (s.state != circuit_state::open) {
                s.state = circuit_state::open;
                s.probe_in_flight = false;
            }
        }
    }

    /// A probe that ended without a verdict (cancelled, or a failure that says
    /// nothing about the provider's health) frees the half-open slot.
    void release_probe() {
        std::lock_guard lock(shared_->mutex);
        if (shared_->state == circuit_state::half_open) shared_->probe_in_flight = false;
    }

    std::chrono::milliseconds next_delay(const llm_failure& f, std::chrono::milliseconds& previous) {
        if (f.retry_after) return *f.retry_after; // the server said when: no jitter
        const auto base =
            f.reason == "burst_rate" ? options_.burst_retry_base_delay : options_.retry_base_delay;
        if (previous.count() < 0) previous = base; // the first retry is seeded with its reason's base
        std::lock_guard lock(shared_->mutex);
        return decorrelated_jitter(base, options_.retry_cap_delay, previous, shared_->rng);
    }

    // Failures that must pass through untouched: a cancelled call, and a
    // model that is not set up (no API key, no script left) - not the provider's doing.
    static bool passes_through(std::exception_ptr e) {
        try {
            std::rethrow_exception(e);
        } catch (const model_error& me) {
            return me.kind() == model_error_kind::cancelled || me.kind() == model_error_kind::configuration;
        } catch (...) {
            return false;
        }
    }

    decision after_failure(std::exception_ptr e, int attempt, std::chrono::milliseconds& previous,
                           const stream_handler& stream) {
        if (passes_through(e)) {
            release_probe();
            std::rethrow_exception(e);
        }
        llm_failure f = classify(e);
        const int max_attempts = max_attempts_for(f);
        if (f.retriable && attempt < max_attempts) {
            const auto wait = next_delay(f, previous);
            previous = wait;
            if (stream.on_event) {
                try {
                    stream.on_event(boost::json::object{
                        {"type", "llm_retry"},
                        {"attempt", attempt},
                        {"max_attempts", max_attempts},
                        {"wait_ms", wait.count()},
                        {"reason", f.reason},
                        {"message", retry_message(attempt, max_attempts, wait, f.reason)}});
                } catch (...) { // a listener's failure does not stop the retry
                }
            }
            return {wait, std::nullopt};
        }
        // Burst-rate failures are the provider shedding load, not failing: they
        // do not count toward the breaker (DeerFlow's #4290).
        if (f.retriable && f.reason != "burst_rate")
            record_failure();
        else
            release_probe();
        return {std::nullopt, fallback_for(f)};
    }

    auto call_blocking(auto& req, auto& next) -> decltype(next(req)) {
        using R = decltype(next(req));
        if (!admit()) return R{circuit_open_message(), {}};
        req.client_max_retries = 0; // the retries are ours (see the docs page)
        detail::call_slots* slots = shared_->slots.get();
        std::chrono::milliseconds previous{-1};
        for (int attempt = 1;; ++attempt) {
            std::exception_ptr failure;
            try {
                if (slots) slots->acquire(); // a slot per attempt, not held while waiting to retry
                detail::call_slot_guard slot(slots);
                R response = next(req);
                record_success();
                return response;
            } catch (...) {
                failure = std::current_exception();
            }
            decision d = after_failure(failure, attempt, previous, req.stream);
            if (d.answer) return R{std::move(*d.answer), {}};
            shared_->clock->sleep(*d.wait);
        }
    }

    // The coroutine loop's form: the request and `next` are copied into the frame.
    template <class R, class Request, class Next>
    R call_async(Request req, Next next) {
        using response_t = detail::awaited_t<R>;
        if (!admit()) co_return response_t{circuit_open_message(), {}};
        req.client_max_retries = 0; // the retries are ours (see the docs page)
        detail::call_slots* slots = shared_->slots.get();
        std::chrono::milliseconds previous{-1};
        for (int attempt = 1;; ++attempt) {
            std::exception_ptr failure;
            try {
                if (slots) co_await slots->async_acquire(boost::asio::use_awaitable);
                detail::call_slot_guard slot(slots);
                response_t response = co_await next(req);
                record_success();
                co_return response;
            } catch (...) {
                failure = std::current_exception();
            }
            decision d = after_failure(failure, attempt, previous, req.stream);
            if (d.answer) co_return response_t{std::move(*d.answer), {}};
            if (shared_->clock->sleeps()) {
                boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, *d.wait);
                co_await timer.async_wait(boost::asio::use_awaitable);
            } else {
                shared_->clock->sleep(*d.wait);
            }
        }
    }

    llm_error_handling_options options_;
    std::shared_ptr<shared_state> shared_; // shared with copies: an agent's copies are one breaker
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                       const llm_error_handling_options& o) {
    jv = boost::json::object{
        {"max_concurrent_calls", o.max_concurrent_calls},
        {"retry_max_attempts", o.retry_max_attempts},
        {"retry_base_delay_ms", o.retry_base_delay.count()},
        {"retry_cap_delay_ms", o.retry_cap_delay.count()},
        {"burst_retry_base_delay_ms", o.burst_retry_base_delay.count()},
        {"circuit_breaker", boost::json::object{{"failure_threshold", o.failure_threshold},
                                                {"recovery_timeout_sec", o.recovery_timeout.count()}}}};
}

/// Reads DeerFlow's `llm_call:` keys, and `circuit_breaker: {failure_threshold,
/// recovery_timeout_sec}` nested in it (the preset folds DeerFlow's top-level
/// `circuit_breaker:` section in there).
inline llm_error_handling_options tag_invoke(boost::json::value_to_tag<llm_error_handling_options>,
                                             const boost::json::value& jv) {
    json_reader r(jv, std::string(llm_error_handling_options::config_section));
    llm_error_handling_options o;
    auto millis = [&](std::string_view key, std::chrono::milliseconds& out) {
        if (auto v = r.optional<std::int64_t>(key)) out = std::chrono::milliseconds(*v);
    };
    r.read("max_concurrent_calls", o.max_concurrent_calls).read("retry_max_attempts", o.retry_max_attempts);
    millis("retry_base_delay_ms", o.retry_base_delay);
    millis("retry_cap_delay_ms", o.retry_cap_delay);
    millis("burst_retry_base_delay_ms", o.burst_retry_base_delay);
    if (const auto* cb = r.find(llm_error_handling_options::circuit_breaker_section); cb && !cb->is_null()) {
        json_reader c(*cb, r.path_of(llm_error_handling_options::circuit_breaker_section));
        c.read("failure_threshold", o.failure_threshold);
        if (auto v = c.optional<std::int64_t>("recovery_timeout_sec"))
            o.recovery_timeout = std::chrono::seconds(*v);
        c.reject_unknown_keys();
    }
    r.reject_unknown_keys();
    r.validate(o);
    return o;
}

} // namespace agentware

#endif
