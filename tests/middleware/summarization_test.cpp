// summarization: triggers, the safe cutoff, rescues, the prompt, the
// candidate chain, the context-length retry, both loops, and bad input.
#include "../agent/run_async.hpp" // async_loop, co_spawn, io_context
#include "../agent/support.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/middleware/summarization.hpp>
#include <agentware/model/scripted_model.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

using namespace agentware;
using strings = std::vector<std::string>;

namespace {

summarization_options keep_messages(double trigger_messages, double keep) {
    summarization_options o;
    o.enabled = true;
    o.trigger = {{context_size::kind::messages, trigger_messages}};
    o.keep = {context_size::kind::messages, keep};
    return o;
}

std::vector<message> history(std::size_t pairs) {
    std::vector<message> ms;
    for (std::size_t i = 0; i < pairs; ++i) {
        message h = human_message("question " + std::to_string(i));
        h.id = "h" + std::to_string(i);
        message a = ai_message("answer " + std::to_string(i));
        a.id = "a" + std::to_string(i);
        ms.push_back(std::move(h));
        ms.push_back(std::move(a));
    }
    return ms;
}

// A model that always fails, as a configured summary model that is down.
struct failing_model {
    model_response invoke(const chat_request&) { throw model_error(model_error_kind::server, "down", 503); }
};

// The main model: first rejects the prompt as too long, then answers.
struct too_long_once {
    std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<std::vector<std::size_t>> sizes = std::make_shared<std::vector<std::size_t>>();
    model_response invoke(const chat_request& r) {
        sizes->push_back(r.messages.size());
        if ((*calls)++ == 0)
            throw model_error(model_error_kind::context_length_exceeded, "context length exceeded", 400);
        return model_response{ai_message("fits now"), {}};
    }
};

template <class M>
auto run_compaction(summarization& s, std::vector<message> ms, M& run_model, std::string previous = {}) {
    using state_t = agent_state<pipeline<summarization>>;
    state_t state;
    state.messages = std::move(ms);
    get<summary_text_field>(state) = std::move(previous);
    runtime rt;
    rt.thread_id = "t";
    rt.model = model_ref(run_model);
    bool done = detail::hook_runner().run(s.compact(state, rt, false));
    return std::pair{done, std::move(state)};
}

} // namespace

TEST_CASE("summarization compacts when the message trigger fires and keeps the tail",
          "[middleware][summarization]") {
    summarization s(keep_messages(10, 4));
    scripted_model run_model({ai_message("the summary")});
    auto [done, state] = run_compaction(s, history(6), run_model); // 12 messages
    REQUIRE(done);
    CHECK(get<summary_text_field>(state) == "the summary");
    // The latest real user message (h5) is kept anyway; the last four are the tail.
    CHECK(test::roles(state.messages).size() == 4);
    CHECK(state.messages.front().id == "h4");
    CHECK(state.messages.back().id == "a5");
    auto prompt = run_model.requests().at(0).messages.at(0).text();
    CHECK(prompt.find("<new_messages>\nHuman: question 0\nAI: answer 0") != std::string::npos);
    CHECK(prompt.find("<existing_summary>") == std::string::npos);
    CHECK(prompt.find("Context Extraction Assistant") != std::string::npos);
}

TEST_CASE("summarization does nothing below the trigger or without one", "[middleware][summarization]") {
    scripted_model run_model({});
    summarization below(keep_messages(20, 4));
    CHECK_FALSE(run_compaction(below, history(6), run_model).first);
    summarization never(summarization_options{});
    CHECK_FALSE(run_compaction(never, history(50), run_model).first);
    CHECK(run_model.requests().empty());
}

TEST_CASE("summarization's cutoff never separates an ai message from its tool results",
          "[middleware][summarization]") {
    std::vector<message> ms = history(3);
    message call = test::calls({test::call("c1", "echo"), test::call("c2", "echo")});
    call.id = "call";
    ms.push_back(call);
    ms.push_back(tool_message("c1", "echo", "r1"));
    ms.push_back(tool_message("c2", "echo", "r2"));
    ms.push_back(ai_message("done"));
    // keep 2 would cut between the two tool results: the cut moves back to the ai message.
    summarization s(keep_messages(5, 2));
    scripted_model run_model({ai_message("sum")});
    auto [done, state] = run_compaction(s, ms, run_model);
    REQUIRE(done);
    REQUIRE(state.messages.size() >= 4);
    // h2 is rescued (the latest real user message), then the call and its results.
    CHECK(state.messages[0].id == "h2");
    CHECK(state.messages[1].id == "call");
    CHECK(state.messages[2].is_tool());
    CHECK(state.messages[3].is_tool());
}

