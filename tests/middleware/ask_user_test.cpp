// ask_user: the model's question answered by an in-process handler.
#include <agentware/middleware/ask_user.hpp>

#include "human_in_the_loop_support.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <string_view>

using namespace agentware;

TEST_CASE("ask_user with an in-process handler waits for the answer without pausing",
          "[middleware][ask_user]") {
    scripted_model model(
        {test::calls({test::call("q1", "ask_user", R"({"question":"Color?"})")}), ai_message("blue it is")});
    ask_user_options o;
    o.handler = [](std::string_view q) { return "answer to " + std::string(q) + ": blue"; };
    auto a = make_agent(model, tool_set{}, ask_user(o));
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::finished);
    CHECK(hitl_test::answer_to(r.state.messages, "q1")->text() == "answer to Color?: blue");
}
