// state/basic_state.hpp: fields reached by type, updates merged by each field's rule, the JSON form,
// and the fields a tool reads through its runtime.
#include <agentware/state/basic_state.hpp>

#include "../agent/support.hpp"

#include <catch2/catch.hpp>

#include <boost/json/serialize.hpp>

#include <map>

using namespace agentware;

namespace {
struct title {
    static constexpr std::string_view name = "title";
    using value_type = std::string;
};
struct artifacts {
    static constexpr std::string_view name = "artifacts";
    using value_type = std::vector<std::string>;
    static void merge(value_type& cur, value_type&& upd) {
        for (auto& a : upd)
            if (std::find(cur.begin(), cur.end(), a) == cur.end()) cur.push_back(std::move(a));
    }
};
struct counters {
    static constexpr std::string_view name = "counters";
    using value_type = std::map<std::string, int>;
    static value_type initial() { return {{"start", 1}}; }
};
using state_t = basic_state<type_list<title, artifacts, counters>>;
struct absent {
    static constexpr std::string_view name = "absent";
    using value_type = int;
};
} // namespace

TEST_CASE("fields start at their initial value and are reached by type", "[state]") {
    state_t s;
    CHECK(s.get<title>().empty());
    CHECK(s.get<counters>().at("start") == 1);
    s.get<title>() = "Report";
    CHECK(s.get<title>() == "Report");
    STATIC_REQUIRE(state_t::has<artifacts>);
}

TEST_CASE("updates merge by each field's rule, and a bad update changes nothing", "[state]") {
    state_t s;
    s.apply(state_update{}.set<artifacts>({"a.txt", "b.txt"}).set<title>("one"));
    s.apply(state_update{}.set<artifacts>({"b.txt", "c.txt"}).set<title>("two").add(human_message("hi")));
    CHECK(s.get<artifacts>() == std::vector<std::string>{"a.txt", "b.txt", "c.txt"});
    CHECK(s.get<title>() == "two");
    REQUIRE(s.messages.size() == 1);
    CHECK_FALSE(s.messages[0].id.empty());

    state_update bad;
    bad.fields["title"] = "three";
    bad.fields["todos"] = boost::json::array{};
    CHECK_THROWS_WITH(s.apply(bad),
                      Catch::Contains("\"todos\"") && Catch::Contains("title, artifacts, counters"));
    CHECK(s.get<title>() == "two"); // untouched: every field is converted before any is changed

    state_update wrong_shape;
    wrong_shape.fields["artifacts"] = 42;
    CHECK_THROWS_AS(s.apply(wrong_shape), state_error);
    CHECK(s.get<artifacts>().size() == 3);
}

TEST_CASE("the state round-trips through JSON and keeps fields it does not know", "[state][json]") {
    state_t s;
    s.messages.push_back(human_message("hello"));
    s.messages.back().id = "m1";
    s.get<title>() = "T";
    s.get<artifacts>() = {"x"};
    boost::json::value jv = boost::json::value_from(s);
    jv.as_object()["from_another_version"] = boost::json::array{1, 2};
    state_t back = boost::json::value_to<state_t>(jv);
    CHECK(back.get<title>() == "T");
    CHECK(back.get<artifacts>() == std::vector<std::string>{"x"});
    CHECK(back.messages == s.messages);
    CHECK(boost::json::value_from(back) == jv); // nothing lost, including the unknown key
    CHECK_THROWS_AS(boost::json::value_to<state_t>(boost::json::value(3)), state_error);
}

TEST_CASE("tools read state fields through the runtime without knowing the state type", "[state][tool]") {
    state_t s;
    s.get<title>() = "visible";
    tool_runtime rt;
    rt.bind_state(s);
    REQUIRE(rt.field<title>() != nullptr);
    CHECK(*rt.field<title>() == "visible");
    CHECK(rt.field<absent>() == nullptr);
}
