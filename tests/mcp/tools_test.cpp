// mcp/tools.hpp: MCP servers' tools as agentware tools: the toolkit's names and collisions, an
// agent calling them (its events, its stop, an elicitation that pauses the run), the lead agent's.
#include <agentware/mcp/tools.hpp>

#include <agentware.hpp>
#include <agentware/agent/async_loop.hpp>
#include <agentware/agent/memory_checkpointer.hpp>
#include <agentware/mcp/client.hpp>
#include <agentware/presets/lead_agent.hpp>
#include <agentware/tool/make_tool.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>

#include "support.hpp"

#include <stop_token>
#include <thread>

using namespace agentware;
using namespace mcp_test;
using namespace std::chrono_literals;

TEST_CASE("tool name collisions are reported at load time", "[mcp][stdio]") {
    auto a = fake("legacy");
    auto b = fake("legacy");
    b.name = "other";
    a.tool_name_prefix = b.tool_name_prefix = false;
    CHECK_THROWS_WITH(mcp::mcp_toolkit({a, b}),
                      Catch::Contains("\"echo\" is offered by servers \"fake\" and \"other\""));
}

TEST_CASE("an agent calls MCP tools end to end", "[mcp][agent]") {
    mcp::mcp_toolkit kit({everything_stdio()});
    scripted_model model({ai_message("", {tool_call{"c1", "everything_get-sum", {{"a", 20}, {"b", 22}}},
                                          tool_call{"c2", "everything_echo", {{"message", 5}}}}),
                          ai_message("done")});
    auto agent = make_agent(model, kit.tool_set());
    auto r = agent.invoke("add");
    REQUIRE(r.ok());
    const auto& ms = r.state.messages;
    REQUIRE(ms.size() == 5);
    CHECK_THAT(ms[2].text(), Catch::Contains("42"));
    CHECK(ms[3].is_error()); // the schema check refused a number for a string, before the call
    CHECK_THAT(ms[3].text(), Catch::Contains("invalid arguments for tool \"everything_echo\""));
    kit.close();
}

TEST_CASE("list_changed refreshes the agent's tools before the next model call", "[mcp][agent]") {
    mcp::mcp_toolkit kit({fake("legacy")});
    CHECK(kit.tools().size() == 8);
    scripted_model model({ai_message("", {tool_call{"c1", "fake_echo", {{"message", "x"}}}}),
                          ai_message("", {tool_call{"c2", "fake_added", {}}}), ai_message("done")});
    auto agent = make_agent(model, tool_set{}, kit); // the toolkit as a middleware (its tools() hook)
    auto r = agent.invoke("go");
    REQUIRE(r.ok());
    const auto& ms = r.state.messages;
    REQUIRE(ms.size() == 6);
    CHECK(ms[2].text() == "echo: x");
    CHECK(ms[4].text() == "added works"); // offered and callable after the server's list_changed
    CHECK(kit.tools().size() == 9);
    kit.close();
}

TEST_CASE("an agent's MCP calls report to the run's events and stop with the run", "[mcp][agent]") {
    mcp::mcp_toolkit kit({fake("legacy")});
    SECTION("progress and log lines become mcp_progress and mcp_log events") {
        scripted_model model(
            {ai_message("", {tool_call{"c1", "fake_echo", {{"message", "log"}}}}), ai_message("done")});
        auto agent = make_agent(model, kit.tool_set());
        std::vector<boost::json::object> events;
        run_config config;
        config.stream.on_event = [&](const boost::json::object& e) { events.push_back(e); };
        REQUIRE(agent.invoke("go", config).ok());
        REQUIRE(events.size() == 2);
        CHECK(events[0].at("type") == "mcp_progress");
        CHECK(events[0].at("tool") == "fake_echo");
        CHECK(events[0].at("tool_call_id") == "c1");
        CHECK(events[0].at("server") == "fake");
        CHECK(events[1].at("type") == "mcp_log");
        CHECK(events[1].at("params").at("level") == "info");
    }
    SECTION("stopping the run cancels the call and keeps its answer in the history") {
        scripted_model model({ai_message("", {tool_call{"c1", "fake_hang", {}}}), ai_message("never")});
        auto agent = make_agent(model, kit.tool_set());
        std::stop_source stop;
        run_config config;
        config.stop = stop.get_token();
        std::jthread stopper([&] {
            std::this_thread::sleep_for(200ms);
            stop.request_stop();
        });
        const auto r = agent.invoke("go", config);
        CHECK(r.reason == stop_reason::error);
        const auto& ms = r.state.messages;
        REQUIRE(ms.size() == 3);
        CHECK(ms[2].is_error());
        CHECK(ms[2].text() ==
              "Error: the MCP tool \"hang\" of server \"fake\" was cancelled: the run was asked to stop");
    }
    kit.close();
}

