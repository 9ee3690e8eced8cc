// terminal_response: an empty answer after tool use is retried once with a
// hidden reminder, then replaced by the fallback text.
#include "../agent/support.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/middleware/terminal_response.hpp>
#include <agentware/model/scripted_model.hpp>

#include <catch2/catch.hpp>

using namespace agentware;

namespace {
message use_tool() { return test::calls({test::call("c1", "echo", R"({"text":"x"})")}); }
bool has_reminder(const recorded_request& r) {
    return !r.messages.empty() && r.messages.back().text() == terminal_response::reminder_text &&
           r.messages.back().metadata.contains("hide_from_ui");
}
} // namespace

TEST_CASE("an empty final answer after a tool is retried once with a reminder",
          "[middleware][terminal_response]") {
    scripted_model model({use_tool(), ai_message(""), ai_message("Here is the result.")});
    auto a = make_agent(model, tool_set(test::echo_tool()), terminal_response{});
    auto r = a.invoke("go");
    CHECK(r.answer() == "Here is the result.");
    auto requests = model.requests();
    REQUIRE(requests.size() == 3);
    CHECK(!has_reminder(requests[1]));
    CHECK(has_reminder(requests[2]));
    // the empty answer was removed, the reminder never stored
    CHECK(test::roles(r.state.messages) == std::vector<std::string>{"human", "ai", "tool", "ai"});
}

TEST_CASE("a second empty answer becomes the fallback text", "[middleware][terminal_response]") {
    scripted_model model({use_tool(), ai_message("  "), ai_message("")});
    auto a = make_agent(model, tool_set(test::echo_tool()), terminal_response{});
    auto r = a.invoke("go");
    const message& last = r.state.messages.back();
    CHECK(last.text() ==
          "The model completed the tool run but returned no final response, including after one "
          "automatic retry. Please try again or use a different model.");
    CHECK(last.metadata.at("deerflow_error_fallback") == true);
    CHECK(last.metadata.at("error_reason") == "Model returned an empty terminal response");
    CHECK(model.calls() == 3);

    // the next run may retry again
    a.model() = scripted_model({use_tool(), ai_message(""), ai_message("fine")});
    CHECK(a.invoke("again").answer() == "fine");
}

TEST_CASE("empty answers without tool use, or cut by length, are left alone",
          "[middleware][terminal_response]") {
    scripted_model model({ai_message("")});
    auto a = make_agent(model, tool_set{}, terminal_response{});
    CHECK(a.invoke("hi").state.messages.back().text().empty());
    CHECK(model.calls() == 1);

    message cut = ai_message("");
    cut.provider.set_finish_reason("length");
    scripted_model model2({use_tool(), cut});
    auto b = make_agent(model2, tool_set(test::echo_tool()), terminal_response{});
    CHECK(b.invoke("go").state.messages.back().text().empty());
    CHECK(model2.calls() == 2);

    // a hidden human message is not the user's turn
    message hidden = human_message("hidden note");
    hidden.metadata["hide_from_ui"] = true;
    std::vector<message> history{human_message("q"), use_tool(), tool_message("c1", "echo", "x"), hidden};
    CHECK(terminal_response::tool_ran_this_turn(history));
    history.push_back(human_message("new question"));
    CHECK(!terminal_response::tool_ran_this_turn(history));
}
