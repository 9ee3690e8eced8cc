// model_fallback: the fallbacks tried in order, every model failing, both loops,
// inside model_retry, the models named in JSON and given later.
#include <agentware/middleware/model_fallback.hpp>

#include "../agent/run_async.hpp"
#include "model_retry_support.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <stdexcept>
#include <string>
#include <vector>

using namespace agentware;
using namespace model_retry_test;

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
TEST_CASE("model_fallback options: names from JSON", "[middleware][model_fallback][options]") {
    auto o = boost::json::value_to<model_fallback_options>(boost::json::parse(R"({"models": ["a", "b"]})"));
    CHECK(o.models == std::vector<std::string>{"a", "b"});
    CHECK(boost::json::value_to<model_fallback_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(boost::json::value_to<model_fallback_options>(boost::json::parse(R"({"models": []})")),
                      Catch::Contains("model_fallback.models"));
    CHECK_THROWS_WITH(boost::json::value_to<model_fallback_options>(boost::json::parse(R"({})")),
                      Catch::Contains("model_fallback.models: missing"));
}

TEST_CASE("model_fallback built from names: the models are given later, until then a failure says so",
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
