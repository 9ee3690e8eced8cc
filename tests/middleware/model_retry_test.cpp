// model_retry: retries with the clients' backoff on a fake clock, the typed
// errors deciding by default, a throwing predicate, both loops.
#include <agentware/middleware/model_retry.hpp>

#include "../agent/run_async.hpp"
#include "model_retry_support.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>

using namespace agentware;
using std::chrono::milliseconds;

using namespace model_retry_test;

TEST_CASE("model_retry retries retryable model errors with backoff and answers",
          "[middleware][model_retry]") {
    flaky_model model;
    model.fail_with(model_error_kind::rate_limited).fail_with(model_error_kind::server);
    fake_clock clock;
    auto o = quick(clock);
    o.jitter = false;
    auto a = make_agent(model, tool_set{}, model_retry(o));
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::finished);
    CHECK(r.answer() == "fine");
    CHECK(model.s->calls == 3);
    CHECK(*clock.waits == std::vector<milliseconds>{milliseconds(1000), milliseconds(2000)});
}

TEST_CASE("model_retry: exhausted retries answer with LangChain's text (continue)",
          "[middleware][model_retry]") {
    flaky_model model;
    for (int i = 0; i < 3; ++i)
        model.fail_with(model_error_kind::timeout, "took too long");
    fake_clock clock;
    auto a = make_agent(model, tool_set{}, model_retry(quick(clock)));
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::finished);
    CHECK(r.answer() == "Model call failed after 3 attempts with model_error: took too long");
    CHECK(r.state.messages.back().metadata.at("model_retry").at("attempts") == 3);
    REQUIRE(clock.waits->size() == 2);
    // jitter ±25 % around 1 s and 2 s
    CHECK((*clock.waits)[0] >= milliseconds(750));
    CHECK((*clock.waits)[0] <= milliseconds(1250));
    CHECK((*clock.waits)[1] >= milliseconds(1500));
    CHECK((*clock.waits)[1] <= milliseconds(2500));
}

TEST_CASE("model_retry: a non-retryable model error is not retried, error rethrows",
          "[middleware][model_retry]") {
    flaky_model model;
    model.fail_with(model_error_kind::authentication, "bad key");
    fake_clock clock;
    auto o = quick(clock);
    o.on_failure = exit_behavior::error;
    auto a = make_agent(model, tool_set{}, model_retry(o));
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::error);
    CHECK_THROWS_AS(std::rethrow_exception(r.exception), model_error);
    CHECK(model.s->calls == 1);
    CHECK(clock.waits->empty());
    // continue: one attempt, said so in the singular
    model.fail_with(model_error_kind::bad_request, "no such model");
    auto b = make_agent(model, tool_set{}, model_retry(quick(clock)));
    CHECK(b.invoke("go").answer() == "Model call failed after 1 attempt with model_error: no such model");
}

TEST_CASE("model_retry: a predicate decides, one that throws means no retry, custom failure text",
          "[middleware][model_retry]") {
    fake_clock clock;
    {
        flaky_model model;
        model.fail(std::make_exception_ptr(std::runtime_error("odd")))
            .fail_with(model_error_kind::authentication);
        auto o = quick(clock);
        o.retry_on = [](const std::exception&) { return true; }; // even authentication
        auto a = make_agent(model, tool_set{}, model_retry(o));
        CHECK(a.invoke("go").answer() == "fine");
        CHECK(model.s->calls == 3);
    }
    {
        flaky_model model;
        model.fail(std::make_exception_ptr(std::runtime_error("odd")));
        auto o = quick(clock);
        o.retry_on = [](const std::exception&) -> bool { throw std::logic_error("predicate broke"); };
        o.failure_text = [](const std::exception& e) { return std::string("sorry: ") + e.what(); };
        auto a = make_agent(model, tool_set{}, model_retry(o));
        CHECK(a.invoke("go").answer() == "sorry: odd");
        CHECK(model.s->calls == 1);
    }
    {
        flaky_model model;
        model.fail_with(model_error_kind::server);
        auto o = quick(clock);
        o.max_retries = 0;
        auto a = make_agent(model, tool_set{}, model_retry(o));
        CHECK(a.invoke("go").answer() == "Model call failed after 1 attempt with model_error: down");
    }
}

TEST_CASE("model_retry backoff: factor 0 is constant, the cap applies before jitter",
          "[middleware][model_retry]") {
    retry_options o;
    o.jitter = false;
    o.backoff_factor = 0;
    std::mt19937 rng(1);
    CHECK(o.delay(0, rng) == milliseconds(1000));
    CHECK(o.delay(5, rng) == milliseconds(1000));
    o.backoff_factor = 10;
    o.max_delay = 5;
    CHECK(o.delay(3, rng) == milliseconds(5000));
    o.jitter = true;
    for (int i = 0; i < 100; ++i) {
        auto d = o.delay(3, rng);
        CHECK(d >= milliseconds(3750));
        CHECK(d <= milliseconds(6250));
    }
}

TEST_CASE("model_retry in the coroutine loop", "[middleware][model_retry][async]") {
    flaky_model model;
    model.fail_with(model_error_kind::connection).fail_with(model_error_kind::connection);
    fake_clock clock;
    auto a = make_agent(model, tool_set{}, model_retry(quick(clock)));
    auto r = test::run_async(a, "go");
    CHECK(r.answer() == "fine");
    CHECK(clock.waits->size() == 2);
    // a real (short) timer when no clock is given
    flaky_model slow;
    slow.fail_with(model_error_kind::connection);
    model_retry_options o;
    o.initial_delay = 0.001;
    auto b = make_agent(slow, tool_set{}, model_retry(o));
    CHECK(test::run_async(b, "go").answer() == "fine");
}

TEST_CASE("model_retry options: JSON round trip and bad input", "[middleware][model_retry][options]") {
    auto o = boost::json::value_to<model_retry_options>(boost::json::parse(
        R"({"max_retries": 4, "backoff_factor": 1.5, "initial_delay": 0.5, "max_delay": 10, "jitter": false,
            "on_failure": "error"})"));
    CHECK(o.max_retries == 4);
    CHECK(o.on_failure == exit_behavior::error);
    CHECK(boost::json::value_to<model_retry_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(
        boost::json::value_to<model_retry_options>(boost::json::parse(R"({"max_retries": -1})")),
        Catch::Contains("model_retry") && Catch::Contains("max_retries must be >= 0"));
    CHECK_THROWS_WITH(
        boost::json::value_to<model_retry_options>(boost::json::parse(R"({"on_failure": "end"})")),
        Catch::Contains("model_retry.on_failure"));
    CHECK_THROWS_WITH(boost::json::value_to<model_retry_options>(boost::json::parse(R"({"jitter": "yes"})")),
                      Catch::Contains("model_retry.jitter"));
    CHECK_THROWS_WITH(boost::json::value_to<model_retry_options>(boost::json::parse(R"({"retry_on": 1})")),
                      Catch::Contains("retry_on"));
}

TEST_CASE("model_retry turns the client's own retries off: N attempts are N provider calls",
          "[middleware][model_retry]") {
    struct recording {
        flaky_model inner;
        std::optional<int>* seen;
        model_response invoke(const chat_request& r) {
            *seen = r.client_max_retries;
            return inner.invoke(r);
        }
    };
    flaky_model model;
    std::optional<int> seen;
    auto a = make_agent(recording{model, &seen}, tool_set{}, model_retry{});
    CHECK(a.invoke("go").answer() == "fine");
    CHECK(seen == 0);
    // Against a failing provider: tests/model/openai_chat_model_test.cpp ("model_retry
    // under ...") counts the requests a local server receives.
}