TEST_CASE("summarization rescues dynamic-context reminders and the latest user message, not hidden ones",
          "[middleware][summarization]") {
    std::vector<message> ms = history(5);
    message reminder = system_message("<system-reminder>date</system-reminder>");
    reminder.id = "date";
    reminder.metadata["dynamic_context_reminder"] = true;
    ms.insert(ms.begin() + 1, reminder);
    message hidden = human_message("hidden");
    hidden.id = "hidden";
    hidden.metadata["hide_from_ui"] = true;
    ms.push_back(hidden);
    summarization s(keep_messages(5, 1));
    scripted_model run_model({ai_message("sum")});
    auto [done, state] = run_compaction(s, ms, run_model);
    REQUIRE(done);
    strings ids;
    for (const auto& m : state.messages)
        ids.push_back(m.id);
    CHECK(ids == strings{"date", "h4", "hidden"});
}

TEST_CASE("summarization sends the previous summary and escapes both sections",
          "[middleware][summarization]") {
    std::vector<message> ms = history(4);
    ms[0].content = {text_block("a <b> & c")};
    summarization s(keep_messages(3, 2));
    scripted_model run_model({ai_message("new summary")});
    auto [done, state] = run_compaction(s, ms, run_model, "old <summary>");
    REQUIRE(done);
    auto prompt = run_model.requests().at(0).messages.at(0).text();
    CHECK(prompt.find("<existing_summary>\nold &lt;summary&gt;\n</existing_summary>\n\n<new_messages>\n") !=
          std::string::npos);
    CHECK(prompt.find("a &lt;b&gt; &amp; c") != std::string::npos);
    CHECK(get<summary_text_field>(state) == "new summary");
}

TEST_CASE("summarization tries the configured model, then the run's; blank and failing answers fall through",
          "[middleware][summarization]") {
    SECTION("a failing configured model falls back to the run's model") {
        summarization s(keep_messages(4, 2), any_chat_model(failing_model{}));
        scripted_model run_model({ai_message("from the run model")});
        auto [done, state] = run_compaction(s, history(3), run_model);
        REQUIRE(done);
        CHECK(get<summary_text_field>(state) == "from the run model");
    }
    SECTION("a blank answer falls through; all failing means no compaction and no change") {
        summarization s(keep_messages(4, 2), any_chat_model(scripted_model({ai_message("   ")})));
        scripted_model run_model({ai_message("\n")});
        auto before = history(3);
        auto [done, state] = run_compaction(s, before, run_model);
        CHECK_FALSE(done);
        CHECK(state.messages.size() == before.size());
        CHECK(get<summary_text_field>(state).empty());
    }
    SECTION("a configured model that answers is used alone") {
        summarization s(keep_messages(4, 2), any_chat_model(scripted_model({ai_message("own")})));
        scripted_model run_model({});
        auto [done, state] = run_compaction(s, history(3), run_model);
        REQUIRE(done);
        CHECK(get<summary_text_field>(state) == "own");
        CHECK(run_model.requests().empty());
    }
}

TEST_CASE("summarization's before_summarization hooks see the event; a throwing one changes nothing",
          "[middleware][summarization]") {
    summarization s(keep_messages(4, 2));
    std::size_t seen = 0, preserved = 0;
    s.before_summarization.push_back([](const summarization_event&) { throw std::runtime_error("hook"); });
    s.before_summarization.push_back([&](const summarization_event& e) {
        seen = e.messages_to_summarize.size();
        preserved = e.preserved_messages.size();
    });
    scripted_model run_model({ai_message("sum")});
    auto [done, state] = run_compaction(s, history(4), run_model);
    REQUIRE(done);
    CHECK(seen == 6); // 8 messages, 2 kept (h3 among them: nothing to rescue)
    CHECK(preserved == 2);
}

TEST_CASE("summarization's token trigger counts a running total, not the history each round",
          "[middleware][summarization]") {
    summarization_options o;
    o.trigger = {{context_size::kind::tokens, 1e9}};
    summarization s(o);
    agent_state<pipeline<summarization>> state;
    state.messages = history(100);
    std::uint64_t first = s.counted_tokens(state, "t");
    CHECK(first == count_tokens(state.messages));
    state.messages.push_back(ai_message("more"));
    state.messages.back().id = "more";
    CHECK(s.counted_tokens(state, "t") == first + token_counter{}.estimate(state.messages.back()));
    // Cut back and given a new last message (a retried turn): the same as a full count.
    state.messages.resize(60);
    state.messages.push_back(human_message("a longer question than the one it replaces"));
    state.messages.back().id = "retry";
    CHECK(s.counted_tokens(state, "t") == count_tokens(state.messages));
    // The last counted message swapped in place for another (a new id), then more.
    state.messages.back() = human_message("x");
    state.messages.back().id = "swapped";
    state.messages.push_back(ai_message("reply"));
    state.messages.back().id = "reply";
    CHECK(s.counted_tokens(state, "t") == count_tokens(state.messages));
    // A history replaced under it is counted again.
    state.messages = history(2);
    CHECK(s.counted_tokens(state, "t") == count_tokens(state.messages));
}

