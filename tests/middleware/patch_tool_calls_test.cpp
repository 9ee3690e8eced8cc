// patch_tool_calls: answers for the calls of the stored history that nothing answered.
#include "../agent/support.hpp"

#include <agentware/middleware/patch_tool_calls.hpp>

#include <catch2/catch.hpp>

using namespace agentware;

TEST_CASE("patch_tool_calls leaves an answered history alone", "[middleware][patch_tool_calls]") {
    std::vector<message> h{human_message("hi"), test::calls({test::call("a", "echo")}),
                           tool_message("a", "echo", "ok"), ai_message("done")};
    CHECK_FALSE(patch_tool_calls::patch(h));
    CHECK_FALSE(patch_tool_calls::patch({}));
}

TEST_CASE("a call nobody answered is cancelled right after its ai message",
          "[middleware][patch_tool_calls]") {
    std::vector<message> h{human_message("hi"),
                           test::calls({test::call("a", "echo"), test::call("b", "search")}),
                           tool_message("b", "search", "found"), human_message("never mind")};
    auto p = patch_tool_calls::patch(h);
    REQUIRE(p);
    REQUIRE(p->size() == 5);
    CHECK((*p)[2].is_tool());
    CHECK((*p)[2].tool_call_id() == "a");
    CHECK((*p)[2].name == "echo");
    CHECK((*p)[2].text() ==
          "Tool call echo with id a was cancelled - another message came in before it could be completed.");
    CHECK_FALSE((*p)[2].id.empty());
    CHECK((*p)[3].tool_call_id() == "b"); // the real answer stays where it was
    CHECK((*p)[4].text() == "never mind");
}

TEST_CASE("a call with malformed arguments gets the malformed text", "[middleware][patch_tool_calls]") {
    message ai = ai_message("");
    ai.edit_invalid_tool_calls().push_back(
        invalid_tool_call{"w1", "write_file", "{\"content\": \"abc", "EOF"});
    std::vector<message> h{human_message("write it"), ai};
    auto p = patch_tool_calls::patch(h);
    REQUIRE(p);
    REQUIRE(p->size() == 3);
    CHECK((*p)[2].text() ==
          "Tool call write_file with id w1 could not be executed - arguments were malformed or truncated.");
}

TEST_CASE("patch_tool_calls patches the stored history before the run", "[middleware][patch_tool_calls]") {
    scripted_model model({ai_message("fine")});
    auto a = make_agent(model, tool_set{}, patch_tool_calls{});
    decltype(a)::state_type state;
    state.messages = {human_message("hi"), test::calls({test::call("x", "echo")})};
    REQUIRE(a.run(state, "again").ok());
    REQUIRE(state.messages.size() == 5);
    CHECK(state.messages[2].tool_call_id() == "x");
    CHECK(model.requests().at(0).messages.size() == 4); // the model saw the cancelled answer
}
