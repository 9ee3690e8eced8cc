// llm_tool_selector: a side model chooses the tools; garbage, unknown names and
// failures fall back to all tools with an event; both loops.
#include <agentware/middleware/llm_tool_selector.hpp>

#include "../agent/run_async.hpp"
#include "side_model_support.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

using namespace agentware;
using namespace side_model_test;

namespace {

message pick(std::vector<std::string> names) {
    boost::json::array a;
    for (auto& n : names)
        a.emplace_back(n);
    return ai_message("", {tool_call{"s1", "ToolSelectionResponse", boost::json::object{{"tools", a}}}});
}
std::vector<std::string> offered(const scripted_model& m, std::size_t i) {
    return m.requests().at(i).tool_names;
}
const boost::json::array* events(const boost::json::object& ctx) {
    const auto* e = ctx.if_contains("events");
    return e && e->is_array() ? &e->as_array() : nullptr;
}

} // namespace

TEST_CASE("llm_tool_selector offers the tools the selector picks, capped, plus always_include",
          "[middleware][llm_tool_selector]") {
    scripted_model selector({pick({"mail", "search", "mail", "maps"})});
    scripted_model model({ai_message("ok")});
    llm_tool_selector_options o;
    o.max_tools = 2;
    o.always_include = {"weather"};
    auto a = make_agent(model, five(), llm_tool_selector(any_chat_model(selector), o));
    auto r = a.invoke("Email my boss the search results");
    REQUIRE(r.reason == stop_reason::finished);
    // offered order kept; "maps" cut by max_tools (duplicates not counted); weather always
    CHECK(offered(model, 0) == std::vector<std::string>{"search", "mail", "weather"});
    // what the selector was asked
    const auto q = selector.requests().at(0); // a copy: requests() returns one
    CHECK(q.system_prompt == "Your goal is to select the most relevant tools for answering the user's "
                             "query.\nIMPORTANT: List the tool "
                             "names in order of relevance, with the most relevant first. If you exceed the "
                             "maximum number of tools, "
                             "only the first 2 will be used.");
    REQUIRE(q.messages.size() == 1);
    CHECK(q.messages[0].text() == "Email my boss the search results");
    CHECK(q.tool_names == std::vector<std::string>{"ToolSelectionResponse"});
    CHECK(q.settings.tool_choice == "ToolSelectionResponse");
    CHECK_FALSE(events(r.context));
}

TEST_CASE("llm_tool_selector: a JSON answer in the text is read too", "[middleware][llm_tool_selector]") {
    scripted_model selector({ai_message(R"({"tools": ["maps"]})")});
    scripted_model model({ai_message("ok")});
    auto a = make_agent(model, five(), llm_tool_selector(any_chat_model(selector)));
    a.invoke("where am I");
    CHECK(offered(model, 0) == std::vector<std::string>{"maps"});
}

TEST_CASE("llm_tool_selector falls back to all tools on unknown names, garbage or failure, and says so",
          "[middleware][llm_tool_selector]") {
    const std::vector<std::string> all{"search", "weather", "calendar", "mail", "maps"};
    {
        scripted_model selector({pick({"search", "teleport"})});
        scripted_model model({ai_message("ok")});
        auto a = make_agent(model, five(), llm_tool_selector(any_chat_model(selector)));
        auto r = a.invoke("go");
        CHECK(offered(model, 0) == all);
        REQUIRE(events(r.context));
        const auto& e = events(r.context)->at(0).as_object();
        CHECK(e.at("middleware") == "llm_tool_selector");
        CHECK(e.at("event") == "tool_selection_fallback");
        CHECK(e.at("detail").as_string().starts_with("Model selected invalid tools: ['teleport']"));
    }
    {
        scripted_model selector({ai_message("I think you want the search tool!")});
        scripted_model model({ai_message("ok")});
        auto a = make_agent(model, five(), llm_tool_selector(any_chat_model(selector)));
        auto r = a.invoke("go");
        CHECK(offered(model, 0) == all);
        REQUIRE(events(r.context));
    }
    {
        scripted_model selector({}); // fails: no answer scripted
        scripted_model model({ai_message("ok")});
        auto a = make_agent(model, five(), llm_tool_selector(any_chat_model(selector)));
        auto r = a.invoke("go");
        REQUIRE(r.reason == stop_reason::finished);
        CHECK(offered(model, 0) == all);
        CHECK(events(r.context)->at(0).at("detail").as_string().starts_with("the selector model failed"));
    }
}

