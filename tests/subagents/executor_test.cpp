// The subagent executor and its task tool: result texts, delegations (fresh agent,
// caps, failures, timeouts, cancellation, concurrency), events and per-subagent streams.
#include <agentware/subagents/executor.hpp>
#include <agentware/subagents/task_tool.hpp>

#include "../agent/run_async.hpp"
#include "support.hpp"

#include <agentware/agent/async_loop.hpp>
#include <agentware/middleware/durable_context.hpp>
#include <agentware/middleware/subagent_limit.hpp>
#include <agentware/presets/lead_agent.hpp>
#include <agentware/presets/subagent_chain.hpp>

#include <catch2/catch.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_to.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace subagent_test {

using namespace agentware;
using namespace std::chrono_literals;

// Collects the run's custom events (the channel calls it one event at a time).
struct event_log {
    std::shared_ptr<std::vector<boost::json::object>> events =
        std::make_shared<std::vector<boost::json::object>>();
    std::function<void(const boost::json::object&)> listener() const {
        return [e = events](const boost::json::object& o) { e->push_back(o); };
    }
    std::vector<std::string> types() const {
        std::vector<std::string> out;
        for (const auto& e : *events)
            out.emplace_back(e.at("type").as_string());
        return out;
    }
    const boost::json::object* find(std::string_view type) const {
        for (const auto& e : *events)
            if (e.at("type").as_string() == type) return &e;
        return nullptr;
    }
};

// An asynchronous model that answers after `delay` (forever when zero), and
// counts how many of its calls wait at once.
struct slow_model {
    std::chrono::milliseconds delay{0};
    std::string answer = "done";
    std::shared_ptr<std::atomic<int>> now = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<std::atomic<int>> peak = std::make_shared<std::atomic<int>>(0);

    model_response invoke(const chat_request&) { throw std::logic_error("slow_model is asynchronous only"); }
    asio::awaitable<model_response> async_invoke(const chat_request&) {
        const int n = ++*now;
        int p = peak->load();
        while (n > p && !peak->compare_exchange_weak(p, n)) {
        }
        struct leave {
            std::atomic<int>& c;
            ~leave() { --c; }
        } guard{*now};
        asio::steady_timer t(co_await asio::this_coro::executor);
        if (delay.count() == 0)
            t.expires_at(asio::steady_timer::time_point::max());
        else
            t.expires_after(delay);
        co_await t.async_wait(asio::use_awaitable);
        co_return model_response{ai_message(answer), {}};
    }
};

// An executor whose types use the model named "sub" (the parent's is "inherit").
inline std::shared_ptr<subagent_executor>
executor_with(any_chat_model sub, std::string_view config_json = "{}", tool_set tools = {}) {
    subagent_executor_options o;
    o.config = options_from(config_json);
    o.tools = std::move(tools);
    o.model_named = [sub](std::string_view name) { return name == "sub" ? sub : any_chat_model(); };
    return std::make_shared<subagent_executor>(std::move(o));
}

inline message task_call(std::string id, std::string type = "general-purpose",
                         std::string prompt = "Find it.") {
    boost::json::object args{{"description", "look around"}, {"prompt", prompt}, {"subagent_type", type}};
    return ai_message("", {tool_call{std::move(id), "task", std::move(args)}});
}

// The test cases are in the namespace too: the binary is a unity build.

