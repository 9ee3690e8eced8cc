// The DeerFlow preset: its sections switch the chain's middlewares on and
// configure them; a bad section, key or value is named; summarization hands
// what it replaces to memory.
#include <agentware/presets/deerflow.hpp>

#include "../memory/support.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

using namespace agentware;
using namespace std::chrono_literals;
using dftest::temp_dir;
using namespace memory_test;
namespace json = boost::json;

TEST_CASE("deerflow preset: sections switch middlewares on and configure them", "[options][preset]") {
    auto chain = make_deerflow_pipeline(json::parse(R"({
        "thread_data": {"lazy_init": false},
        "sandbox": true,
        "uploads": false,
        "guardrails": {"fail_closed": false,
                       "provider": {"use": "deerflow.guardrails.builtin:AllowlistProvider",
                                    "config": {"denied_tools": ["bash"]}}},
        "subagents": {"max_total_per_run": 4},
        "loop_detection": {"enabled": false, "warn_threshold": 3},
        "clarification": {"enabled": true}
    })"));
    REQUIRE(chain.get<thread_data>());
    CHECK_FALSE(chain.get<thread_data>()->options.lazy_init);
    CHECK(chain.get<sandbox>());
    CHECK_FALSE(chain.get<uploads>());
    CHECK_FALSE(chain.get<dangling_tool_call>());
    REQUIRE(chain.get<guardrail<allowlist_provider>>());
    CHECK_FALSE(chain.get<guardrail<allowlist_provider>>()->options.fail_closed);
    CHECK(chain.get<guardrail<allowlist_provider>>()->provider.denied_tools ==
          std::vector<std::string>{"bash"});
    REQUIRE(chain.get<subagent_limit>());
    CHECK(chain.get<subagent_limit>()->options().max_total_per_run == 4);
    CHECK_FALSE(chain.get<loop_detection>());
    CHECK(chain.get<clarification>());

    // true: on with the defaults (the allowlist then allows every tool).
    auto defaults = make_deerflow_pipeline(json::parse(R"({"guardrails": true, "loop_detection": true})"));
    REQUIRE(defaults.get<guardrail<allowlist_provider>>());
    CHECK(defaults.get<guardrail<allowlist_provider>>()->provider == allowlist_provider{});
    CHECK(defaults.get<guardrail<allowlist_provider>>()->options == guardrail_options{});
    REQUIRE(defaults.get<loop_detection>());

    auto none = make_deerflow_pipeline(json::object{});
    CHECK_FALSE(none.get<thread_data>());
    CHECK_FALSE(none.get<clarification>());
}
TEST_CASE("deerflow preset: a bad section, key or value is named", "[options][preset]") {
    auto error = [](std::string_view text) {
        try {
            (void)make_deerflow_pipeline(json::parse(text));
        } catch (const json_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(error(R"({"time_travel": true})")
              .starts_with("time_travel: unknown key (known: input_sanitization, tool_output, "
                           "tool_result_sanitization, pii_redaction, thread_data, "));
    CHECK(error(R"({"loop_detection": {"warn_threshold": "x"}})") ==
          R"(loop_detection.warn_threshold: expected an integer, got "x")");
    CHECK(error(R"({"sandbox": {"bash_timout": 5}})").starts_with("sandbox.bash_timout: unknown key"));
    CHECK(error(R"({"sandbox": 1})") == "sandbox: expected true, false or an object of settings, got 1");
    CHECK(error(R"({"clarification": {"enabled": "yes"}})") ==
          R"(clarification.enabled: expected true or false, got "yes")");
    CHECK(error(R"({"guardrails": {"provider": {"use": "acme:Policy"}}})")
              .starts_with(R"(guardrails.provider.use: unknown provider "acme:Policy")"));
    CHECK(error(R"({"guardrails": {"provider": {"config": {"allowed_tools": "ls"}}}})") ==
          R"(guardrails.provider.config.allowed_tools: expected an array, got "ls")");
}

TEST_CASE("in the preset, summarization hands what it replaces to memory at once", "[memory][concurrency]") {
    temp_dir dir;
    auto chain = make_deerflow_pipeline(boost::json::parse(fmt::format(
        R"({{"summarization": {{"trigger": [{{"type": "messages", "value": 6}}], "keep": {{"type": "messages", "value": 2}}}},
            "memory": {{"backend_config": {{"storage_path": {}}}}}}})",
        boost::json::serialize(boost::json::value(dir.path.string())))));
    REQUIRE(chain.get<summarization>()->before_summarization.size() == 1);
    chain.get<summarization>()->model = any_chat_model(scripted_model({ai_message("Summary.")}));
    std::shared_ptr<memory_manager> manager = chain.get<memory>()->manager();
    canned_model memory_model;
    memory_model.answers->push_back(update_json({}));
    memory_model.answers->push_back(update_json({}));
    manager->set_model(memory_model.fn());

    agent<scripted_model, deerflow_pipeline> a(scripted_model({ai_message("final")}), tool_set{},
                                               std::move(chain));
    agent<scripted_model, deerflow_pipeline>::state_type state;
    state.messages = {human_message("I prefer tabs over spaces"),
                      ai_message("Noted."),
                      human_message("second question"),
                      ai_message("second answer"),
                      human_message("third question"),
                      ai_message("third answer")};
    run_config cfg;
    cfg.thread_id = "t-flush";
    cfg.context["user_id"] = "alice";
    REQUIRE(a.run(state, "next", cfg).ok());
    CHECK(get<summary_text_field>(state) == "Summary.");
    REQUIRE(manager->flush(5s));
    REQUIRE_FALSE(memory_model.prompts->empty());
    // The first update is the immediate one, with the messages the summary replaced.
    const std::string& first = memory_model.prompts->front();
    CHECK(first.find("User: I prefer tabs over spaces\n\nAssistant: Noted.") != std::string::npos);
    CHECK(first.find("third answer") == std::string::npos); // kept, not summarised
}
