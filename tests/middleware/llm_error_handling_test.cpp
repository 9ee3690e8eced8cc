// llm_error_handling: classification, decorrelated jitter, Retry-After, retry
// events, the fallback answers, and the circuit breaker (alone, in an agent,
// in the coroutine loop, and shared by concurrent callers).
#include "../agent/run_async.hpp"
#include "../agent/support.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/middleware/llm_error_handling.hpp>
#include <agentware/model/scripted_model.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace agentware;
using namespace std::chrono_literals;

namespace {

model_error http(int status, std::string text = "provider said no",
                 std::optional<std::chrono::milliseconds> retry_after = std::nullopt) {
    model_error e(detail::kind_of_status(status), "openai: HTTP " + std::to_string(status) + ": " + text,
                  status, text);
    e.set_retry_after(retry_after);
    return e;
}

template <class E>
llm_failure classify_as(E e) {
    return llm_error_handling::classify(std::make_exception_ptr(std::move(e)));
}

// A model call that fails `failures` times with `error`, then answers.
struct flaky {
    std::vector<model_error> errors;
    std::size_t calls = 0;
    model_response operator()(chat_request&) {
        if (calls < errors.size()) throw errors[calls++];
        ++calls;
        return model_response{ai_message("fine"), {}};
    }
};

struct harness {
    std::shared_ptr<manual_retry_clock> clock = std::make_shared<manual_retry_clock>();
    llm_error_handling mw;
    std::vector<boost::json::object> events;
    chat_request req;

    explicit harness(llm_error_handling_options o = {}) : mw(o, clock, 42) {
        req.stream.on_event = [this](const boost::json::object& e) { events.push_back(e); };
    }
    model_response call(auto&& next) { return mw.wrap_model_call(req, next); }
};

run_config on_thread(std::string thread) {
    run_config c;
    c.thread_id = std::move(thread);
    return c;
}

bool is_fallback(const message& m) {
    const auto* f = m.metadata.if_contains("deerflow_error_fallback");
    return f && f->is_bool() && f->get_bool() && m.tool_calls.empty();
}

} // namespace

// ---------------------------------------------------------------- classification

TEST_CASE("failures are classified from the typed error, then the provider's words",
          "[middleware][llm_error_handling]") {
    CHECK(classify_as(http(429)).reason == "transient");
    CHECK(classify_as(http(429)).retriable);
    for (int status : {408, 409, 425, 500, 502, 503, 504})
        CHECK(classify_as(http(status)).reason == "transient");
    CHECK(classify_as(model_error(model_error_kind::connection, "connection reset")).reason == "transient");
    CHECK(classify_as(model_error(model_error_kind::timeout, "read timed out")).timeout);
    CHECK(classify_as(model_error(model_error_kind::invalid_response, "truncated stream")).retriable);
    // quota beats the 429 it came with; auth is typed or worded
    auto quota = classify_as(http(429, "You exceeded your current quota (insufficient_quota)"));
    CHECK((quota.reason == "quota" && !quota.retriable));
    CHECK(classify_as(http(401, "Incorrect key")).reason == "auth");
    CHECK(classify_as(http(400, "Permission denied for model")).reason == "auth");
    CHECK(classify_as(std::runtime_error("账户余额不足")).reason == "quota");
    // burst-rate 429s are their own reason
    auto burst = classify_as(http(429, "limit_burst_rate exceeded"));
    CHECK((burst.reason == "burst_rate" && burst.retriable));
    // busy words on a status that is not retriable by itself
    CHECK(classify_as(http(400, "The server is overloaded, please try again")).reason == "busy");
    CHECK(classify_as(std::runtime_error("服务繁忙，请稍后重试")).reason == "busy");
    // the rest is not retried
    auto bad = classify_as(http(400, "messages: at least one message is required"));
    CHECK((bad.reason == "generic" && !bad.retriable));
    CHECK(classify_as(std::runtime_error("")).detail == "exception");
    CHECK(classify_as(42).type == "exception");
}

