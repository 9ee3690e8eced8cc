// The memory manager: extraction, storage and the watermark, confirmations under
// hybrid-v1, conversations queued from many threads.
#include <agentware/memory/manager.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

using namespace agentware;
using namespace std::chrono_literals;
using dftest::temp_dir;
using namespace memory_test;

TEST_CASE("the manager extracts, stores and advances the watermark", "[memory]") {
    temp_dir dir;
    canned_model model;
    auto clock =
        std::make_shared<manual_clock>(std::chrono::sys_days(std::chrono::year(2026) / 11 / 24) + 9h);
    memory_manager manager(options_at(dir), {.model = model.fn(), .clock = clock, .start_worker = false});
    std::vector<message> conv{human_message("I prefer tabs over spaces"), ai_message("Noted.")};
    conv[0].id = "u1";
    conv[1].id = "a1";
    model.answers->push_back("```json\n" + update_json({fact_json("Prefers tabs over spaces")}) + "\n```");
    CHECK(manager.add("t1", conv, "", "alice", "run-1") == memory_add_result::queued);
    CHECK(manager.flush(1s));
    auto view = manager.read_view("alice", "");
    REQUIRE(view.at("facts").as_array().size() == 1);
    CHECK(view.at("facts").at(0).at("content") == "Prefers tabs over spaces");
    CHECK(view.at("facts").at(0).at("source") == "t1");
    CHECK(view.at("facts").at(0).at("createdAt") == "2026-11-24T09:00:00Z");
    CHECK(model.prompts->at(0).find("User: I prefer tabs over spaces") != std::string::npos);

    // the next turn feeds only what is new
    conv.push_back(human_message("My name is Ada"));
    conv.back().id = "u2";
    conv.push_back(ai_message("Hi Ada."));
    conv.back().id = "a2";
    model.answers->push_back("no json at all"); // fails: the watermark stays
    manager.add("t1", conv, "", "alice");
    manager.flush(1s);
    CHECK(manager.queue().take_failures().size() == 1);
    model.answers->push_back(update_json({fact_json("Is named Ada", 0.95, "identity")}));
    manager.add("t1", conv, "", "alice");
    manager.flush(1s);
    REQUIRE(model.prompts->size() == 3);
    CHECK(model.prompts->at(2).find("I prefer tabs") == std::string::npos);
    CHECK(model.prompts->at(2).find("User: My name is Ada") != std::string::npos);
    CHECK(manager.read_view("alice", "").at("facts").as_array().size() == 2);

    // nothing new: no model call
    manager.add("t1", conv, "", "alice");
    manager.flush(1s);
    CHECK(model.prompts->size() == 3);
    // the emergency path ignores the watermark
    model.answers->push_back(update_json({}));
    manager.add_nowait("t1", conv, "", "alice");
    manager.flush(1s);
    CHECK(model.prompts->size() == 4);
    CHECK(model.prompts->at(3).find("User: I prefer tabs") != std::string::npos);
}

TEST_CASE("the manager confirms a fact when the user reinforces it under hybrid-v1", "[memory]") {
    temp_dir dir;
    canned_model model;
    auto clock = std::make_shared<manual_clock>(memory_eviction::at(2026, 11, 24, 9));
    memory_options o = options_at(dir);
    o.backend_config.fact_eviction_policy = "hybrid-v1";
    memory_manager manager(o, {.model = model.fn(), .clock = clock, .start_worker = false});
    std::vector<memory_apply_report> reports;
    manager.updater().set_observer(
        [&](const memory_update_item&, const memory_apply_report& r) { reports.push_back(r); });
    std::vector<message> conv{human_message("I prefer short answers"), ai_message("Understood.")};
    model.answers->push_back(update_json({fact_json("Prefers short answers")}));
    manager.add("t1", conv, "", "alice");
    REQUIRE(manager.flush(1s));
    const std::string id(manager.read_view("alice", "").at("facts").at(0).at("id").as_string());

    clock->advance(std::chrono::hours(24));
    conv.push_back(human_message("Perfect! Keep doing that."));
    conv.push_back(ai_message("Will do."));
    model.answers->push_back(update_json(
        {}, fmt::format(R"(, "factsToReinforce": [{{"id": "{}", "scope": "user", "reason": "confirmed"}}])",
                        id)));
    manager.add("t1", conv, "", "alice");
    REQUIRE(manager.flush(1s));
    REQUIRE(model.prompts->size() == 2);
    CHECK(model.prompts->at(1).find("\"factsToReinforce\"") != std::string::npos); // the reinforcement hint
    const auto view = manager.read_view("alice", "");
    CHECK(view.at("facts").at(0).at("lastConfirmedAt") == "2026-11-25T09:00:00Z");
    CHECK(view.at("facts").at(0).at("confirmationCount") == 1);
    REQUIRE(reports.size() == 2);
    CHECK(reports[1].facts_reinforced == 1);
}

TEST_CASE("conversations queued from many threads while the worker runs are all remembered",
          "[memory][concurrency]") {
    temp_dir dir;
    memory_options o = options_at(dir);
    o.backend_config.debounce_seconds = 0.001;
    o.backend_config.between_items_seconds = 0;
    // The worker's model: one fact named after the conversation's thread.
    memory_model model = [](const chat_request& r) {
        const std::string prompt = r.messages.back().text();
        const auto at = prompt.find("User: remember ");
        const std::string what = prompt.substr(at + 15, prompt.find('\n', at) - at - 15);
        model_response out;
        out.ai = ai_message(update_json({fact_json("Thread " + what)}));
        return out;
    };
    memory_manager manager(o, {.model = model});
    std::vector<std::thread> adders;
    for (int t = 0; t < 4; ++t)
        adders.emplace_back([&manager, t] {
            for (int i = 0; i < 5; ++i) {
                const std::string thread = fmt::format("c{}-{}", t, i);
                manager.add(thread, {human_message("remember " + thread), ai_message("ok, noted")}, "",
                            "alice");
            }
        });
    for (auto& a : adders)
        a.join();
    REQUIRE(manager.flush(20s));
    CHECK(manager.queue().take_failures().empty());
    const auto facts = manager.read_view("alice", "").at("facts").as_array();
    CHECK(facts.size() == 20);
    for (int t = 0; t < 4; ++t)
        for (int i = 0; i < 5; ++i) {
            const std::string want = fmt::format("Thread c{}-{}", t, i);
            CHECK(std::any_of(facts.begin(), facts.end(),
                              [&](const auto& f) { return f.at("content").as_string() == want; }));
        }
    CHECK(manager.shutdown());
}
