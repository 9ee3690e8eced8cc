// The agent loop's use of the pipeline: hook order across rounds, jumps,
// request changes in wrap_model_call, and tool wrappers.
#include "support.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <sstream>

using namespace agentware;
using strings = std::vector<std::string>;

namespace {

struct trace_field {
    static constexpr std::string_view name = "trace";
    using value_type = std::vector<std::string>;
};

// Records every node hook; jumps when told to.
template <char Name>
struct tracer {
    using state_fields = fields<trace_field>;
    std::optional<jump_to> before_model_jump, after_model_jump, before_agent_jump;
    int before_model_jumps_left = 1, after_model_jumps_left = 1;

    static void log(auto& s, const char* hook) {
        get<trace_field>(s).push_back(std::string(1, Name) + "." + hook);
    }
    hook_result before_agent(auto& s, runtime&) {
        log(s, "before_agent");
        return before_agent_jump;
    }
    hook_result before_model(auto& s, runtime&) {
        log(s, "before_model");
        if (before_model_jump && before_model_jumps_left-- > 0) return before_model_jump;
        return {};
    }
    hook_result after_model(auto& s, runtime&) {
        log(s, "after_model");
        if (after_model_jump && after_model_jumps_left-- > 0) return after_model_jump;
        return {};
    }
    void after_agent(auto& s, runtime&) { log(s, "after_agent"); }
};

} // namespace

TEST_CASE("hooks run in order across the rounds of a run", "[agent][hooks]") {
    scripted_model model({test::calls({test::call("c1", "echo", R"({"text":"x"})")}), ai_message("done")});
    auto a = make_agent(model, tool_set(test::echo_tool()), tracer<'a'>{}, tracer<'b'>{});
    auto r = a.invoke("go");
    REQUIRE(r.ok());
    CHECK(r.state.get<trace_field>() ==
          strings{"a.before_agent", "b.before_agent",                                   // once
                  "a.before_model", "b.before_model", "b.after_model", "a.after_model", // round 1
                  "a.before_model", "b.before_model", "b.after_model", "a.after_model", // round 2
                  "b.after_agent", "a.after_agent"});                                   // once
}

TEST_CASE("a jump to end from before_model skips the model but still runs after_agent",
          "[agent][hooks][jump]") {
    scripted_model model({ai_message("never")});
    tracer<'a'> a_mw;
    a_mw.before_model_jump = jump_to::end;
    auto a = make_agent(model, tool_set{}, a_mw, tracer<'b'>{});
    auto r = a.invoke("go");
    CHECK(r.reason == stop_reason::ended_by_hook);
    CHECK(model.calls() == 0);
    CHECK(r.state.get<trace_field>() ==
          strings{"a.before_agent", "b.before_agent", "a.before_model", "b.after_agent", "a.after_agent"});
}

TEST_CASE("a jump to model from after_model goes back through before_model", "[agent][hooks][jump]") {
    scripted_model model({ai_message("first try"), ai_message("second try")});
    tracer<'b'> b_mw;
    b_mw.after_model_jump = jump_to::model;
    auto a = make_agent(model, tool_set{}, tracer<'a'>{}, b_mw);
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::finished);
    CHECK(model.calls() == 2);
    CHECK(r.answer() == "second try");
    CHECK(r.state.get<trace_field>() == strings{"a.before_agent", "b.before_agent", "a.before_model",
                                                "b.before_model",
                                                "b.after_model", // b jumped: a.after_model skipped
                                                "a.before_model", "b.before_model", "b.after_model",
                                                "a.after_model", "b.after_agent", "a.after_agent"});
}

TEST_CASE("a jump to end from before_agent skips the loop", "[agent][hooks][jump]") {
    scripted_model model({ai_message("never")});
    tracer<'a'> a_mw;
    a_mw.before_agent_jump = jump_to::end;
    auto a = make_agent(model, tool_set{}, a_mw);
    auto r = a.invoke("go");
    CHECK(r.reason == stop_reason::ended_by_hook);
    CHECK(model.calls() == 0);
    CHECK(r.state.get<trace_field>() == strings{"a.before_agent", "a.after_agent"});
}

namespace {
// Adds a reminder to this call's messages only, the way DeerFlow's middlewares inject context.
struct reminder {
    auto wrap_model_call(auto& req, auto&& next) {
        req.messages.edit().push_back(human_message("reminder: be brief"));
        req.system_prompt += " (brief)";
        return next(req);
    }
};
// Short-circuits a tool by name and annotates the others' results.
struct tool_guard {
    tool_response wrap_tool_call(auto& req, auto&& next) {
        if (req.call->name == "forbidden")
            return tool_response{
                tool_message(req.call->id, req.call->name, "denied", tool_status::error), {}, false};
        tool_response r = next(req);
        r.msg.content.push_back(text_block(" [checked]"));
        return r;
    }
};
} // namespace

TEST_CASE("wrap_model_call changes the request, never the stored messages", "[agent][hooks][wrap]") {
    scripted_model model({ai_message("ok")});
    agent a(model, tool_set{}, pipeline<reminder>{}, agent_options{"Be nice", {}, 2, true});
    auto r = a.invoke("hello");
    REQUIRE(r.ok());
    auto reqs = model.requests();
    REQUIRE(reqs.size() == 1);
    CHECK(reqs[0].system_prompt == "Be nice (brief)");
    CHECK(a.options().system_prompt == "Be nice"); // the hook edited the request's copy
    REQUIRE(reqs[0].messages.size() == 2);
    CHECK(reqs[0].messages[1].text() == "reminder: be brief");
    CHECK(test::roles(r.state.messages) == strings{"human", "ai"});
}