TEST_CASE("decorrelated jitter draws from [base, min(cap, 3 * previous)]",
          "[middleware][llm_error_handling]") {
    std::minstd_rand rng(7);
    for (int i = 0; i < 500; ++i) {
        auto first = decorrelated_jitter(1000ms, 8000ms, 1000ms, rng);
        CHECK((first >= 1000ms && first <= 3000ms));
        auto later = decorrelated_jitter(1000ms, 8000ms, 5000ms, rng);
        CHECK((later >= 1000ms && later <= 8000ms));
        auto burst = decorrelated_jitter(5000ms, 8000ms, 5000ms, rng);
        CHECK((burst >= 5000ms && burst <= 8000ms));
    }
    CHECK(decorrelated_jitter(9000ms, 8000ms, 9000ms, rng) == 9000ms); // a base above the cap is kept
    CHECK(decorrelated_jitter(0ms, 0ms, 0ms, rng) == 0ms);
}

// ---------------------------------------------------------------- retries

TEST_CASE("a retriable failure is retried after Retry-After, with an event per retry",
          "[middleware][llm_error_handling]") {
    harness h;
    flaky model{{http(429, "slow down", 1500ms), http(503, "unavailable", 2000ms)}};
    model_response r = h.call(model);
    CHECK(r.ai.text() == "fine");
    CHECK(model.calls == 3);
    CHECK(h.clock->slept() == 3500ms); // the server's delays, no jitter
    REQUIRE(h.events.size() == 2);
    CHECK(h.events[0].at("type") == "llm_retry");
    CHECK(h.events[0].at("attempt") == 1);
    CHECK(h.events[0].at("max_attempts") == 3);
    CHECK(h.events[0].at("wait_ms") == 1500);
    CHECK(h.events[0].at("message") ==
          "LLM request retry 1/3: provider request failed temporarily. Retrying in 2s.");
    CHECK(h.events[1].at("message") ==
          "LLM request retry 2/3: provider request failed temporarily. Retrying in 2s.");
    CHECK(h.mw.state() == llm_error_handling::circuit_state::closed);
    CHECK(h.mw.consecutive_failures() == 0);
}

TEST_CASE("without Retry-After the waits follow the jitter window", "[middleware][llm_error_handling]") {
    harness h;
    flaky model{{http(500), http(500)}};
    h.call(model);
    REQUIRE(h.events.size() == 2);
    const auto first = h.events[0].at("wait_ms").as_int64();
    const auto second = h.events[1].at("wait_ms").as_int64();
    CHECK((first >= 1000 && first <= 3000));
    CHECK((second >= 1000 && second <= std::min<std::int64_t>(8000, 3 * first)));
    CHECK(h.clock->slept().count() == first + second);
}