TEST_CASE("subagent result texts match DeerFlow's", "[subagent]") {
    subagent_result r;
    r.status = subagent_status::completed;
    r.result = "42";
    CHECK(format_subagent_result_message(r) == "Task Succeeded. Result: 42");
    r.stop_reason = "token_capped";
    CHECK(format_subagent_result_message(r) == "Task Succeeded (capped: token budget). Result: 42");
    r.stop_reason = "loop_capped";
    CHECK(format_subagent_result_message(r) ==
          "Task Succeeded (capped: repeated tool-call loop). Result: 42");

    r = {};
    r.status = subagent_status::failed;
    CHECK(format_subagent_result_message(r) == "Task failed.");
    r.error = "boom";
    CHECK(format_subagent_result_message(r) == "Task failed. Error: boom");
    r.stop_reason = "turn_capped";
    CHECK(format_subagent_result_message(r) == "Task failed (capped: turn budget). Error: boom");
    r.error.clear();
    CHECK(format_subagent_result_message(r) == "Task failed (capped: turn budget).");

    r = {};
    r.status = subagent_status::cancelled;
    CHECK(format_subagent_result_message(r) == "Task cancelled by user.");
    r.error = "Cancelled by user";
    CHECK(format_subagent_result_message(r) == "Task cancelled by user. Error: Cancelled by user");
    r = {};
    r.status = subagent_status::timed_out;
    CHECK(format_subagent_result_message(r) == "Task timed out.");
    r.error = "Execution timed out after 5 seconds";
    CHECK(format_subagent_result_message(r) == "Task timed out. Error: Execution timed out after 5 seconds");

    // additional_kwargs: brief and hash for a completed task, the error otherwise
    subagent_result done;
    done.status = subagent_status::completed;
    done.result = std::string(3000, 'x');
    done.model_name = "m";
    done.usage = token_usage{3, 4, 7};
    auto kw = subagent_additional_kwargs(done);
    CHECK(kw.at("subagent_status") == "completed");
    CHECK(kw.at("subagent_result_brief").as_string().size() == 2000);
    CHECK(kw.at("subagent_result_sha256").as_string().size() == 64);
    CHECK(kw.at("subagent_model_name") == "m");
    CHECK(kw.at("subagent_token_usage").at("total_tokens") == 7);
    CHECK_FALSE(kw.contains("subagent_error"));
    subagent_result failed;
    failed.error = "bad";
    kw = subagent_additional_kwargs(failed);
    CHECK(kw.at("subagent_status") == "failed");
    CHECK(kw.at("subagent_error") == "bad");
    CHECK_FALSE(kw.contains("subagent_result_brief"));
}

TEST_CASE("the task tool refuses an unknown type and the bash type without bash", "[subagent]") {
    auto ex = executor_with(any_chat_model(scripted_model({})));
    auto r = execute(*ex, {"c1", "d", "p", "writer"});
    CHECK(r.status == subagent_status::failed);
    CHECK(format_subagent_result_message(r) ==
          "Task failed. Error: Unknown subagent type 'writer'. Available: general-purpose");
    r = execute(*ex, {"c2", "d", "p", "bash"});
    CHECK(format_subagent_result_message(r) ==
          "Task failed. Error: Bash subagent is disabled for LocalSandboxProvider because host bash "
          "execution is not a secure sandbox boundary. Switch to the isolated sandbox (sandbox.use: "
          "isolated) for isolated bash access, or set sandbox.allow_host_bash: true only in a fully trusted "
          "local environment.");
}

TEST_CASE("a delegation runs a fresh agent that shares the sandbox but not the history", "[subagent]") {
    scripted_model sub({test::calls({test::call("s1", "where", "{}")}), ai_message("The answer is 42.")});
    auto where =
        make_tool("where", "Which sandbox.", boost::json::object{},
                  [](const boost::json::object&, const tool_runtime& rt) {
                      const auto* sb = rt.field<sandbox_field>();
                      return sb && *sb && (*sb)->sandbox_id ? *(*sb)->sandbox_id : std::string("none");
                  });
    auto ex = executor_with(any_chat_model(sub), sub_model_config, tool_set(where));

    scripted_model parent({ai_message("Earlier answer."), task_call("t1"), ai_message("Thanks.")});
    auto lead = make_agent(parent, tool_set(), subagent_shared_fields{}, durable_context{});
    lead.tools().add(make_task_tool(ex));
    agent_state<decltype(lead)::pipeline_type> state;
    get<sandbox_field>(state) = sandbox_state{"sb-7"};
    REQUIRE(lead.run(state, "first").ok());

    event_log log;
    run_config cfg;
    cfg.stream.on_event = log.listener();
    cfg.run_id = "run-2";
    auto result = lead.run(state, "delegate", cfg);
    REQUIRE(result.ok());

    const message& tool_msg = state.messages[state.messages.size() - 2];
    REQUIRE(tool_msg.is_tool());
    CHECK(tool_msg.text() == "Task Succeeded. Result: The answer is 42.");
    CHECK(tool_msg.metadata.at("subagent_status") == "completed");
    CHECK(tool_msg.metadata.at("subagent_result_brief") == "The answer is 42.");

    // The subagent saw its prompt and the task only, and the parent's sandbox.
    auto requests = sub.requests();
    REQUIRE(requests.size() == 2);
    REQUIRE(requests[0].messages.size() == 2);
    CHECK(requests[0].messages[0].is_system());
    CHECK(requests[0].messages[1].text() == "Find it.");
    CHECK(requests[0].tool_names == std::vector<std::string>{"where"});
    CHECK(requests[1].messages.back().text() == "sb-7");

    // Progress: started, one event per step, completed; and the answer's tokens
    // (the subagent's own stream, shown by default).
    CHECK(log.types() == std::vector<std::string>{"task_started", "task_running", "task_running",
                                                  "subagent_token", "task_running", "task_completed"});
    CHECK(log.find("task_started")->at("task_id") == "t1");
    CHECK(log.find("task_started")->at("description") == "look around");
    CHECK(log.find("task_running")->at("message_index") == 1);
    CHECK(log.find("task_completed")->at("result") == "The answer is 42.");

    // The ledger holds the delegation, completed, with the result's hash.
    const auto& ledger = get<delegations_field>(state);
    REQUIRE(ledger.size() == 1);
    CHECK(ledger[0].id == "t1");
    CHECK(ledger[0].status == "completed");
    CHECK(ledger[0].run_id == "run-2");
    CHECK(ledger[0].result_sha256.size() == 64);
}

