#include "trace.hpp"

#include <catch2/catch.hpp>

#include <optional>

using test::recorder;
using strings = std::vector<std::string>;

TEST_CASE("an empty optional slot is skipped and an engaged one behaves like the middleware",
          "[pipeline][optional]") {
    agentware::pipeline<recorder<'a'>, std::optional<recorder<'b'>>, recorder<'c'>> p{
        recorder<'a'>{}, std::optional<recorder<'b'>>{}, recorder<'c'>{}};
    test::state s;
    test::runtime rt;
    CHECK_FALSE(p.enabled<recorder<'b'>>());
    CHECK(p.get<recorder<'b'>>() == nullptr);
    p.before_model(s, rt);
    p.after_model(s, rt);
    test::request req;
    p.wrap_model_call(req, [](test::request& r) { return test::response{r.text}; });
    CHECK(s.trace == strings{"a.before_model", "c.before_model", "c.after_model", "a.after_model"});
    CHECK(req.text == "ac");

    p.slot<recorder<'b'>>().emplace();
    CHECK(p.enabled<recorder<'b'>>());
    s.trace.clear();
    p.before_model(s, rt);
    p.after_model(s, rt);
    test::request req2;
    p.wrap_model_call(req2, [](test::request& r) { return test::response{r.text}; });
    CHECK(s.trace == strings{"a.before_model", "b.before_model", "c.before_model", "c.after_model",
                             "b.after_model", "a.after_model"});
    CHECK(req2.text == "abc");

    p.slot<recorder<'b'>>().reset();
    s.trace.clear();
    p.before_agent(s, rt);
    CHECK(s.trace == strings{"a.before_agent", "c.before_agent"});
}

namespace {
struct configurable {
    int limit = 3;
    void after_model(test::state& s) { s.counter += limit; }
};
} // namespace

TEST_CASE("slots are reached by middleware type, and the constructor takes them in list order",
          "[pipeline][optional]") {
    agentware::pipeline<configurable, std::optional<recorder<'x'>>> p{configurable{7}, std::nullopt};
    CHECK(p.get<configurable>()->limit == 7);
    p.slot<configurable>().limit = 9;
    test::state s;
    test::runtime rt;
    p.after_model(s, rt);
    CHECK(s.counter == 9);
    STATIC_REQUIRE(decltype(p)::size == 2);
    STATIC_REQUIRE(decltype(p)::contains<configurable>);
    STATIC_REQUIRE_FALSE(decltype(p)::contains<recorder<'y'>>);
    STATIC_REQUIRE(std::is_same_v<decltype(p.slot<recorder<'x'>>()), std::optional<recorder<'x'>>&>);
    STATIC_REQUIRE(
        std::is_same_v<decltype(p)::middleware_types, agentware::type_list<configurable, recorder<'x'>>>);
}

namespace {
struct title_field {
    static constexpr std::string_view name = "title";
    using value_type = std::string;
};
struct artifacts_field {
    static constexpr std::string_view name = "artifacts";
    using value_type = std::vector<std::string>;
    static void merge(value_type& current, value_type&& update) {
        for (auto& a : update)
            if (std::find(current.begin(), current.end(), a) == current.end())
                current.push_back(std::move(a));
    }
};
struct declares_title {
    using state_fields = agentware::fields<title_field>;
    void after_model(test::state&);
};
struct declares_both {
    using state_fields = agentware::fields<artifacts_field, title_field>;
    void before_model(test::state&);
};
} // namespace

TEST_CASE("the pipeline unites the state fields its middlewares declare", "[pipeline][state]") {
    using p = agentware::pipeline<declares_title, recorder<'r'>, std::optional<declares_both>>;
    STATIC_REQUIRE(std::is_same_v<p::state_fields, agentware::type_list<title_field, artifacts_field>>);

    std::vector<std::string> arts{"a", "b"};
    agentware::merge_field<artifacts_field>(arts, {"b", "c"});
    CHECK(arts == std::vector<std::string>{"a", "b", "c"});
    std::string title = "old";
    agentware::merge_field<title_field>(title, "new");
    CHECK(title == "new");
}
