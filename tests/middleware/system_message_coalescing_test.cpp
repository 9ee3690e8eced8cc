// system_message_coalescing: system messages inside the history merged into
// the request's system prompt, the last date reminder only, request only.
#include "../agent/support.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/middleware/system_message_coalescing.hpp>
#include <agentware/model/scripted_model.hpp>

#include <catch2/catch.hpp>

using namespace agentware;

namespace {
message reminder(std::string text) {
    message m = system_message(std::move(text));
    m.metadata["dynamic_context_reminder"] = true;
    return m;
}
} // namespace

TEST_CASE("system messages in the history join the system prompt, in order",
          "[middleware][system_message_coalescing]") {
    std::string prompt = "You are helpful.";
    std::vector<message> ms{reminder("<date>Mon</date>"),  human_message("hi"),          ai_message("hello"),
                            system_message("## Contract"), reminder("<date>Tue</date>"), system_message(""),
                            human_message("and now?")};
    CHECK(system_message_coalescing::coalesce(prompt, ms));
    CHECK(prompt == "You are helpful.\n\n## Contract\n\n<date>Tue</date>");
    REQUIRE(ms.size() == 3);
    CHECK(test::roles(ms) == std::vector<std::string>{"human", "ai", "human"});

    std::string none = "p";
    std::vector<message> plain{human_message("x")};
    CHECK(!system_message_coalescing::coalesce(none, plain));
    CHECK(none == "p");

    std::string empty;
    std::vector<message> only{system_message("first"), human_message("x")};
    system_message_coalescing::coalesce(empty, only);
    CHECK(empty == "first");
}

TEST_CASE("the merge is request-only", "[middleware][system_message_coalescing]") {
    scripted_model model({ai_message("ok")});
    agent_options opts;
    opts.system_prompt = "Base.";
    agent a(model, tool_set{}, pipeline<system_message_coalescing>{}, opts);
    auto r = a.invoke(std::vector<message>{system_message("Extra rule."), human_message("hi")});
    auto req = model.requests().at(0);
    CHECK(req.system_prompt == "Base.\n\nExtra rule.");
    REQUIRE(req.messages.size() == 1);
    CHECK(req.messages[0].is_human());
    CHECK(r.state.messages.front().is_system()); // the stored history keeps it
    CHECK(a.options().system_prompt == "Base.");
}