TEST_CASE("final failures answer with the reference's texts, marked as fallbacks",
          "[middleware][llm_error_handling]") {
    SECTION("transient failures after all attempts") {
        harness h;
        flaky model{{http(503), http(503), http(503), http(503)}};
        message m = h.call(model).ai;
        CHECK(model.calls == 3);
        CHECK(m.text() == llm_error_handling::unavailable_text);
        CHECK(is_fallback(m));
        CHECK(m.metadata.at("error_reason") == "transient");
        CHECK(m.metadata.at("error_type") == "server");
        CHECK(h.events.size() == 2);
        CHECK(h.mw.consecutive_failures() == 1);
    }
    SECTION("quota: not retried, not counted by the breaker") {
        harness h;
        flaky model{{http(429, "insufficient_quota")}};
        message m = h.call(model).ai;
        CHECK(model.calls == 1);
        CHECK(m.text() ==
              "The configured LLM provider rejected the request because the account is out of quota, billing "
              "is "
              "unavailable, or usage is restricted. Please fix the provider account and try again.");
        CHECK(h.events.empty());
        CHECK(h.mw.consecutive_failures() == 0);
    }
    SECTION("auth") {
        harness h;
        flaky model{{http(401, "bad key")}};
        CHECK(h.call(model).ai.text() ==
              "The configured LLM provider rejected the request because authentication or access is invalid. "
              "Please check the provider credentials and try again.");
    }
    SECTION("other errors carry their detail") {
        harness h;
        flaky model{{http(400, "bad tool schema")}};
        message m = h.call(model).ai;
        CHECK(m.text() == "LLM request failed: openai: HTTP 400: bad tool schema");
        CHECK(m.metadata.at("error_detail") == "openai: HTTP 400: bad tool schema");
    }
    SECTION("burst-rate 429s get two attempts, the burst base, and spare the breaker") {
        llm_error_handling_options o;
        o.failure_threshold = 1; // one counted failure would open it
        harness h(o);
        flaky model{
            {http(429, "limit_burst_rate"), http(429, "limit_burst_rate"), http(429, "limit_burst_rate")}};
        message m = h.call(model).ai;
        CHECK(model.calls == 2);
        REQUIRE(h.events.size() == 1);
        CHECK(h.events[0].at("max_attempts") == 2);
        const auto wait = h.events[0].at("wait_ms").as_int64();
        CHECK((wait >= 5000 && wait <= 8000));
        CHECK(h.events[0].at("message").as_string().starts_with(
            "LLM request retry 1/2: provider is throttling request burst rate. Retrying in "));
        CHECK(m.metadata.at("error_reason") == "burst_rate");
        CHECK(h.mw.state() == llm_error_handling::circuit_state::closed);
    }
    SECTION("timeouts get two attempts") {
        harness h;
        flaky model{{model_error(model_error_kind::timeout, "t"), model_error(model_error_kind::timeout, "t"),
                     model_error(model_error_kind::timeout, "t")}};
        h.call(model);
        CHECK(model.calls == 2);
    }
    SECTION("a listener that throws does not stop the retries") {
        harness h;
        h.req.stream.on_event = [](const boost::json::object&) { throw std::runtime_error("listener"); };
        flaky model{{http(500)}};
        CHECK(h.call(model).ai.text() == "fine");
    }
}

TEST_CASE("cancellation and a model that is not set up pass through", "[middleware][llm_error_handling]") {
    harness h;
    flaky cancelled{{model_error(model_error_kind::cancelled, "stopped")}};
    CHECK_THROWS_AS(h.call(cancelled), model_error);
    flaky unset{{model_error(model_error_kind::configuration, "no API key")}};
    CHECK_THROWS_AS(h.call(unset), model_error);
    CHECK(h.mw.consecutive_failures() == 0);
}

// ---------------------------------------------------------------- the breaker