TEST_CASE("a subagent that reaches max_turns is capped", "[subagent]") {
    auto loop_tool =
        make_tool("again", "t", boost::json::object{}, [](const boost::json::object&) { return "ok"; });
    SECTION("with a partial answer: succeeded, capped") {
        scripted_model sub({test::calls({test::call("a", "again")}, "partial findings")}, {.cycle = true});
        auto ex = executor_with(any_chat_model(sub),
                                R"({"agents": {"general-purpose": {"model": "sub", "max_turns": 2}}})",
                                tool_set(loop_tool));
        auto r = execute(*ex, {"c", "d", "p", "general-purpose"});
        CHECK(format_subagent_result_message(r) ==
              "Task Succeeded (capped: turn budget). Result: partial findings");
        CHECK(r.stop_reason == "turn_capped");
    }
    SECTION("without text: failed, with the turn limit") {
        scripted_model sub({test::calls({test::call("a", "again")})}, {.cycle = true});
        auto ex = executor_with(any_chat_model(sub),
                                R"({"agents": {"general-purpose": {"model": "sub", "max_turns": 2}}})",
                                tool_set(loop_tool));
        auto r = execute(*ex, {"c", "d", "p", "general-purpose"});
        CHECK(format_subagent_result_message(r) ==
              "Task failed (capped: turn budget). Error: Reached max_turns=2");
    }
}

TEST_CASE("a subagent whose model fails is a failed task", "[subagent]") {
    auto sub = scripted_model::with_failures(
        {scripted_step{ai_message(""), model_error(model_error_kind::server, "upstream exploded")}});
    auto ex = executor_with(any_chat_model(sub), sub_model_config);
    event_log log;
    std::function<void(const boost::json::object&)> listener = log.listener();
    subagent_parent parent;
    parent.events = event_sink(&listener);
    auto r = execute(*ex, {"c", "d", "p", "general-purpose"}, parent);
    CHECK(r.status == subagent_status::failed);
    CHECK_THAT(format_subagent_result_message(r), Catch::StartsWith("Task failed. Error: "));
    CHECK_THAT(r.error, Catch::Contains("upstream exploded"));
    CHECK(log.types() == std::vector<std::string>{"task_started", "task_failed"});

    // A model that is not configured fails the same way, before starting.
    auto none =
        executor_with(any_chat_model(sub), R"({"agents": {"general-purpose": {"model": "missing"}}})");
    r = execute(*none, {"c", "d", "p", "general-purpose"});
    CHECK(format_subagent_result_message(r) ==
          "Task failed. Error: no model named \"missing\" is configured");
}

