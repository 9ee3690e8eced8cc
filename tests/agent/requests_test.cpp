// The requests the wrap hooks receive (agent/requests.hpp): a model request the hook may change
// without touching the stored messages, a tool request that borrows the stored call.
#include <agentware/agent/requests.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

using namespace agentware;
using strings = std::vector<std::string>;

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

TEST_CASE("tool_response{msg}, as docs/hooks.md writes it, leaves nothing uninitialised",
          "[agent][hooks][wrap]") {
    // CI builds this under -Wall -Wextra -Werror (clang): a member without a
    // default would be a missing-field-initializer error here.
    const tool_response r{tool_message("c1", "echo", "refused")};
    CHECK(r.msg.text() == "refused");
    CHECK(r.update.empty());
    CHECK_FALSE(r.end_run);
}
