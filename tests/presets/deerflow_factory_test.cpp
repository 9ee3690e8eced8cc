// create_deerflow_agent: extra middlewares placed next to their anchors; runtime_features.
#include <agentware/presets/deerflow_factory.hpp>

#include "lead_agent_support.hpp"

#include <agentware/model/scripted_model.hpp>
#include <agentware/presets/lead_agent.hpp>

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace lead_agent_test {

using namespace agentware;

struct lead_audit_extra {
    template <class S>
    void before_model(S&) {}
};
struct lead_after_summary {
    using place_after = summarization;
    template <class S>
    void before_model(S&) {}
};
struct lead_before_title {
    using place_before = title;
    template <class S>
    void before_model(S&) {}
};
struct lead_after_extra { // anchored on another extra
    using place_after = lead_after_summary;
    template <class S>
    void before_model(S&) {}
};
struct lead_after_clarification { // pushes clarification off the tail: it is moved back
    using place_after = clarification;
    template <class S>
    void before_model(S&) {}
};

template <class... Ms>
using lead_list = type_list<Ms...>;

TEST_CASE("create_deerflow_agent: extras go next to their anchors", "[lead_agent][create_deerflow_agent]") {
    using P = deerflow_sdk_pipeline<lead_after_extra, lead_audit_extra, lead_before_title, lead_after_summary,
                                    lead_after_clarification>;
    static_assert(std::is_same_v<
                  P::slots,
                  lead_list<std::optional<thread_data>, std::optional<uploads>, std::optional<sandbox>,
                            dangling_tool_call, std::optional<guardrail<allowlist_provider>>,
                            tool_error_handling, std::optional<summarization>, lead_after_summary,
                            lead_after_extra, std::optional<todo>, lead_before_title, std::optional<title>,
                            std::optional<memory>, std::optional<view_image>, std::optional<subagent_limit>,
                            std::optional<loop_detection>, std::optional<token_budget>, lead_audit_extra,
                            lead_after_clarification, std::optional<clarification>>>);

    auto a = create_deerflow_agent(scripted_model({ai_message("hi")}), tool_set{}, runtime_features{},
                                   deerflow_agent_options{}, lead_audit_extra{}, lead_before_title{});
    CHECK(engaged_middleware_names(a.middleware()) ==
          std::vector<std::string>{"thread_data", "uploads", "sandbox", "dangling_tool_call",
                                   "tool_error_handling", "(unnamed)", "loop_detection", "(unnamed)",
                                   "clarification"});
}

TEST_CASE("create_deerflow_agent: runtime_features defaults and validation",
          "[lead_agent][create_deerflow_agent]") {
    runtime_features f;
    CHECK(f.sandbox.on());
    CHECK(f.loop_detection.on());
    CHECK_FALSE(f.memory.on());
    CHECK_FALSE(f.summarization.on());
    CHECK_FALSE(f.subagent);
    CHECK_FALSE(f.vision);
    CHECK_FALSE(f.auto_title.on());
    CHECK_FALSE(f.guardrail.on());
    CHECK_FALSE(f.token_budget.on());
    f.summarization = true;
    CHECK_THROWS_WITH(
        create_deerflow_agent(scripted_model({}), tool_set{}, f),
        "summarization=True requires a custom AgentMiddleware instance (SummarizationMiddleware "
        "needs a model argument)");
    f.summarization = false;
    f.guardrail = true;
    CHECK_THROWS_WITH(
        create_deerflow_agent(scripted_model({}), tool_set{}, f),
        "guardrail=True requires a custom AgentMiddleware instance (no built-in GuardrailMiddleware yet)");
    f.guardrail = guardrail<allowlist_provider>(allowlist_provider{});
    f.sandbox = false;
    f.subagent = true;
    f.vision = true;
    f.loop_detection = false;
    tool_set mine;
    mine.add(named_tool("ask_clarification")); // the user's wins
    auto a = create_deerflow_agent(scripted_model({}), std::move(mine), f);
    CHECK(engaged_middleware_names(a.middleware()) ==
          std::vector<std::string>{"dangling_tool_call", "guardrail", "tool_error_handling", "view_image",
                                   "subagent_limit", "clarification"});
    auto offered = a.offered_tools();
    CHECK(offered->find("task"));
    CHECK(offered->find("view_image"));
    CHECK(offered->size() == 3);
}

} // namespace lead_agent_test