TEST_CASE("a subagent that never answers is stopped at its timeout", "[subagent][async]") {
    slow_model hang; // waits forever
    auto ex = executor_with(any_chat_model(hang),
                            R"({"agents": {"general-purpose": {"model": "sub", "timeout_seconds": 0.05}}})");
    event_log log;
    std::function<void(const boost::json::object&)> listener = log.listener();
    subagent_parent parent;
    parent.events = event_sink(&listener);
    auto r = execute(*ex, {"c", "d", "p", "general-purpose"}, parent);
    CHECK(format_subagent_result_message(r) ==
          "Task timed out. Error: Execution timed out after 0.05 seconds");
    CHECK(log.types() == std::vector<std::string>{"task_started", "task_timed_out"});
    CHECK(*hang.now == 0); // the model call was cancelled: nothing is left running
    CHECK(ex->waiting() == 0);
}

TEST_CASE("a subagent whose timeout is beyond the clock's range runs to its end", "[subagent][async]") {
    // 10^12 seconds: in the clock's nanoseconds the deadline would overflow; it saturates.
    slow_model slow{20ms};
    auto ex = executor_with(any_chat_model(slow),
                            R"({"agents": {"general-purpose": {"model": "sub", "timeout_seconds": 1e12}}})");
    const auto r = execute(*ex, {"c", "d", "p", "general-purpose"});
    CHECK(format_subagent_result_message(r) == "Task Succeeded. Result: done");
    CHECK(*slow.peak == 1); // the runner waited: the timer's path
}

TEST_CASE("subagents stop when the parent run is stopped or cancelled", "[subagent][async]") {
    slow_model hang;
    auto ex = executor_with(any_chat_model(hang), sub_model_config);
    scripted_model parent({task_call("t1"), ai_message("never reached")});
    auto lead = make_agent(parent, tool_set(task_tool(ex)));

    SECTION("run_config::stop, in the blocking loop") {
        std::stop_source stop;
        run_config cfg;
        cfg.stop = stop.get_token();
        std::thread stopper([&] {
            while (*hang.now == 0)
                std::this_thread::sleep_for(1ms);
            stop.request_stop();
        });
        auto r = lead.invoke("go", cfg);
        stopper.join();
        CHECK_FALSE(r.ok()); // the parent stops before its next model call
        const auto& tool_msg = r.state.messages.back();
        REQUIRE(tool_msg.is_tool());
        CHECK(tool_msg.text() == "Task cancelled by user. Error: Cancelled by user");
        CHECK(tool_msg.metadata.at("subagent_status") == "cancelled");
        CHECK(*hang.now == 0);
    }
    SECTION("Asio cancellation of the parent's coroutine") {
        asio::io_context io;
        asio::cancellation_signal cancel;
        std::optional<invoke_result<decltype(lead)::state_type>> out;
        asio::co_spawn(io, lead.async_invoke("go"),
                       asio::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr e, auto r) {
                           if (e) std::rethrow_exception(e);
                           out = std::move(r);
                       }));
        // Cancelled once the subagent's model is waiting.
        asio::steady_timer poll(io);
        std::function<void()> when_waiting = [&] {
            if (*hang.now > 0) return cancel.emit(asio::cancellation_type::terminal);
            poll.expires_after(1ms);
            poll.async_wait([&](boost::system::error_code) { when_waiting(); });
        };
        when_waiting();
        io.run();
        REQUIRE(out);
        CHECK_FALSE(out->ok());
        bool found = false;
        for (const auto& m : out->state.messages)
            if (m.is_tool() && m.text() == "Task cancelled by user. Error: Cancelled by user") found = true;
        CHECK(found);
        CHECK(*hang.now == 0);
    }
}

TEST_CASE("a delegation whose parent is cancelled before it starts is cancelled", "[subagent][async]") {
    slow_model hang;
    auto ex = executor_with(any_chat_model(hang), sub_model_config);
    event_log log;
    std::function<void(const boost::json::object&)> listener = log.listener();
    subagent_parent parent;
    parent.events = event_sink(&listener);
    asio::io_context io;
    asio::cancellation_signal cancel;
    std::optional<subagent_result> out;
    asio::co_spawn(io, ex->execute({"c", "d", "p", "general-purpose"}, parent),
                   asio::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr e, subagent_result r) {
                       if (e) std::rethrow_exception(e);
                       out = std::move(r);
                   }));
    cancel.emit(asio::cancellation_type::terminal);
    io.run();
    REQUIRE(out);
    CHECK(format_subagent_result_message(*out) == "Task cancelled by user. Error: Cancelled by user");
    CHECK(log.types() == std::vector<std::string>{"task_started", "task_cancelled"});
    CHECK(*hang.now == 0);
}

