#include "trace.hpp"

#include <catch2/catch.hpp>

namespace {
struct just_state {
    void before_model(test::state&);
};
struct state_and_runtime {
    agentware::hook_result after_agent(test::state&, test::runtime&);
};
struct templated_wrap {
    auto wrap_tool_call(auto& request, auto&& next) { return next(request); }
};
struct wrong_params {
    void before_model(int);
};
struct data_member_named_like_a_hook {
    int after_model = 0;
};
struct unrelated {
    void run();
};
struct final_type final {
    void before_model(test::state&);
};
using next_fn = test::response (*)(test::request&);
} // namespace

TEST_CASE("declares_* sees a member with the hook's name, whatever its signature", "[concepts]") {
    STATIC_REQUIRE(agentware::declares_before_model<just_state>);
    STATIC_REQUIRE(agentware::declares_before_model<wrong_params>);
    STATIC_REQUIRE(agentware::declares_after_model<data_member_named_like_a_hook>);
    STATIC_REQUIRE(agentware::declares_wrap_tool_call<templated_wrap>);
    STATIC_REQUIRE_FALSE(agentware::declares_after_model<just_state>);
    STATIC_REQUIRE_FALSE(agentware::declares_before_agent<unrelated>);
}

TEST_CASE("has_* checks that the pipeline can call the hook", "[concepts]") {
    STATIC_REQUIRE(agentware::has_before_model<just_state, test::state, test::runtime>);
    STATIC_REQUIRE(agentware::has_after_agent<state_and_runtime, test::state, test::runtime>);
    STATIC_REQUIRE(agentware::has_wrap_tool_call<templated_wrap, test::request, next_fn>);
    STATIC_REQUIRE_FALSE(agentware::has_before_model<wrong_params, test::state, test::runtime>);
    STATIC_REQUIRE_FALSE(agentware::has_after_agent<state_and_runtime, int, test::runtime>);
    STATIC_REQUIRE_FALSE(agentware::has_wrap_model_call<templated_wrap, test::request, next_fn>);
}

TEST_CASE("a middleware is a non-final class that declares at least one hook", "[concepts]") {
    STATIC_REQUIRE(agentware::middleware<just_state>);
    STATIC_REQUIRE(agentware::middleware<templated_wrap>);
    STATIC_REQUIRE(agentware::middleware<test::recorder<'z'>>);
    STATIC_REQUIRE_FALSE(agentware::middleware<unrelated>);
    STATIC_REQUIRE_FALSE(agentware::middleware<int>);
    STATIC_REQUIRE_FALSE(agentware::middleware<final_type>);
}

TEST_CASE("type lists concatenate and drop repeats in first-seen order", "[concepts][type_list]") {
    using namespace agentware;
    using joined = detail::list_concat_t<type_list<int, char>, type_list<char, double>, type_list<>>;
    STATIC_REQUIRE(std::is_same_v<joined, type_list<int, char, char, double>>);
    STATIC_REQUIRE(std::is_same_v<detail::list_unique_t<joined>, type_list<int, char, double>>);
}
