// model_retry and model_fallback: retries with the clients' backoff on a fake
// clock, the typed errors deciding by default, a throwing predicate, every
// fallback failing, both loops.
#include "../agent/run_async.hpp"
#include "../agent/support.hpp"

#include <agentware/middleware/model_fallback.hpp>
#include <agentware/middleware/model_retry.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>

using namespace agentware;
using std::chrono::milliseconds;

namespace {

// Fails with the scripted errors first, then answers.
struct flaky_model {
    struct shared {
        std::mutex m;
        std::deque<std::exception_ptr> failures;
        std::string answer = "fine";
        int calls = 0;
    };
    std::shared_ptr<shared> s = std::make_shared<shared>();

    flaky_model& fail(std::exception_ptr e) {
        s->failures.push_back(e);
        return *this;
    }
    flaky_model& fail_with(model_error_kind k, std::string what = "down") {
        return fail(std::make_exception_ptr(model_error(k, std::move(what))));
    }
    model_response invoke(const chat_request&) {
        std::lock_guard lock(s->m);
        ++s->calls;
        if (!s->failures.empty()) {
            auto e = s->failures.front();
            s->failures.pop_front();
            std::rethrow_exception(e);
        }
        return model_response{ai_message(s->answer), {}};
    }
};

struct fake_clock {
    std::shared_ptr<std::vector<milliseconds>> waits = std::make_shared<std::vector<milliseconds>>();
    std::function<void(milliseconds)> sleeper() {
        return [w = waits](milliseconds d) { w->push_back(d); };
    }
};

model_retry_options quick(fake_clock& clock) {
    model_retry_options o;
    o.sleep = clock.sleeper();
    return o;
}

} // namespace

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

TEST_CASE("model_retry: a non-retryable model error is not retried; error rethrows",
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

TEST_CASE("model_retry: a predicate decides, one that throws means no retry; custom failure text",
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

TEST_CASE("model_fallback tries the fallbacks in order", "[middleware][model_fallback]") {
    flaky_model primary, second, third;
    primary.fail_with(model_error_kind::server, "primary down");
    second.fail_with(model_error_kind::rate_limited, "second busy");
    third.s->answer = "third answers";
    auto a = make_agent(primary, tool_set{}, model_fallback({any_chat_model(second), any_chat_model(third)}));
    CHECK(a.invoke("go").answer() == "third answers");
    CHECK(primary.s->calls == 1);
    CHECK(second.s->calls == 1);
    CHECK(third.s->calls == 1);
    // the primary answers: no fallback is asked
    CHECK(a.invoke("again").answer() == "fine");
    CHECK(third.s->calls == 1);
}

TEST_CASE("model_fallback: every model failing rethrows the last error", "[middleware][model_fallback]") {
    flaky_model primary, second;
    primary.fail_with(model_error_kind::server, "primary down");
    second.fail_with(model_error_kind::authentication, "second refuses");
    auto a = make_agent(primary, tool_set{}, model_fallback({any_chat_model(second)}));
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::error);
    CHECK(r.error.find("second refuses") != std::string::npos);
    CHECK(r.state.messages.size() == 1);
    CHECK_THROWS_AS(model_fallback(std::vector<any_chat_model>{}), std::invalid_argument);
    CHECK_THROWS_AS(model_fallback({any_chat_model{}}), std::invalid_argument);
}

TEST_CASE("model_fallback in the coroutine loop, and inside model_retry",
          "[middleware][model_fallback][async]") {
    flaky_model primary, second;
    primary.fail_with(model_error_kind::server).fail_with(model_error_kind::server);
    second.fail_with(model_error_kind::server);
    second.s->answer = "second";
    fake_clock clock;
    // retry outermost: the first attempt fails on both models, the second
    // reaches the fallback again, which answers
    auto a =
        make_agent(primary, tool_set{}, model_retry(quick(clock)), model_fallback({any_chat_model(second)}));
    auto r = test::run_async(a, "go");
    CHECK(r.answer() == "second");
    CHECK(primary.s->calls == 2);
    CHECK(clock.waits->size() == 1);
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

TEST_CASE("model_fallback options: names from JSON", "[middleware][model_fallback][options]") {
    auto o = boost::json::value_to<model_fallback_options>(boost::json::parse(R"({"models": ["a", "b"]})"));
    CHECK(o.models == std::vector<std::string>{"a", "b"});
    CHECK(boost::json::value_to<model_fallback_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(boost::json::value_to<model_fallback_options>(boost::json::parse(R"({"models": []})")),
                      Catch::Contains("model_fallback.models"));
    CHECK_THROWS_WITH(boost::json::value_to<model_fallback_options>(boost::json::parse(R"({})")),
                      Catch::Contains("model_fallback.models: missing"));
}

TEST_CASE("model_fallback built from names: the models are given later; until then a failure says so",
          "[middleware][model_fallback]") {
    flaky_model primary, backup;
    primary.fail_with(model_error_kind::server, "primary down").fail_with(model_error_kind::server, "again");
    backup.s->answer = "backup answers";
    model_fallback_options o{{"backup-a"}};
    model_fallback unresolved(o);
    CHECK(unresolved.options() == o);
    CHECK(unresolved.models().empty());
    auto a = make_agent(primary, tool_set{}, std::move(unresolved));
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::error);
    CHECK(r.error.find("model_fallback: the model call failed (primary down)") != std::string::npos);
    CHECK(r.error.find("(backup-a) were never given (set_models)") != std::string::npos);

    model_fallback resolved(o);
    resolved.set_models({any_chat_model(backup)});
    auto b = make_agent(primary, tool_set{}, std::move(resolved));
    CHECK(b.invoke("go").answer() == "backup answers");
    CHECK(backup.s->calls == 1);
    CHECK_THROWS_AS(model_fallback(model_fallback_options{}), std::invalid_argument);
    model_fallback empty_models(o);
    CHECK_THROWS_AS(empty_models.set_models({}), std::invalid_argument);
}