TEST_CASE("subagents run at most max_concurrent at once, as coroutines on one thread", "[subagent][async]") {
    slow_model slow{20ms};
    auto ex = executor_with(any_chat_model(slow),
                            R"({"max_concurrent": 2, "agents": {"general-purpose": {"model": "sub"}}})");
    asio::io_context io;
    std::vector<subagent_result> results;
    for (int i = 0; i < 6; ++i)
        asio::co_spawn(io, ex->execute({fmt::format("c{}", i), "d", "p", "general-purpose"}, {}),
                       [&](std::exception_ptr e, subagent_result r) {
                           if (e) std::rethrow_exception(e);
                           results.push_back(std::move(r));
                       });
    io.run();
    REQUIRE(results.size() == 6);
    for (const auto& r : results)
        CHECK(format_subagent_result_message(r) == "Task Succeeded. Result: done");
    CHECK(*slow.peak == 2);

    // Raised, all six run side by side.
    slow_model wide{20ms};
    auto ex6 = executor_with(any_chat_model(wide),
                             R"({"max_concurrent": 6, "agents": {"general-purpose": {"model": "sub"}}})");
    asio::io_context io6;
    int done = 0;
    for (int i = 0; i < 6; ++i)
        asio::co_spawn(io6, ex6->execute({fmt::format("c{}", i), "d", "p", "general-purpose"}, {}),
                       [&](std::exception_ptr, subagent_result) { ++done; });
    io6.run();
    CHECK(done == 6);
    CHECK(*wide.peak == 6);
}

TEST_CASE("parallel task calls of a blocking run share the concurrency bound", "[subagent][concurrency]") {
    slow_model slow{20ms};
    auto ex = executor_with(any_chat_model(slow),
                            R"({"max_concurrent": 1, "agents": {"general-purpose": {"model": "sub"}}})");
    boost::json::object args{{"description", "d"}, {"prompt", "p"}, {"subagent_type", "general-purpose"}};
    scripted_model parent({ai_message("", {tool_call{"a", "task", args}, tool_call{"b", "task", args},
                                           tool_call{"c", "task", args}}),
                           ai_message("all done")});
    auto lead = make_agent(parent, tool_set(task_tool(ex)));
    event_log log;
    run_config cfg;
    cfg.stream.on_event = log.listener();
    auto r = lead.invoke("go", cfg);
    REQUIRE(r.ok());
    int ok = 0;
    for (const auto& msg : r.state.messages)
        if (msg.is_tool() && msg.text() == "Task Succeeded. Result: done") ++ok;
    CHECK(ok == 3);
    CHECK(*slow.peak == 1);
    CHECK(log.events->size() == 9); // started, one step, completed, for each
}

TEST_CASE("subagent_limit counts the delegations the task tool records", "[subagent]") {
    scripted_model sub({ai_message("one")}, {.cycle = true});
    auto ex = executor_with(any_chat_model(sub), sub_model_config);
    scripted_model parent({task_call("t1"), task_call("t2"), ai_message("done")});
    subagent_limit_options lim;
    lim.max_total_per_run = 1;
    auto lead = make_agent(parent, tool_set(task_tool(ex)), durable_context{}, subagent_limit{lim});
    auto r = lead.invoke("go");
    REQUIRE(r.ok());
    // The second call was dropped: the ledger already held the run's one delegation.
    CHECK(get<delegations_field>(r.state).size() == 1);
    CHECK(sub.calls() == 1);
    CHECK(r.context.at("stop_reason") == "subagent_limit_capped");
}

struct announcer {
    void before_model(auto&, runtime& rt) {
        rt.events.emit(boost::json::object{{"type", "round"}, {"round", rt.round}});
    }
};