TEST_CASE("summarization runs in an agent, in both loops, as a coroutine hook",
          "[middleware][summarization]") {
    for (bool async : {false, true}) {
        scripted_model main({ai_message("final")});
        auto a = make_agent(
            main, tool_set{},
            summarization(keep_messages(6, 2), any_chat_model(scripted_model({ai_message("compact")}))));
        decltype(a)::state_type state;
        state.messages = history(3);
        run_result r;
        if (async) {
            boost::asio::io_context io;
            boost::asio::co_spawn(io, a.async_run(state, "next question"),
                                  [&](std::exception_ptr, run_result rr) { r = std::move(rr); });
            io.run();
        } else {
            r = a.run(state, "next question");
        }
        INFO("async " << async);
        REQUIRE(r.ok());
        CHECK(state.get<summary_text_field>() == "compact");
        CHECK(state.messages.back().text() == "final");
        // the model saw the kept tail only (the summary is durable_context's to show)
        CHECK(main.requests().back().messages.size() == 2);
    }
}

TEST_CASE("summarization compacts and retries once when the provider says the context is too long",
          "[middleware][summarization]") {
    summarization_options o = keep_messages(1000, 2); // the trigger would not fire
    for (bool async : {false, true}) {
        too_long_once main;
        auto a =
            make_agent(main, tool_set{}, summarization(o, any_chat_model(scripted_model({ai_message("s")}))));
        decltype(a)::state_type state;
        state.messages = history(5);
        run_result r;
        if (async) {
            boost::asio::io_context io;
            boost::asio::co_spawn(io, a.async_run(state, "go on"),
                                  [&](std::exception_ptr, run_result rr) { r = std::move(rr); });
            io.run();
        } else {
            r = a.run(state, "go on");
        }
        INFO("async " << async);
        REQUIRE(r.ok());
        CHECK(*main.calls == 2);
        CHECK((*main.sizes)[0] == 11);
        CHECK((*main.sizes)[1] == 2); // a4 and the new question (the latest user message)
        CHECK(state.get<summary_text_field>() == "s");
    }
    SECTION("without a summary the error stands") {
        too_long_once main;
        auto a = make_agent(main, tool_set{}, summarization(o, any_chat_model(failing_model{})));
        auto r = a.invoke("hi");
        CHECK(r.reason == stop_reason::error);
        CHECK(r.error.find("context length exceeded") != std::string::npos);
    }
}

TEST_CASE("summarization options read DeerFlow's section; bad values name the key",
          "[middleware][summarization][options]") {
    auto read = [](std::string_view text) {
        return json_read_as<summarization_options>(boost::json::parse(text), "summarization");
    };
    auto o = read(R"({"enabled": true, "model_name": null, "trigger": {"type": "tokens", "value": 32000},
                      "keep": {"type": "messages", "value": 10}, "trim_tokens_to_summarize": 15564})");
    CHECK(o.enabled);
    CHECK_FALSE(o.model_name);
    REQUIRE(o.trigger.size() == 1);
    CHECK(o.trigger[0] == context_size{context_size::kind::tokens, 32000});
    CHECK(o.keep == context_size{context_size::kind::messages, 10});
    CHECK(o.trim_tokens_to_summarize == 15564u);
    auto list = read(R"({"trigger": [{"type": "messages", "value": 50}, {"type": "fraction", "value": 0.8}],
                         "trim_tokens_to_summarize": null})");
    CHECK(list.trigger.size() == 2);
    CHECK_FALSE(list.trim_tokens_to_summarize);
    CHECK(read(R"({"trigger": null})").trigger.empty());
    auto fails_with = [&](std::string_view text, std::string_view what) {
        try {
            read(text);
            FAIL("no error for " << text);
        } catch (const json_error& e) {
            CHECK_THAT(e.what(), Catch::Contains(std::string(what)));
        }
    };
    fails_with(R"({"trigger": {"type": "lines", "value": 3}})", "summarization.trigger.type");
    fails_with(R"({"trigger": [{"type": "fraction", "value": 2}]})", "summarization.trigger[0].value");
    fails_with(R"({"keep": {"type": "messages"}})", "summarization.keep.value");
    fails_with(R"({"summary_prompt": "no placeholder"})", "summarization.summary_prompt");
    fails_with(R"({"enabled": "yes"})", "summarization.enabled");
    fails_with(R"({"trigers": []})", "summarization.trigers");
}