TEST_CASE("six failures in a row: the breaker opens, fails fast, then lets one probe through after 60 s",
          "[middleware][llm_error_handling]") {
    llm_error_handling_options o;
    o.retry_max_attempts = 1; // each failure is a call, so six calls are six failures
    auto clock = std::make_shared<manual_retry_clock>();
    scripted_model failing = scripted_model::with_failures({{{}, http(503)},
                                                            {{}, http(503)},
                                                            {{}, http(503)},
                                                            {{}, http(503)},
                                                            {{}, http(503)},
                                                            {{}, http(503)},
                                                            {ai_message("back again"), std::nullopt}});
    agent a(failing, tool_set{}, pipeline<llm_error_handling>{llm_error_handling(o, clock, 1)});
    for (int i = 1; i <= 5; ++i) {
        auto r = a.invoke("hello", on_thread("t" + std::to_string(i)));
        CHECK(r.answer() == llm_error_handling::unavailable_text);
        CHECK(r.reason == stop_reason::finished);
    }
    const auto& mw = *a.middleware().get<llm_error_handling>();
    CHECK(mw.state() == llm_error_handling::circuit_state::open);
    CHECK(failing.calls() == 5);

    // A later run is answered at once, without reaching the provider.
    auto fast = a.invoke("hello", on_thread("t6"));
    CHECK(fast.answer() == llm_error_handling::circuit_open_text);
    CHECK(fast.state.messages.back().metadata.at("error_reason") == "circuit_open");
    CHECK(fast.state.messages.back().metadata.at("error_type") == "CircuitBreakerOpen");
    CHECK(failing.calls() == 5);

    clock->advance(59s);
    CHECK(a.invoke("hello", on_thread("t7")).answer() == llm_error_handling::circuit_open_text);
    CHECK(failing.calls() == 5);

    // After 60 s one probe goes through; it fails (the sixth failure), and the breaker reopens.
    clock->advance(1s);
    CHECK(a.invoke("hello", on_thread("t8")).answer() == llm_error_handling::unavailable_text);
    CHECK(failing.calls() == 6);
    CHECK(mw.state() == llm_error_handling::circuit_state::open);
    CHECK(a.invoke("hello", on_thread("t9")).answer() == llm_error_handling::circuit_open_text);

    // Sixty seconds more: the next probe succeeds and closes it.
    clock->advance(60s);
    CHECK(a.invoke("hello", on_thread("t10")).answer() == "back again");
    CHECK(mw.state() == llm_error_handling::circuit_state::closed);
    CHECK(mw.consecutive_failures() == 0);
}

TEST_CASE("the half-open breaker admits exactly one probe among concurrent callers",
          "[middleware][llm_error_handling][concurrency]") {
    llm_error_handling_options o;
    o.retry_max_attempts = 1;
    o.failure_threshold = 2;
    auto clock = std::make_shared<manual_retry_clock>();
    llm_error_handling mw(o, clock, 3);
    chat_request req;
    auto fail = [](chat_request&) -> model_response { throw http(500); };
    mw.wrap_model_call(req, fail);
    mw.wrap_model_call(req, fail);
    REQUIRE(mw.state() == llm_error_handling::circuit_state::open);
    clock->advance(60s);

    std::mutex m;
    std::condition_variable cv;
    bool release = false;
    std::atomic<int> reached{0};
    auto slow_ok = [&](chat_request&) -> model_response {
        reached.fetch_add(1);
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return release; });
        return model_response{ai_message("probe ok"), {}};
    };
    constexpr int callers = 8;
    std::vector<std::string> answers(callers);
    std::vector<std::thread> threads;
    std::atomic<int> done{0};
    for (int i = 0; i < callers; ++i)
        threads.emplace_back([&, i] {
            chat_request r;
            answers[static_cast<std::size_t>(i)] = mw.wrap_model_call(r, slow_ok).ai.text();
            done.fetch_add(1);
        });
    // Everyone but the probe is turned away at once.
    while (done.load() < callers - 1)
        std::this_thread::yield();
    {
        std::lock_guard lock(m);
        release = true;
    }
    cv.notify_all();
    for (auto& t : threads)
        t.join();
    CHECK(reached.load() == 1);
    CHECK(std::count(answers.begin(), answers.end(), "probe ok") == 1);
    CHECK(std::count(answers.begin(), answers.end(), std::string(llm_error_handling::circuit_open_text)) ==
          callers - 1);
    CHECK(mw.state() == llm_error_handling::circuit_state::closed);
}

