// The memory middleware in an agent: a run's conversation queued, never failing the run.
// (The memory subsystem's own tests are in tests/memory/.)
#include <agentware/middleware/memory.hpp>

#include "../memory/support.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <memory>

using namespace agentware;
using namespace std::chrono_literals;
using dftest::temp_dir;
using namespace memory_test;

TEST_CASE("the memory middleware queues a run's conversation and never fails it", "[memory]") {
    temp_dir dir;
    canned_model model;
    model.answers->push_back(update_json({fact_json("Works in Rust", 0.9, "context")}));
    auto manager = std::make_shared<memory_manager>(
        options_at(dir), memory_manager_setup{.model = model.fn(), .clock = nullptr, .start_worker = false});
    using P = pipeline<memory>;
    agent<scripted_model, P> a(scripted_model({ai_message("Rust it is."), ai_message("Again.")}), tool_set{},
                               P{memory(manager)});
    agent<scripted_model, P>::state_type state;
    run_config cfg;
    cfg.thread_id = "th-1";
    cfg.context["user_id"] = "zoe";
    cfg.context["agent_name"] = "Coder";
    auto r = a.run(state, "I write Rust every day", cfg);
    CHECK(r.reason == stop_reason::finished);
    CHECK(manager->queue().pending() == 1);
    manager->flush(1s);
    CHECK(manager->read_view("zoe", "coder").at("facts").as_array().size() == 1);
    CHECK(std::filesystem::exists(dir.path / "users/zoe/agents/coder/facts"));

    // an unsafe user id is not remembered, and the run is unaffected
    cfg.context["user_id"] = "../../x";
    CHECK(a.run(state, "again", cfg).reason == stop_reason::finished);
    CHECK(manager->queue().pending() == 0);
}
