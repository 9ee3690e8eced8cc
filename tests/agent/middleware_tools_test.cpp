// The seventh hook: tools a middleware offers while its slot is engaged.
#include "run_async.hpp"
#include "support.hpp"

#include <agentware/agent/async_loop.hpp>

#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <stdexcept>

using namespace agentware;
using strings = std::vector<std::string>;

namespace {

// Offers `ping`, and counts how often the agent asked it for its tools.
struct pinger {
    std::shared_ptr<std::atomic<int>> built = std::make_shared<std::atomic<int>>(0);

    std::vector<std::shared_ptr<tool_interface>> tools() const {
        ++*built;
        return {share_tool(make_tool("ping", "Answers pong.", boost::json::object{},
                                     [](const boost::json::object&) { return std::string("pong"); }))};
    }
};

// A middleware may consist of its tools alone; this one offers an `echo`.
struct echo_kit {
    auto tools() { return std::vector{share_tool(test::echo_tool())}; }
};

// Offers `shout`: a middleware whose tool stays while others are disabled.
struct echo_kit_other {
    auto tools() {
        return std::vector{
            share_tool(make_tool("shout", "Shouts.", boost::json::object{},
                                 [](const boost::json::object&) { return std::string("HEY"); }))};
    }
};

strings offered(const scripted_model& model, std::size_t i) { return model.requests().at(i).tool_names; }

} // namespace

TEST_CASE("an optional slot's tools are offered while it is engaged, and gone when it is reset",
          "[agent][middleware_tools]") {
    scripted_model model({ai_message("first"), test::calls({test::call("c1", "ping")}), ai_message("second"),
                          test::calls({test::call("c2", "ping")}), ai_message("third")});
    agent a(model, tool_set(test::echo_tool()), pipeline<std::optional<pinger>>{std::nullopt});

    REQUIRE(a.invoke("one").ok());
    CHECK(offered(model, 0) == strings{"echo"});

    a.middleware().slot<pinger>().emplace();
    auto two = a.invoke("two");
    REQUIRE(two.ok());
    CHECK(offered(model, 1) == strings{"echo", "ping"});
    CHECK(two.state.messages.at(2).text() == "pong");
    CHECK(two.state.messages.at(2).status == tool_status::ok);

    a.middleware().slot<pinger>().reset();
    auto three = a.invoke("three");
    REQUIRE(three.ok());
    CHECK(offered(model, 3) == strings{"echo"});
    // A call to a tool that is no longer offered is answered as an unknown tool.
    CHECK(three.state.messages.at(2).status == tool_status::error);
    CHECK(three.state.messages.at(2).text() ==
          "Error: there is no tool named \"ping\". Available tools: echo.");
}

TEST_CASE("a middleware's tools are built once per change of the engaged slots, not every round",
          "[agent][middleware_tools]") {
    pinger p;
    auto built = p.built;
    scripted_model model({test::calls({test::call("c1", "ping")}), test::calls({test::call("c2", "ping")}),
                          ai_message("done")});
    agent a(model, tool_set{}, pipeline<echo_kit, pinger>{echo_kit{}, std::move(p)});
    const int after_construction = *built; // the construction checks the names once
    REQUIRE(a.invoke("go").ok());
    CHECK(*built == after_construction);
    CHECK(offered(model, 0) == strings{"echo", "ping"});
    CHECK(offered(model, 2) == strings{"echo", "ping"});

    // Handing out the agent's own tools may change them: the next round rebuilds.
    a.tools().add(make_tool("extra", "Nothing.", boost::json::object{},
                            [](const boost::json::object&) { return std::string(); }));
    CHECK(a.offered_tools()->names() == "extra, echo, ping");
}

TEST_CASE("two tools of one name among the agent's and a middleware's fail when the agent is built",
          "[agent][middleware_tools]") {
    scripted_model model({ai_message("never")});
    CHECK_THROWS_WITH((agent(model, tool_set(test::echo_tool()), pipeline<echo_kit>{})),
                      Catch::Contains("two tools are named \"echo\""));
}

TEST_CASE("the coroutine loop offers the tools of the slots engaged at each round",
          "[agent][middleware_tools]") {
    scripted_model model({test::calls({test::call("c1", "ping")}), ai_message("done")});
    agent a(model, tool_set{}, pipeline<std::optional<pinger>>{pinger{}});
    auto out = test::run_async(a, "go");
    REQUIRE(out.ok());
    CHECK(offered(model, 0) == strings{"ping"});
    CHECK(out.state.messages.at(2).text() == "pong");
}

TEST_CASE("disabled_tool_names keeps a tool out of the schema, whoever brings it, in both loops",
          "[agent][middleware_tools][disabled_tools]") {
    scripted_model model({test::calls({test::call("c1", "ping")}), ai_message("done"), ai_message("again"),
                          ai_message("async")});
    agent a(model, tool_set(test::echo_tool()), pipeline<pinger, echo_kit_other>{});
    a.set_disabled_tool_names({"ping", "echo"});
    auto r = a.invoke("go");
    REQUIRE(r.ok());
    CHECK(offered(model, 0) == strings{"shout"});
    CHECK(a.offered_tools()->names() == "shout");
    // A call naming a disabled tool is answered as a call of an unknown tool.
    CHECK(r.state.messages.at(2).status == tool_status::error);
    CHECK(r.state.messages.at(2).text() == "Error: there is no tool named \"ping\". Available tools: shout.");

    // Enabled again between runs: offered again.
    a.set_disabled_tool_names({"shout"});
    REQUIRE(a.invoke("more").ok());
    CHECK(offered(model, 2) == strings{"echo", "ping"});

    a.set_disabled_tool_names({"echo"});
    auto async = test::run_async(a, "async");
    REQUIRE(async.ok());
    CHECK(offered(model, 3) == strings{"ping", "shout"});
}

namespace {
struct brings_a_tool {
    void before_model(auto&) {}
    std::vector<std::shared_ptr<tool_interface>> tools() const {
        auto t =
            make_tool("from_middleware", "Offered by a middleware.", boost::json::object{},
                      [](const boost::json::object&) { return std::string("hello from the middleware"); });
        return {share_tool(std::move(t))};
    }
};
} // namespace

TEST_CASE("a middleware's tools are offered with the agent's own", "[agent][hooks][tools]") {
    scripted_model model({test::calls({test::call("c1", "from_middleware")}), ai_message("ok")});
    auto a = make_agent(model, tool_set(test::echo_tool()), brings_a_tool{});
    auto r = a.invoke("go");
    REQUIRE(r.ok());
    CHECK(model.requests().at(0).tool_names == strings{"echo", "from_middleware"});
    CHECK(r.state.messages[2].text() == "hello from the middleware");

    agent<scripted_model, pipeline<std::optional<brings_a_tool>>> off(scripted_model({ai_message("x")}));
    CHECK(off.tools().names() == "");
}