TEST_CASE("wrap_tool_call can refuse a call or change its result", "[agent][hooks][wrap]") {
    scripted_model model(
        {test::calls({test::call("c1", "forbidden"), test::call("c2", "echo", R"({"text":"hi"})")}),
         ai_message("ok")});
    auto forbidden =
        make_tool("forbidden", "Must not run.", boost::json::object{},
                  [](const boost::json::object&) -> std::string { throw std::logic_error("ran"); });
    auto a = make_agent(model, tool_set(forbidden, test::echo_tool()), tool_guard{});
    auto r = a.invoke("go");
    REQUIRE(r.ok());
    CHECK(r.state.messages[2].text() == "denied");
    CHECK(r.state.messages[3].text() == "hi [checked]");
}

namespace {
// Rewrites what the echo tool receives; notes whether the call came borrowed.
struct shouting {
    std::shared_ptr<std::vector<bool>> borrowed = std::make_shared<std::vector<bool>>();
    tool_response wrap_tool_call(auto& req, auto&& next) {
        borrowed->push_back(req.call.borrowed());
        std::string loud = std::string(req.call->args.at("text").as_string()) + "!";
        req.call.edit().args["text"] = loud;
        return next(req);
    }
};
} // namespace

TEST_CASE("wrap_tool_call borrows the stored call and may change what the tool receives",
          "[agent][hooks][wrap]") {
    scripted_model model({test::calls({test::call("c1", "echo", R"({"text":"hi"})")}), ai_message("ok")});
    shouting mw;
    auto a = make_agent(model, tool_set(test::echo_tool()), mw);
    auto r = a.invoke("go");
    REQUIRE(r.ok());
    CHECK(*mw.borrowed == std::vector<bool>{true}); // no copy until the edit
    CHECK(r.state.messages[2].text() == "hi!");
    // The history keeps the call as the model made it.
    CHECK(r.state.messages[1].tool_calls.at(0).args.at("text").as_string() == "hi");
}

TEST_CASE("cow borrows until the first edit, then owns a copy its copies share", "[agent][requests]") {
    const tool_call stored{"c1", "echo", boost::json::object{{"text", "a"}}};
    cow<tool_call> c(stored);
    CHECK(c.borrowed());
    CHECK(&*c == &stored);
    c.edit().name = "other";
    CHECK_FALSE(c.borrowed());
    CHECK(stored.name == "echo");
    CHECK(c->name == "other");
    cow<tool_call> shared = c;
    CHECK(&*shared == &*c);
    shared.edit().name = "third"; // shared: copies again, the first keeps its value
    CHECK(c->name == "other");
    CHECK(shared->name == "third");
    cow<tool_call> empty;
    CHECK(empty->name.empty());
    cow<tool_call> owned = tool_call{"c2", "x", {}};
    CHECK_FALSE(owned.borrowed());
    CHECK(owned->id == "c2");
}

TEST_CASE("cow_string borrows a prompt until it is changed, and reads like a string", "[agent][requests]") {
    const std::string prompt(4096, 'p');
    cow_string s(prompt);
    CHECK(s.borrowed());
    CHECK(s.data() == prompt.data());
    CHECK(s == prompt);
    cow_string copy = s; // copying a request copies no text
    CHECK(copy.data() == prompt.data());
    s += " and more";
    CHECK_FALSE(s.borrowed());
    CHECK(s.size() == prompt.size() + 9);
    CHECK(std::string_view(s).ends_with("p and more"));
    CHECK(copy.data() == prompt.data());
    cow_string assigned;
    CHECK(assigned.empty());
    assigned = prompt; // assigning copies: the string assigned may go away
    CHECK_FALSE(assigned.borrowed());
    CHECK(assigned.data() != prompt.data());
    CHECK(assigned == prompt);
    assigned = "short";
    CHECK(assigned == "short");
    CHECK("short" == assigned);
    CHECK(assigned < "shorter");
    const std::string& as_string = assigned;
    CHECK(as_string.size() == 5);
    CHECK(fmt::format("[{}]", assigned) == "[short]"); // formats as its text
    std::ostringstream os;
    os << assigned;
    CHECK(os.str() == "short");
    CHECK(assigned == cow_string("short"));
    CHECK(assigned < cow_string("shorter"));
    assigned = {}; // clears, as it did when the prompt was a std::string
    CHECK(assigned.empty());
    assigned = "again";
    assigned.clear();
    CHECK(assigned.empty());
    cow_string from = std::string("moved");
    cow_string to = std::move(from);
    CHECK(to == "moved");
    CHECK(from.empty()); // NOLINT: a moved-from cow reads empty, never the value it handed over
    CHECK_FALSE(from.borrowed());
}

namespace {
// Notes whether each round's request still borrows the agent's prompt.
struct prompt_watcher {
    std::shared_ptr<std::vector<bool>> borrowed = std::make_shared<std::vector<bool>>();
    auto wrap_model_call(auto& req, auto&& next) {
        borrowed->push_back(req.system_prompt.borrowed());
        return next(req);
    }
};
} // namespace

TEST_CASE("each round's request borrows the agent's system prompt instead of copying it",
          "[agent][hooks][wrap]") {
    scripted_model model({test::calls({test::call("c1", "echo", R"({"text":"hi"})")}), ai_message("ok")});
    prompt_watcher mw;
    agent_options options;
    options.system_prompt = std::string(8192, 's');
    agent a(model, tool_set(test::echo_tool()), pipeline<prompt_watcher>(mw), options);
    auto r = a.invoke("go");
    REQUIRE(r.ok());
    CHECK(*mw.borrowed == std::vector<bool>{true, true});
    auto reqs = model.requests();
    REQUIRE(reqs.size() == 2);
    CHECK(reqs[1].system_prompt == options.system_prompt);
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
