// tool_retry: retries a throwing tool on a fake clock, for all tools or a
// subset, continue and error, both loops.
#include "../agent/run_async.hpp"
#include "../agent/support.hpp"

#include <agentware/middleware/tool_retry.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>

using namespace agentware;
using std::chrono::milliseconds;

namespace {

// Throws `failures` times, then answers "ok".
auto flaky_tool(std::string name, std::shared_ptr<std::atomic<int>> calls, int failures) {
    return make_tool(std::move(name), "Fails at first.", R"({"type":"object"})",
                     [calls, failures](const boost::json::object&) {
                         if (++*calls <= failures) throw std::out_of_range("not yet");
                         return std::string("ok");
                     });
}

tool_retry_options quick(std::shared_ptr<std::vector<milliseconds>> waits) {
    tool_retry_options o;
    o.sleep = [waits](milliseconds d) { waits->push_back(d); };
    return o;
}

} // namespace

TEST_CASE("tool_retry runs a throwing tool again until it answers", "[middleware][tool_retry]") {
    auto calls = std::make_shared<std::atomic<int>>(0);
    auto waits = std::make_shared<std::vector<milliseconds>>();
    scripted_model model({test::calls({test::call("c1", "flaky")}), ai_message("done")});
    auto a = make_agent(model, tool_set(flaky_tool("flaky", calls, 2)), tool_retry(quick(waits)));
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::finished);
    CHECK(r.state.messages.at(2).text() == "ok");
    CHECK(*calls == 3);
    CHECK(waits->size() == 2);
}

TEST_CASE("tool_retry: exhausted retries answer with LangChain's text, without the message",
          "[middleware][tool_retry]") {
    auto calls = std::make_shared<std::atomic<int>>(0);
    auto waits = std::make_shared<std::vector<milliseconds>>();
    scripted_model model({test::calls({test::call("c1", "flaky")}), ai_message("done")});
    auto a = make_agent(model, tool_set(flaky_tool("flaky", calls, 10)), tool_retry(quick(waits)));
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::finished);
    const message& m = r.state.messages.at(2);
    CHECK(m.is_error());
    CHECK(m.tool_call_id() == "c1");
    CHECK(m.name == "flaky");
    CHECK(m.text() == "Tool 'flaky' failed after 3 attempts with out_of_range");
}

TEST_CASE("tool_retry: unlisted tools pass through, error rethrows", "[middleware][tool_retry]") {
    auto calls = std::make_shared<std::atomic<int>>(0);
    auto waits = std::make_shared<std::vector<milliseconds>>();
    auto o = quick(waits);
    o.tools = std::vector<std::string>{"other"};
    scripted_model model({test::calls({test::call("c1", "flaky")}), ai_message("done")});
    auto a = make_agent(model, tool_set(flaky_tool("flaky", calls, 1)), tool_retry(o));
    auto r = a.invoke("go");
    CHECK(r.reason == stop_reason::error); // not retried, not answered: the run fails as without it
    CHECK(*calls == 1);

    auto calls2 = std::make_shared<std::atomic<int>>(0);
    auto o2 = quick(waits);
    o2.on_failure = exit_behavior::error;
    o2.max_retries = 1;
    scripted_model model2({test::calls({test::call("c1", "flaky")}), ai_message("done")});
    auto b = make_agent(model2, tool_set(flaky_tool("flaky", calls2, 5)), tool_retry(o2));
    auto r2 = b.invoke("go");
    REQUIRE(r2.reason == stop_reason::error);
    CHECK_THROWS_AS(std::rethrow_exception(r2.exception), std::out_of_range);
    CHECK(*calls2 == 2);
}

TEST_CASE("tool_retry: a non-retryable model error from a tool is not retried, a throwing predicate neither",
          "[middleware][tool_retry]") {
    auto waits = std::make_shared<std::vector<milliseconds>>();
    auto calls = std::make_shared<std::atomic<int>>(0);
    auto refused =
        make_tool("ask", "Asks a model.", R"({"type":"object"})", [calls](const boost::json::object&) {
            ++*calls;
            throw model_error(model_error_kind::authentication, "no key");
            return std::string();
        });
    scripted_model model({test::calls({test::call("c1", "ask")}), ai_message("done")});
    auto a = make_agent(model, tool_set(refused), tool_retry(quick(waits)));
    auto r = a.invoke("go");
    CHECK(r.state.messages.at(2).text() == "Tool 'ask' failed after 1 attempt with model_error");
    CHECK(*calls == 1);

    auto calls2 = std::make_shared<std::atomic<int>>(0);
    auto o = quick(waits);
    o.retry_on = [](const std::exception&) -> bool { throw std::runtime_error("bad predicate"); };
    scripted_model model2({test::calls({test::call("c1", "flaky")}), ai_message("done")});
    auto b = make_agent(model2, tool_set(flaky_tool("flaky", calls2, 5)), tool_retry(o));
    CHECK(b.invoke("go").state.messages.at(2).text() ==
          "Tool 'flaky' failed after 1 attempt with out_of_range");
}

TEST_CASE("tool_retry in the coroutine loop", "[middleware][tool_retry][async]") {
    auto calls = std::make_shared<std::atomic<int>>(0);
    auto waits = std::make_shared<std::vector<milliseconds>>();
    scripted_model model({test::calls({test::call("c1", "flaky")}), ai_message("done")});
    auto a = make_agent(model, tool_set(flaky_tool("flaky", calls, 1)), tool_retry(quick(waits)));
    auto r = test::run_async(a, "go");
    CHECK(r.state.messages.at(2).text() == "ok");
    CHECK(waits->size() == 1);
}

TEST_CASE("tool_retry options: JSON round trip and bad input", "[middleware][tool_retry][options]") {
    auto o = boost::json::value_to<tool_retry_options>(
        boost::json::parse(R"({"max_retries": 1, "tools": ["search"], "on_failure": "continue"})"));
    CHECK(o.tools == std::vector<std::string>{"search"});
    CHECK(boost::json::value_to<tool_retry_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(boost::json::value_to<tool_retry_options>(boost::json::parse(R"({"tools": "search"})")),
                      Catch::Contains("tool_retry.tools"));
    CHECK_THROWS_WITH(
        boost::json::value_to<tool_retry_options>(boost::json::parse(R"({"initial_delay": -1})")),
        Catch::Contains("initial_delay must be >= 0"));
}
