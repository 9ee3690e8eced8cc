// title: when a title is made, the prompt, parsing, the fallback, both loops, bad input.
#include "../agent/run_async.hpp" // async_loop, co_spawn, io_context
#include "../agent/support.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/middleware/title.hpp>
#include <agentware/model/scripted_model.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <stdexcept>
#include <string>
#include <vector>

using namespace agentware;

namespace {

struct throwing_model {
    model_response invoke(const chat_request&) { throw std::runtime_error("down"); }
};

} // namespace

TEST_CASE("title asks its model after the first exchange and parses the answer", "[middleware][title]") {
    for (bool async : {false, true}) {
        scripted_model helper({ai_message("<think>hmm</think>  \"'Trip to Lisbon'\" ")});
        scripted_model main({ai_message("<think>plan</think>Sure, here is a plan.")});
        auto a = make_agent(main, tool_set{}, title(title_options{}, any_chat_model(helper)));
        decltype(a)::state_type state;
        if (async) {
            boost::asio::io_context io;
            boost::asio::co_spawn(io, a.async_run(state, "Plan a trip to Lisbon"),
                                  [](std::exception_ptr, run_result) {});
            io.run();
        } else {
            REQUIRE(a.run(state, "Plan a trip to Lisbon").ok());
        }
        INFO("async " << async);
        CHECK(get<title_field>(state) == "Trip to Lisbon");
        auto prompt = helper.requests().at(0).messages.at(0).text();
        CHECK(prompt == "Generate a concise title (max 6 words) for this conversation.\nUser: Plan a trip to "
                        "Lisbon\nAssistant: Sure, here is a plan.\n\nReturn ONLY the title, no quotes, no "
                        "explanation.");
    }
}

TEST_CASE("title is made once: not with a title, not after the first user message", "[middleware][title]") {
    scripted_model helper({ai_message("First")});
    scripted_model main({ai_message("a"), ai_message("b")});
    auto a = make_agent(main, tool_set{}, title(title_options{}, any_chat_model(helper)));
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "one").ok());
    REQUIRE(a.run(state, "two").ok());
    CHECK(get<title_field>(state) == "First");
    CHECK(helper.requests().size() == 1);
}

TEST_CASE("title falls back to the user's message without a model, or when it fails or answers blank",
          "[middleware][title]") {
    title plain;
    CHECK(plain.fallback("Short question") == "Short question");
    CHECK(plain.fallback("") == "New Conversation");
    std::string long_text(80, 'x');
    CHECK(plain.fallback(long_text) == std::string(50, 'x') + "...");
    title_options narrow;
    narrow.max_chars = 20;
    // n = min(20, 50); the cut keeps min(n, max_chars - 3) = 17 characters.
    CHECK(title(narrow).fallback("word word word word word word") == "word word word wo...");
    CHECK(title(narrow).fallback("word word word      tail") == "word word word...");
    CHECK(title(narrow).parse(std::string(40, 'y')) == std::string(20, 'y'));
    CHECK(plain.parse("  '\"  ").empty());

    for (auto* which : {"none", "throws", "blank"}) {
        std::optional<any_chat_model> m;
        if (std::string(which) == "throws") m = any_chat_model(throwing_model{});
        if (std::string(which) == "blank")
            m = any_chat_model(scripted_model({ai_message("<think>x</think>  ")}));
        scripted_model main({ai_message("answer")});
        auto a = make_agent(main, tool_set{}, title(title_options{}, m));
        decltype(a)::state_type state;
        REQUIRE(a.run(state, "What is the capital of Portugal?").ok());
        INFO(which);
        CHECK(get<title_field>(state) == "What is the capital of Portugal?");
    }
}

TEST_CASE("title ignores dynamic-context reminders when counting user messages", "[middleware][title]") {
    title t;
    agent_state<pipeline<title>> state;
    message reminder = human_message("<memory>..</memory>");
    reminder.metadata["dynamic_context_reminder"] = true;
    state.messages = {reminder, human_message("hi"), ai_message("hello")};
    CHECK(t.should_generate(state));
    state.messages.push_back(human_message("again"));
    CHECK_FALSE(t.should_generate(state));
}

TEST_CASE("title options read DeerFlow's section, out-of-range values name the key",
          "[middleware][title][options]") {
    auto o =
        json_read_as<title_options>(boost::json::parse(R"({"max_words": 8, "model_name": "fast"})"), "title");
    CHECK(o.max_words == 8);
    CHECK(o.model_name == "fast");
    CHECK_THROWS_WITH(json_read_as<title_options>(boost::json::parse(R"({"max_chars": 5})"), "title"),
                      Catch::Contains("title.max_chars"));
    CHECK_THROWS_WITH(json_read_as<title_options>(boost::json::parse(R"({"max_words": 21})"), "title"),
                      Catch::Contains("title.max_words"));
    CHECK_THROWS_WITH(json_read_as<title_options>(boost::json::parse(R"({"prompt": "x"})"), "title"),
                      Catch::Contains("title.prompt"));
}
