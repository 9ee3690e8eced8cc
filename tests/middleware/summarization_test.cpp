// summarization: triggers (tokens, fraction, lists, the previous summary) at
// their boundaries, keep policies and the safe cutoff, rescues, the prompt
// and its trimming, the canned summaries, the candidate chain, the
// context-length retry, both loops, and bad input.
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
#include <string_view>
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

// A message of ten tokens by our estimate (three for framing, 28 characters):
// its id padded with dots.
std::string padded(std::string id) {
    id.resize(28, '.');
    return id;
}

message ten_tokens(bool human, std::string id) {
    message m = human ? human_message(padded(id)) : ai_message(padded(id));
    m.id = std::move(id);
    return m;
}

// h0 a0 h1 a1 ...: n messages of ten tokens each.
std::vector<message> even_history(std::size_t n) {
    std::vector<message> ms;
    for (std::size_t i = 0; i < n; ++i)
        ms.push_back(ten_tokens(i % 2 == 0, (i % 2 == 0 ? "h" : "a") + std::to_string(i / 2)));
    return ms;
}

// The buffer form of these ids, as even_history wrote them.
std::string rendered(const strings& ids) {
    std::string out;
    for (const auto& id : ids)
        out += (out.empty() ? "" : "\n") + std::string(id[0] == 'h' ? "Human: " : "AI: ") + padded(id);
    return out;
}

std::string repeat(std::string_view piece, std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i)
        out += piece;
    return out;
}

summarization_options options_with(std::vector<context_size> trigger, context_size keep,
                                   std::size_t max_input_tokens = 0) {
    summarization_options o;
    o.enabled = true;
    o.trigger = std::move(trigger);
    o.keep = keep;
    o.max_input_tokens = max_input_tokens;
    return o;
}

constexpr auto messages_kind = context_size::kind::messages;
constexpr auto tokens_kind = context_size::kind::tokens;
constexpr auto fraction_kind = context_size::kind::fraction;

// One before_model call of a fresh middleware, the run's model answering "new summary".
struct hook_run {
    agent_state<pipeline<summarization>> state;
    strings prompts; // what the summary model was asked

    bool compacted() const { return get<summary_text_field>(state) == "new summary"; }
    const std::string& summary() const { return get<summary_text_field>(state); }
    strings ids() const {
        strings out;
        for (const auto& m : state.messages)
            out.push_back(m.id);
        return out;
    }
    // The text between the tags of one section of the prompt.
    std::string section(std::string_view tag) const {
        const std::string& p = prompts.at(0);
        const std::string open = "<" + std::string(tag) + ">\n", close = "\n</" + std::string(tag) + ">";
        const auto from = p.find(open);
        REQUIRE(from != std::string::npos);
        const auto to = p.find(close, from);
        REQUIRE(to != std::string::npos);
        return p.substr(from + open.size(), to - from - open.size());
    }
};