TEST_CASE("hooks and tools write to the run's custom-event channel, run_config::stop ends a run",
          "[subagent]") {
    auto emit =
        make_tool("emit", "t", boost::json::object{}, [](const boost::json::object&, const tool_runtime& rt) {
            rt.events.emit(boost::json::object{{"type", "from_tool"}, {"call", rt.tool_call_id}});
            return std::string(rt.stop.stop_requested() ? "stopping" : "going");
        });
    scripted_model model({test::calls({test::call("e1", "emit")}), ai_message("done")});
    auto a = make_agent(model, tool_set(emit), announcer{});
    event_log log;
    run_config cfg;
    cfg.stream.on_event = log.listener();
    auto r = a.invoke("go", cfg);
    REQUIRE(r.ok());
    CHECK(log.types() == std::vector<std::string>{"round", "from_tool", "round"});
    CHECK(log.find("from_tool")->at("call") == "e1");

    // Without a listener, emitting does nothing.
    CHECK(a.invoke("again").reason == stop_reason::error); // the script is spent: an error, not a crash

    std::stop_source stop;
    stop.request_stop();
    scripted_model idle({ai_message("never")});
    auto b = make_agent(idle, tool_set());
    run_config stopped;
    stopped.stop = stop.get_token();
    auto s = b.invoke("go", stopped);
    CHECK(s.reason == stop_reason::error);
    CHECK_THAT(s.error, Catch::Contains("run_config::stop"));
    CHECK(idle.calls() == 0);
    CHECK(s.state.messages.size() == 1); // the input is kept
}

// --- per-subagent streams ---------------------------------------------------

// An executor with a "ping" tool (it emits a custom event) and a custom type
// "researcher"; each delegation's model pings, then answers "done <task id>".
inline std::shared_ptr<subagent_executor> streaming_executor() {
    auto ping = make_tool("ping", "Pings.", boost::json::object{},
                          [](const boost::json::object&, const tool_runtime& rt) {
                              rt.events.emit(boost::json::object{{"type", "ping"}});
                              return std::string("pong");
                          });
    subagent_executor_options o;
    o.config = options_from(
        R"({"custom_agents": {"researcher": {"description": "Reads.", "system_prompt": "Read."}}})");
    o.tools = tool_set(ping);
    o.runner =
        [base = make_subagent_runner([] { return pipeline<subagent_shared_fields>{}; })](subagent_run run) {
            run.model =
                any_chat_model(scripted_model({ai_message("", {tool_call{"p_" + run.task_id, "ping", {}}}),
                                               ai_message("done " + run.task_id)}));
            return base(std::move(run));
        };
    return std::make_shared<subagent_executor>(std::move(o));
}

inline message two_task_calls() {
    boost::json::object gp{{"description", "d"}, {"prompt", "p"}, {"subagent_type", "general-purpose"}};
    boost::json::object rs{{"description", "d"}, {"prompt", "p"}, {"subagent_type", "researcher"}};
    return ai_message("", {tool_call{"a", "task", gp}, tool_call{"b", "task", rs}});
}

// The event types of one delegation, in order (events of other tasks left out).
inline std::vector<std::string> stream_of(const event_log& log, std::string_view task_id) {
    std::vector<std::string> out;
    for (const auto& e : *log.events)
        if (e.at("task_id").as_string() == task_id) out.emplace_back(e.at("type").as_string());
    return out;
}

// What the parent model is given back: the tool messages' texts and metadata.
inline std::vector<std::string> tool_results(const std::vector<message>& messages) {
    std::vector<std::string> out;
    for (const auto& m : messages)
        if (m.is_tool()) out.push_back(m.text() + " " + boost::json::serialize(m.metadata));
    return out;
}