TEST_CASE("concurrent runs share one breaker", "[middleware][llm_error_handling][concurrency]") {
    llm_error_handling_options o;
    o.retry_max_attempts = 2;
    auto clock = std::make_shared<manual_retry_clock>();
    std::atomic<int> provider_calls{0};
    struct failing_model {
        std::atomic<int>* calls;
        model_response invoke(const chat_request&) {
            calls->fetch_add(1);
            throw http(502, "bad gateway", 10ms);
        }
    };
    agent a(failing_model{&provider_calls}, tool_set{},
            pipeline<llm_error_handling>{llm_error_handling(o, clock, 5)});
    constexpr int runs = 16;
    std::vector<std::thread> threads;
    std::atomic<int> fallbacks{0};
    for (int i = 0; i < runs; ++i)
        threads.emplace_back([&, i] {
            auto r = a.invoke("hi", on_thread("c" + std::to_string(i)));
            const std::string text = r.answer();
            if (text == llm_error_handling::unavailable_text || text == llm_error_handling::circuit_open_text)
                fallbacks.fetch_add(1);
        });
    for (auto& t : threads)
        t.join();
    CHECK(fallbacks.load() == runs);
    const auto& mw = *a.middleware().get<llm_error_handling>();
    CHECK(mw.state() == llm_error_handling::circuit_state::open);
    // At most two attempts per run, and only until the breaker opened.
    CHECK(provider_calls.load() <= 2 * runs);
    CHECK(provider_calls.load() >= 2 * o.failure_threshold);
}

TEST_CASE("the coroutine loop retries without holding its thread",
          "[middleware][llm_error_handling][async]") {
    auto clock = std::make_shared<manual_retry_clock>();
    scripted_model model =
        scripted_model::with_failures({{{}, http(429, "slow", 1000ms)}, {ai_message("after a retry"), {}}});
    agent a(model, tool_set{}, pipeline<llm_error_handling>{llm_error_handling({}, clock, 9)});
    std::vector<boost::json::object> events;
    run_config cfg;
    cfg.stream.on_event = [&](const boost::json::object& e) { events.push_back(e); };
    auto r = ::test::run_async(a, "hi", cfg);
    CHECK(r.answer() == "after a retry");
    CHECK(events.size() == 1);
    CHECK(clock->slept() == 1000ms);
}

// ---------------------------------------------------------------- options

TEST_CASE("llm_call options read DeerFlow's keys and refuse bad ones", "[middleware][llm_error_handling]") {
    auto read = [](const char* text) {
        return boost::json::value_to<llm_error_handling_options>(boost::json::parse(text));
    };
    auto o = read(R"({"retry_max_attempts": 5, "retry_base_delay_ms": 200, "retry_cap_delay_ms": 900,
                      "burst_retry_base_delay_ms": 400, "max_concurrent_calls": 0,
                      "circuit_breaker": {"failure_threshold": 2, "recovery_timeout_sec": 30}})");
    CHECK(o.retry_max_attempts == 5);
    CHECK(o.retry_base_delay == 200ms);
    CHECK(o.retry_cap_delay == 900ms);
    CHECK(o.burst_retry_base_delay == 400ms);
    CHECK(o.failure_threshold == 2);
    CHECK(o.recovery_timeout == 30s);
    CHECK(boost::json::value_to<llm_error_handling_options>(boost::json::value_from(o)) == o);
    CHECK(read("{}") == llm_error_handling_options{});
    CHECK_THROWS_WITH(read(R"({"retry_max_attempt": 3})"),
                      Catch::Contains("llm_call") && Catch::Contains("retry_max_attempt"));
    CHECK_THROWS_WITH(read(R"({"retry_base_delay_ms": "1s"})"),
                      Catch::Contains("llm_call.retry_base_delay_ms"));
    CHECK_THROWS_WITH(read(R"({"retry_max_attempts": 0})"),
                      Catch::Contains("retry_max_attempts must be >= 1"));
    CHECK(read(R"({"max_concurrent_calls": 4})").max_concurrent_calls == 4);
    CHECK_THROWS_WITH(read(R"({"max_concurrent_calls": -1})"),
                      Catch::Contains("llm_call") && Catch::Contains("max_concurrent_calls must be >= 0"));
    CHECK_THROWS_WITH(read(R"({"circuit_breaker": {"threshold": 1}})"),
                      Catch::Contains("llm_call.circuit_breaker") && Catch::Contains("threshold"));
    CHECK_THROWS_AS(llm_error_handling(llm_error_handling_options{}, nullptr), std::invalid_argument);
}