hook_run run_before_model(summarization_options o, std::vector<message> ms, std::string previous = {}) {
    summarization s(std::move(o));
    scripted_model run_model({ai_message("new summary")});
    hook_run out;
    out.state.messages = std::move(ms);
    get<summary_text_field>(out.state) = std::move(previous);
    runtime rt;
    rt.thread_id = "t";
    rt.model = model_ref(run_model);
    detail::hook_runner().run(s.before_model(out.state, rt));
    for (const auto& r : run_model.requests())
        out.prompts.push_back(r.messages[0].text());
    return out;
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

TEST_CASE("summarization tries the configured model, then the run's, blank and failing answers fall through",
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

TEST_CASE("summarization's before_summarization hooks see the event, a throwing one changes nothing",
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

TEST_CASE("summarization options read DeerFlow's section, bad values name the key",
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

TEST_CASE("summarization's tokens trigger fires at its value and not one token below",
          "[middleware][summarization]") {
    const auto ms = even_history(10);
    REQUIRE(count_tokens(ms) == 100);
    auto at = run_before_model(options_with({{tokens_kind, 100}}, {messages_kind, 2}), ms);
    CHECK(at.compacted());
    CHECK(at.ids() == strings{"h4", "a4"});
    CHECK(at.prompts.size() == 1);
    auto above = run_before_model(options_with({{tokens_kind, 101}}, {messages_kind, 2}), ms);
    CHECK(above.summary().empty());
    CHECK(above.state.messages.size() == 10);
    CHECK(above.prompts.empty());
}

TEST_CASE("summarization's fraction trigger needs the model's input window", "[middleware][summarization]") {
    const auto ms = even_history(10); // 100 tokens
    auto fraction = [&](double value, std::size_t window) {
        return run_before_model(options_with({{fraction_kind, value}}, {messages_kind, 2}, window), ms)
            .compacted();
    };
    CHECK(fraction(0.25, 400));       // 100 >= 100
    CHECK(fraction(0.25, 402));       // 100 >= floor(100.5)
    CHECK_FALSE(fraction(0.25, 404)); // 100 < 101
    // Unknown window (0): off, however low the fraction.
    CHECK_FALSE(fraction(0.25, 0));
    CHECK_FALSE(fraction(0.0, 0));
    CHECK(fraction(0.0, 400));
}

TEST_CASE("summarization's list of triggers fires when any one does", "[middleware][summarization]") {
    const auto ms = even_history(10); // 10 messages, 100 tokens
    auto fires = [&](std::vector<context_size> trigger, std::size_t window = 0) {
        return run_before_model(options_with(std::move(trigger), {messages_kind, 2}, window), ms).compacted();
    };
    CHECK(fires({{messages_kind, 50}, {tokens_kind, 1000}, {fraction_kind, 0.25}}, 400)); // the fraction
    CHECK(fires({{messages_kind, 10}, {tokens_kind, 1000}}));                             // the count
    CHECK(fires({{messages_kind, 50}, {tokens_kind, 100}}));                              // the tokens
    CHECK_FALSE(fires({{messages_kind, 11}, {tokens_kind, 101}, {fraction_kind, 0.25}}, 404));
}

TEST_CASE("summarization counts the previous summary toward the triggers, as a message named summary",
          "[middleware][summarization]") {
    const auto ms = even_history(10); // 10 messages, 100 tokens
    const std::string previous = "an earlier summary..";
    message as_message = human_message(previous);
    as_message.name = "summary";
    REQUIRE(token_counter{}.estimate(as_message) == 10); // 3 + 2 for the name + 5
    auto fires = [&](context_size trigger, std::string prev) {
        return run_before_model(options_with({trigger}, {messages_kind, 2}), ms, std::move(prev)).compacted();
    };
    CHECK_FALSE(fires({tokens_kind, 110}, ""));
    CHECK(fires({tokens_kind, 110}, previous));
    CHECK_FALSE(fires({tokens_kind, 111}, previous));
    CHECK_FALSE(fires({messages_kind, 11}, ""));
    CHECK(fires({messages_kind, 11}, previous));
}

TEST_CASE("summarization keeps the longest tail within a token or fraction budget",
          "[middleware][summarization]") {
    const auto ms = even_history(10);
    auto kept = [&](context_size keep, std::size_t window = 0) {
        auto r = run_before_model(options_with({{messages_kind, 10}}, keep, window), ms);
        return r.ids();
    };
    CHECK(kept({tokens_kind, 35}) == strings{"a3", "h4", "a4"});
    CHECK(kept({tokens_kind, 40}) == strings{"h3", "a3", "h4", "a4"});
    CHECK(kept({fraction_kind, 0.25}, 140) == strings{"a3", "h4", "a4"});       // 35 tokens
    CHECK(kept({fraction_kind, 0.25}, 160) == strings{"h3", "a3", "h4", "a4"}); // 40 tokens
    // What is not kept is summarised.
    auto r = run_before_model(options_with({{messages_kind, 10}}, {tokens_kind, 35}), ms);
    CHECK(r.section("new_messages") == rendered({"h0", "a0", "h1", "a1", "h2", "a2", "h3"}));
    // A fraction with an unknown window keeps everything: no compaction.
    auto unknown = run_before_model(options_with({{messages_kind, 10}}, {fraction_kind, 0.5}), ms);
    CHECK(unknown.summary().empty());
    CHECK(unknown.state.messages.size() == 10);
    CHECK(unknown.prompts.empty());
}

TEST_CASE("summarization's token and fraction budgets never cut between an ai message and its results",
          "[middleware][summarization]") {
    std::vector<message> ms = even_history(3); // h0 a0 h1
    message call = test::calls({test::call("c1", "echo"), test::call("c2", "echo")});
    call.id = "call";
    message r1 = tool_message("c1", "echo", "first result");
    r1.id = "r1";
    message r2 = tool_message("c2", "echo", "second result");
    r2.id = "r2";
    message done = ai_message("done");
    done.id = "done";
    ms.insert(ms.end(), {call, r1, r2, done});
    const token_counter tc;
    // Budgets whose tail would start at r2, then at r1.
    const std::uint64_t at_r2 = tc.estimate(r2) + tc.estimate(done);
    const std::uint64_t at_r1 = at_r2 + tc.estimate(r1);
    REQUIRE(at_r1 + tc.estimate(call) > at_r1);               // the call itself does not fit
    const strings expected{"h1", "call", "r1", "r2", "done"}; // h1 rescued as the latest user message
    for (std::uint64_t budget : {at_r2, at_r1}) {
        INFO("budget " << budget);
        auto by_tokens = run_before_model(
            options_with({{messages_kind, 7}}, {tokens_kind, static_cast<double>(budget)}), ms);
        CHECK(by_tokens.ids() == expected);
        auto by_fraction =
            run_before_model(options_with({{messages_kind, 7}}, {fraction_kind, 0.25}, budget * 4), ms);
        CHECK(by_fraction.ids() == expected);
        CHECK(by_fraction.section("new_messages") == rendered({"h0", "a0"}));
    }
}

// The prompt's own text with `{messages}` as the template: the section tags
// (what trim_tokens_to_summarize leaves for the content is the rest).
std::uint64_t tags_tokens(bool with_previous) {
    std::string tags = "<new_messages>\n\n</new_messages>";
    if (with_previous) tags = "<existing_summary>\n\n</existing_summary>\n\n" + tags;
    return token_counter{}.estimate(tags);
}

summarization_options bare_prompt(std::optional<std::size_t> trim) {
    auto o = options_with({{messages_kind, 10}}, {messages_kind, 2});
    o.summary_prompt = "{messages}";
    o.trim_tokens_to_summarize = trim;
    return o;
}

TEST_CASE("summarization trims what it summarises to trim_tokens_to_summarize",
          "[middleware][summarization]") {
    // 10 messages, the last two kept: h0..a3 (80 tokens) are summarised.
    const auto ms = even_history(10);
    const std::size_t tags = tags_tokens(false);
    REQUIRE(tags == 8);
    auto shown = [&](std::optional<std::size_t> trim) {
        auto r = run_before_model(bare_prompt(trim), ms);
        REQUIRE(r.compacted());
        CHECK(r.prompts.at(0).starts_with("<new_messages>\n"));
        return r.section("new_messages");
    };
    // The newest messages that fit what the tags leave, starting on a human message.
    CHECK(shown(tags + 40) == rendered({"h2", "a2", "h3", "a3"}));
    CHECK(shown(tags + 39) ==
          rendered({"h3", "a3"})); // a2 fits, but the shown part starts on a human message
    // Nothing fits: the last message alone.
    CHECK(shown(tags + 9) == rendered({"a3"}));
    CHECK(shown(tags) == rendered({"a3"}));
    // No budget: everything.
    CHECK(shown(std::nullopt) == rendered({"h0", "a0", "h1", "a1", "h2", "a2", "h3", "a3"}));
    // The default prompt's own text counts too.
    std::string own(summarization::default_summary_prompt);
    own.replace(own.find("{messages}"), 10, "<new_messages>\n\n</new_messages>");
    auto o = options_with({{messages_kind, 10}}, {messages_kind, 2});
    o.trim_tokens_to_summarize = token_counter{}.estimate(own) + 40;
    auto with_default = run_before_model(o, ms);
    REQUIRE(with_default.compacted());
    CHECK(with_default.section("new_messages") == rendered({"h2", "a2", "h3", "a3"}));
}

TEST_CASE("summarization splits the budget with a previous summary: its end, the new messages' start",
          "[middleware][summarization]") {
    const std::size_t tags = tags_tokens(true);
    SECTION("half of what the tags leave, each") {
        const std::string previous = "OLD-START " + std::string(80, 'x') + " OLD-END";
        auto r = run_before_model(bare_prompt(tags + 40), even_history(10), previous); // 80 characters each
        REQUIRE(r.compacted());
        CHECK(r.section("existing_summary") == previous.substr(previous.size() - 80));
        CHECK(r.section("new_messages") == rendered({"h2", "a2", "h3", "a3"}).substr(0, 80));
    }
    SECTION("no budget: both whole") {
        const std::string previous = std::string(500, 'p');
        auto r = run_before_model(bare_prompt(std::nullopt), even_history(10), previous);
        CHECK(r.section("existing_summary") == previous);
        CHECK(r.section("new_messages") == rendered({"h0", "a0", "h1", "a1", "h2", "a2", "h3", "a3"}));
    }
    SECTION("a cut never splits a character") {
        // Two-byte characters: both cuts would fall in the middle of one.
        message first = human_message(repeat("\xc3\xa9", 60));
        first.id = "u0";
        message answer = ai_message("ok");
        answer.id = "a0";
        message latest = human_message("next");
        latest.id = "u1";
        auto o = bare_prompt(tags + 40);
        o.trigger = {{messages_kind, 3}};
        o.keep = {messages_kind, 1};
        auto r = run_before_model(o, {first, answer, latest}, repeat("\xc3\xa9", 50) + "x");
        REQUIRE(r.compacted());
        CHECK(r.section("existing_summary") == repeat("\xc3\xa9", 39) + "x");
        CHECK(r.section("new_messages") == "Human: " + repeat("\xc3\xa9", 36));
    }
}

TEST_CASE("summarization's canned summaries: no history, and a prompt that cannot be built",
          "[middleware][summarization]") {
    CHECK(summarization::no_history_summary == "No previous conversation history.");
    CHECK(summarization::too_long_summary == "Previous conversation was too long to summarize.");
    SECTION("the prompt's own text over the budget: the canned text is the summary, no model call") {
        auto o = bare_prompt(tags_tokens(false) - 1);
        auto r = run_before_model(o, even_history(10));
        CHECK(r.summary() == summarization::too_long_summary);
        CHECK(r.ids() == strings{"h4", "a4"});
        CHECK(r.prompts.empty());
        // A long template over a budget that would fit the messages alone.
        o.summary_prompt = std::string(400, 'P') + "{messages}";
        o.trim_tokens_to_summarize = 100;
        CHECK(run_before_model(o, even_history(10)).summary() == summarization::too_long_summary);
        // With room for it, the model is asked.
        o.trim_tokens_to_summarize = 200;
        CHECK(run_before_model(o, even_history(10)).compacted());
        o.trim_tokens_to_summarize.reset();
        CHECK(run_before_model(o, even_history(10)).compacted());
    }
    SECTION("nothing to summarise: the canned text, no model call") {
        summarization s(keep_messages(2, 1));
        scripted_model run_model({});
        runtime rt;
        rt.model = model_ref(run_model);
        auto made = detail::hook_runner().run(s.summarize({}, "previous", rt));
        CHECK(made == std::string(summarization::no_history_summary));
        CHECK(run_model.requests().empty());
    }
    SECTION("in the middleware, nothing left after the rescues is no compaction at all") {
        message reminder = system_message("<system-reminder>date</system-reminder>");
        reminder.id = "date";
        reminder.metadata["dynamic_context_reminder"] = true;
        message latest = human_message("latest user message");
        latest.id = "u";
        auto r = run_before_model(keep_messages(2, 1), {reminder, latest}, "EXISTING");
        CHECK(r.summary() == "EXISTING");
        CHECK(r.ids() == strings{"date", "u"});
        CHECK(r.prompts.empty());
    }
}