TEST_CASE("make_lead_agent offers the enabled servers' MCP tools after the built-ins",
          "[mcp][agent][lead_agent]") {
    auto disabled = fake("legacy");
    disabled.name = "off";
    disabled.enabled = false;
    mcp::mcp_toolkit kit({fake("legacy"), disabled});
    const auto config = boost::json::parse(R"({
        "models": [{"name": "m", "provider": "openai", "model": "x"}],
        "tools": [{"name": "fake_hang", "group": "web"}],
        "clarification": true
    })");
    scripted_model model(
        {ai_message("", {tool_call{"c1", "fake_echo", {{"message", "hi"}}}}), ai_message("done")});
    lead_agent_setup setup;
    setup.model_factory = [model](std::string_view, bool) { return any_chat_model(model); };
    // A configured tool of an MCP tool's name is kept; the MCP one is dropped with a warning.
    setup.tool_registry["fake_hang"] =
        share_tool(make_tool("fake_hang", "Configured, answers at once.", R"({"type":"object"})",
                             [](const boost::json::object&) { return std::string("configured"); }));
    setup.mcp_tools = [kit] { return kit.tools(); };
    lead_agent_request request;
    auto lead = make_lead_agent(config, request, setup);
    const auto& names = lead.tool_names;
    REQUIRE(names.size() == kit.tools().size() + 1);
    CHECK(names.front() == "fake_hang");
    CHECK(std::find(names.begin(), names.end(), "fake_echo") != names.end());
    CHECK(names.back() == "ask_clarification");
    CHECK(std::find(lead.warnings.begin(), lead.warnings.end(),
                    "tool \"fake_hang\" (MCP) is already offered; the first is kept") != lead.warnings.end());
    lead_agent::state_type state;
    auto r = lead.run(state, agent_input(human_message("add")));
    REQUIRE(r.reason == stop_reason::finished);
    REQUIRE(state.messages.size() == 4);
    CHECK(state.messages[2].name == "fake_echo");
    CHECK_FALSE(state.messages[2].is_error());
    CHECK(state.messages[2].text() == "echo: hi");
    kit.close();
}

TEST_CASE("an MCP elicitation pauses the run, the answer reaches the server on resume",
          "[mcp][agent][interrupt]") {
    for (const std::string mode : {"legacy", "modern"}) {
        INFO(mode);
        mcp::mcp_toolkit kit({fake(mode)});
        scripted_model model({ai_message("", {tool_call{"c1", "fake_ask", {}}}), ai_message("done")});
        auto agent = make_agent(model, kit.tool_set());
        agent.use_checkpointer(memory_checkpointer{});
        run_config cfg;
        cfg.thread_id = "elicit-" + mode;
        const auto paused = agent.invoke("ask me", cfg);
        REQUIRE(paused.reason == stop_reason::interrupted);
        REQUIRE(paused.interrupts.size() == 1);
        CHECK(paused.interrupts[0].id == "c1");
        const auto& asked = paused.interrupts[0].value.as_object();
        CHECK(asked.at("type") == "mcp_elicitation");
        CHECK(asked.at("server") == "fake");
        CHECK(asked.at("tool") == "fake_ask");
        CHECK(asked.at("message") == "Name?");
        CHECK(asked.at("params").at("message") == "Name?");

        const auto done = agent.invoke(resume{boost::json::object{{"name", "Ada"}}}, cfg);
        REQUIRE(done.ok());
        const auto& ms = done.state.messages;
        REQUIRE(ms.size() == 4);
        CHECK_FALSE(ms[2].is_error());
        CHECK_THAT(ms[2].text(), Catch::Contains(R"("action":"accept")"));
        CHECK_THAT(ms[2].text(), Catch::Contains(R"("content":{"name":"Ada"})"));
        if (mode == "modern") CHECK_THAT(ms[2].text(), Catch::StartsWith(R"({"q":)")); // keyed as asked
        kit.close();
    }
    SECTION("in the asynchronous loop, and a bad answer is an error the model reads") {
        mcp::mcp_toolkit kit({fake("legacy")});
        scripted_model model({ai_message("", {tool_call{"c1", "fake_ask", {}}}), ai_message("done"),
                              ai_message("", {tool_call{"c2", "fake_ask", {}}}), ai_message("done again")});
        auto agent = make_agent(model, kit.tool_set());
        agent.use_checkpointer(memory_checkpointer{});
        run_config cfg;
        cfg.thread_id = "elicit-async";
        const auto run = [&](auto awaitable) {
            boost::asio::io_context io;
            auto r = boost::asio::co_spawn(io, std::move(awaitable), boost::asio::use_future);
            io.run();
            return r.get();
        };
        const auto paused = run(agent.async_invoke("ask me", cfg));
        REQUIRE(paused.reason == stop_reason::interrupted);
        CHECK(paused.interrupts[0].value.as_object().at("type") == "mcp_elicitation");
        const auto declined = run(agent.async_invoke(resume{"decline"}, cfg));
        REQUIRE(declined.ok());
        CHECK_THAT(declined.state.messages[2].text(), Catch::Contains(R"("result":{"action":"decline"})"));

        REQUIRE(run(agent.async_invoke("again", cfg)).reason == stop_reason::interrupted);
        const auto wrong = run(agent.async_invoke(resume{42}, cfg));
        REQUIRE(wrong.ok());
        // the server heard a JSON-RPC error naming what was wrong
        CHECK_THAT(wrong.state.messages.back().text(), Catch::Equals("done again"));
        const auto& answer = wrong.state.messages[wrong.state.messages.size() - 2];
        CHECK_THAT(answer.text(), Catch::Contains("the answer to an MCP elicitation must be an object"));
        kit.close();
    }
    SECTION("an in-process handler answers instead, and the run does not pause") {
        mcp::client_options opts;
        opts.on_elicitation = [](const boost::json::object&) {
            return boost::json::object{{"action", "accept"}, {"content", {{"name", "Bob"}}}};
        };
        mcp::mcp_toolkit kit({fake("modern")}, opts);
        scripted_model model({ai_message("", {tool_call{"c1", "fake_ask", {}}}), ai_message("done")});
        auto agent = make_agent(model, kit.tool_set());
        const auto r = agent.invoke("ask me");
        REQUIRE(r.ok());
        CHECK_THAT(r.state.messages[2].text(), Catch::Contains("Bob"));
        kit.close();
    }
}