TEST_CASE(
    "llm_tool_selector: always_include not offered is an error, no tools left to choose skips the selector",
    "[middleware][llm_tool_selector]") {
    scripted_model selector({pick({"search"})});
    scripted_model model({ai_message("ok")});
    llm_tool_selector_options o;
    o.always_include = {"teleport"};
    auto a = make_agent(model, five(), llm_tool_selector(any_chat_model(selector), o));
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::error);
    CHECK(r.error.find(
              "Tools in always_include not found in request: ['teleport']. Available tools: ['calendar', "
              "'mail', 'maps', 'search', 'weather']") != std::string::npos);
    o.always_include = {"search"};
    scripted_model model2({ai_message("ok")});
    auto b =
        make_agent(model2, tool_set(named_tool("search")), llm_tool_selector(any_chat_model(selector), o));
    b.invoke("go");
    CHECK(selector.calls() == 0);
    CHECK_THROWS_AS(llm_tool_selector(any_chat_model{}), std::invalid_argument);
}

TEST_CASE("llm_tool_selector in the coroutine loop", "[middleware][llm_tool_selector][async]") {
    scripted_model selector({pick({"calendar"})});
    scripted_model model({ai_message("ok")});
    auto a = make_agent(model, five(), llm_tool_selector(any_chat_model(selector)));
    auto r = test::run_async(a, "when");
    CHECK(r.answer() == "ok");
    CHECK(offered(model, 0) == std::vector<std::string>{"calendar"});
}

TEST_CASE("llm_tool_selector options from JSON", "[middleware][llm_tool_selector][options]") {
    auto o = boost::json::value_to<llm_tool_selector_options>(
        boost::json::parse(R"({"max_tools": 3, "always_include": ["a"]})"));
    CHECK(o.max_tools == 3u);
    CHECK(boost::json::value_to<llm_tool_selector_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(
        boost::json::value_to<llm_tool_selector_options>(boost::json::parse(R"({"max_tools": 0})")),
        Catch::Contains("llm_tool_selector.max_tools"));
    CHECK_THROWS_WITH(boost::json::value_to<llm_tool_selector_options>(boost::json::parse(R"({"model": 1})")),
                      Catch::Contains("llm_tool_selector.model"));
    CHECK_THROWS_WITH(
        boost::json::value_to<llm_tool_selector_options>(boost::json::parse(R"({"modle": "x"})")),
        Catch::Contains("modle"));
    auto named =
        boost::json::value_to<llm_tool_selector_options>(boost::json::parse(R"({"model": "cheap"})"));
    CHECK(named.model == std::string("cheap"));
    CHECK(boost::json::value_to<llm_tool_selector_options>(boost::json::value_from(named)) == named);
}

TEST_CASE("llm_tool_selector without a model of its own selects with the run's model",
          "[middleware][llm_tool_selector]") {
    // One script: the first answer is the selection, the second the agent's answer.
    scripted_model model({pick({"maps"}), ai_message("ok")});
    llm_tool_selector_options o;
    o.max_tools = 1;
    auto a = make_agent(model, five(), llm_tool_selector(o));
    auto r = a.invoke("Where is the station?");
    REQUIRE(r.reason == stop_reason::finished);
    CHECK(r.answer() == "ok");
    REQUIRE(model.requests().size() == 2);
    CHECK(offered(model, 0) == std::vector<std::string>{"ToolSelectionResponse"});
    CHECK(model.requests()[0].settings.tool_choice == "ToolSelectionResponse");
    CHECK(offered(model, 1) == std::vector<std::string>{"maps"});
    CHECK_FALSE(events(r.context));

    // The coroutine loop reaches the run's model the same way.
    scripted_model model2({pick({"mail"}), ai_message("ok")});
    auto b = make_agent(model2, five(), llm_tool_selector());
    auto r2 = test::run_async(b, "Write to Ann");
    CHECK(r2.answer() == "ok");
    CHECK(offered(model2, 1) == std::vector<std::string>{"mail"});

    // A model given in code wins over the run's.
    scripted_model selector({pick({"search"})});
    scripted_model model3({ai_message("ok")});
    llm_tool_selector with_model(o);
    with_model.model = any_chat_model(selector);
    auto c = make_agent(model3, five(), std::move(with_model));
    c.invoke("find it");
    CHECK(selector.calls() == 1);
    CHECK(offered(model3, 0) == std::vector<std::string>{"search"});
}

TEST_CASE("llm_tool_selector with no model at all offers every tool and says so",
          "[middleware][llm_tool_selector]") {
    llm_tool_selector sel;
    runtime rt; // not made by an agent: no run's model
    model_request<int> req;
    req.rt = &rt;
    req.messages = cow_vector<message>(std::vector<message>{human_message("hi")});
    req.tools = std::vector<tool_schema>{tool_schema{"a", "A.", boost::json::object{{"type", "object"}}},
                                         tool_schema{"b", "B.", boost::json::object{{"type", "object"}}}};
    std::size_t seen = 0;
    auto answer = sel.wrap_model_call(req, [&](auto& r) {
        seen = r.tools.size();
        return model_response{ai_message("ok"), {}};
    });
    CHECK(answer.ai.text() == "ok");
    CHECK(seen == 2);
    const auto* e = events(rt.context);
    REQUIRE(e);
    CHECK(e->at(0).at("detail").as_string().starts_with("no selector model"));
}