TEST_CASE("each subagent's stream reaches the parent's events under its task id, shown per run",
          "[subagent][concurrency]") {
    const bool async = GENERATE(false, true);
    CAPTURE(async);
    auto ex = streaming_executor();
    auto run_with = [&](subagent_stream_filter filter, event_log& log) {
        scripted_model parent({two_task_calls(), ai_message("both done")});
        auto lead = make_agent(parent, tool_set(task_tool(ex)));
        run_config cfg;
        cfg.stream.on_event = log.listener();
        cfg.subagent_streams = std::move(filter);
        auto r = async ? test::run_async(lead, "go", cfg) : lead.invoke("go", cfg);
        REQUIRE(r.ok());
        return tool_results(r.state.messages);
    };
    const std::vector<std::string> full = {"task_started",   "task_running", "subagent_event", "task_running",
                                           "subagent_token", "task_running", "task_completed"};
    const std::vector<std::string> lifecycle = {"task_started", "task_completed"};

    event_log all;
    const auto seen_all = run_with(subagent_stream_filter::all(), all);
    CHECK(stream_of(all, "a") == full);
    CHECK(stream_of(all, "b") == full);
    for (const auto& e : *all.events) {
        const auto type = e.at("type").as_string();
        if (type == "subagent_token") {
            const auto id = e.at("task_id").as_string();
            CHECK(e.at("text").as_string() == "done " + std::string(id));
            CHECK(e.at("subagent_type") == (id == "a" ? "general-purpose" : "researcher"));
        }
        if (type == "subagent_event") CHECK(e.at("event").at("type") == "ping");
    }

    event_log none;
    const auto seen_none = run_with(subagent_stream_filter::none(), none);
    CHECK(stream_of(none, "a") == lifecycle);
    CHECK(stream_of(none, "b") == lifecycle);

    event_log some;
    const auto seen_some = run_with(subagent_stream_filter::only({"researcher"}), some);
    CHECK(stream_of(some, "a") == lifecycle);
    CHECK(stream_of(some, "b") == full);

    // The parent model is given the same results whatever the run shows.
    CHECK(seen_all.size() == 2);
    CHECK(seen_none == seen_all);
    CHECK(seen_some == seen_all);
}

TEST_CASE("a subagent's timeout on a manual clock fires without waiting", "[subagent][async]") {
    auto clock = std::make_shared<manual_subagent_clock>();
    subagent_executor_options o;
    o.config = options_from(R"({"agents": {"general-purpose": {"model": "sub", "timeout_seconds": 900}}})");
    o.clock = clock;
    // The model takes 1,000 s on the clock for its first answer, 10 s for the next.
    std::vector<std::chrono::milliseconds> takes = {1000s, 10s};
    auto calls = std::make_shared<std::size_t>(0);
    struct clocked_model {
        std::shared_ptr<manual_subagent_clock> clock;
        std::vector<std::chrono::milliseconds> takes;
        std::shared_ptr<std::size_t> calls;
        model_response invoke(const chat_request&) { throw std::logic_error("asynchronous only"); }
        asio::awaitable<model_response> async_invoke(const chat_request&) {
            co_await clock->sleep(takes.at((*calls)++));
            co_return model_response{ai_message("done"), {}};
        }
    };
    o.model_named = [&](std::string_view) { return any_chat_model(clocked_model{clock, takes, calls}); };
    auto ex = std::make_shared<subagent_executor>(std::move(o));
    event_log log;
    std::function<void(const boost::json::object&)> listener = log.listener();
    subagent_parent parent;
    parent.events = event_sink(&listener);

    const auto real_start = std::chrono::steady_clock::now();
    auto r = execute(*ex, {"c", "d", "p", "general-purpose"}, parent);
    CHECK(format_subagent_result_message(r) ==
          "Task timed out. Error: Execution timed out after 900 seconds");
    CHECK(log.types() == std::vector<std::string>{"task_started", "task_timed_out"});
    CHECK(clock->now() == 1000s);
    CHECK(std::chrono::steady_clock::now() - real_start < 60s); // not 900 s of real time

    // Within its time, it answers; the clock moved by what the answer took.
    auto ok = execute(*ex, {"c2", "d", "p", "general-purpose"}, parent);
    CHECK(format_subagent_result_message(ok) == "Task Succeeded. Result: done");
    CHECK(clock->now() == 1010s);
    CHECK(ex->waiting() == 0);
}

TEST_CASE("the manual subagent clock fires what is due, earliest first, and withdraws dropped calls",
          "[subagent]") {
    manual_subagent_clock clock;
    std::vector<int> fired;
    auto late = clock.call_after(20s, [&] { fired.push_back(20); });
    auto early = clock.call_after(10s, [&] { fired.push_back(10); });
    auto dropped = clock.call_after(5s, [&] { fired.push_back(5); });
    dropped.reset();
    clock.advance(9s);
    CHECK(fired.empty());
    clock.advance(30s);
    CHECK(fired == std::vector<int>{10, 20});
    clock.advance(100s);
    CHECK(fired.size() == 2); // each call is made once
    CHECK(clock.now() == 139s);
}

} // namespace subagent_test