// ---------------------------------------------------------------- max_concurrent_calls

TEST_CASE("max_concurrent_calls bounds the blocking calls in flight, the others wait their turn",
          "[middleware][llm_error_handling][concurrency]") {
    llm_error_handling_options o;
    o.max_concurrent_calls = 2;
    llm_error_handling mw(o, std::make_shared<manual_retry_clock>(), 11);
    std::mutex m;
    std::condition_variable cv;
    bool release = false;
    std::atomic<int> in_flight{0}, peak{0}, entered{0};
    auto gated = [&](chat_request&) -> model_response {
        const int now = in_flight.fetch_add(1) + 1;
        for (int p = peak.load(); now > p && !peak.compare_exchange_weak(p, now);) {
        }
        entered.fetch_add(1);
        {
            std::unique_lock lock(m);
            cv.wait(lock, [&] { return release; });
        }
        in_flight.fetch_sub(1);
        return model_response{ai_message("ok"), {}};
    };
    constexpr int callers = 6;
    std::vector<std::thread> threads;
    std::atomic<int> answered{0};
    for (int i = 0; i < callers; ++i)
        threads.emplace_back([&] {
            chat_request r;
            if (mw.wrap_model_call(r, gated).ai.text() == "ok") answered.fetch_add(1);
        });
    // Two are inside the provider, four wait for a slot.
    while (entered.load() < 2 || mw.calls_waiting() < callers - 2)
        std::this_thread::yield();
    CHECK(entered.load() == 2);
    {
        std::lock_guard lock(m);
        release = true;
    }
    cv.notify_all();
    for (auto& t : threads)
        t.join();
    CHECK(answered.load() == callers);
    CHECK(peak.load() == 2);
    CHECK(mw.calls_waiting() == 0);
}

namespace llm_eh_async {
// One call through the middleware's coroutine form; its answer goes to `out`.
template <class Next>
boost::asio::awaitable<void> call(llm_error_handling& mw, Next next, std::vector<std::string>* out) {
    chat_request r;
    model_response resp = co_await mw.wrap_model_call(r, next);
    out->push_back(resp.ai.text());
}
} // namespace llm_eh_async

TEST_CASE("max_concurrent_calls in the coroutine loop waits without holding the thread",
          "[middleware][llm_error_handling][async]") {
    llm_error_handling_options o;
    o.max_concurrent_calls = 1;
    llm_error_handling mw(o, std::make_shared<manual_retry_clock>(), 12);
    int in_flight = 0, peak = 0;
    // Each call holds its slot across a timer: on one thread, a waiter that
    // blocked the thread would never let the timer fire.
    auto slow = [&](chat_request&) -> boost::asio::awaitable<model_response> {
        peak = std::max(peak, ++in_flight);
        boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, 2ms);
        co_await t.async_wait(boost::asio::use_awaitable);
        --in_flight;
        co_return model_response{ai_message("ok"), {}};
    };
    boost::asio::io_context io;
    std::vector<std::string> answers;
    for (int i = 0; i < 3; ++i)
        boost::asio::co_spawn(io, llm_eh_async::call(mw, slow, &answers), boost::asio::detached);
    io.run(); // one thread
    CHECK(answers == std::vector<std::string>{"ok", "ok", "ok"});
    CHECK(peak == 1);
    CHECK(mw.calls_waiting() == 0);
}

// ---------------------------------------------------------------- the client's own retries

TEST_CASE("the calls llm_error_handling wraps turn the client's own retries off",
          "[middleware][llm_error_handling]") {
    SECTION("the request says so") {
        harness h;
        std::optional<int> seen;
        h.call([&](chat_request& r) {
            seen = r.client_max_retries;
            return model_response{ai_message("ok"), {}};
        });
        CHECK(seen == 0);
    }
    // The client honours the request's cap: tests/model/openai_chat_model_test.cpp
    // ("client_max_retries caps the client's own retries") counts the requests a
    // failing server receives.
}
