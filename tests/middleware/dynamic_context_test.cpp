// dynamic_context: the date reminder and the <memory> block swapped in for the
// last real user message, once per day.
#include "deerflow_support.hpp"

#include <agentware/middleware/dynamic_context.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <exception>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace agentware;
using namespace std::chrono_literals;
using dftest::temp_dir;

namespace {

using plain_state = basic_state<type_list<>>;

std::shared_ptr<manual_clock> monday_clock() {
    return std::make_shared<manual_clock>(std::chrono::sys_days(std::chrono::year(2026) / 11 / 23) + 9h);
}

std::shared_ptr<memory_manager> manager_with_memory(const temp_dir& dir) {
    memory_options o;
    o.backend_config.storage_path = dir.path.string();
    auto manager = std::make_shared<memory_manager>(
        o, memory_manager_setup{.model = {}, .clock = nullptr, .start_worker = false});
    user_memory m;
    m.user[0].summary = "Writes C++ <20>";
    memory_fact f;
    f.id = "fact_00000001";
    f.content = "Prefers tabs";
    f.category = "preference";
    f.confidence = 0.9;
    m.facts.push_back(f);
    manager->storage().save("alice", "", m);
    return manager;
}

// Runs the coroutine hook to its end on an io_context of its own.
template <class State>
void run_dynamic_context(dynamic_context& dc, State& state, runtime& rt) {
    boost::asio::io_context io;
    std::exception_ptr failure;
    boost::asio::co_spawn(io, dc.before_agent(state, rt), [&](std::exception_ptr e) { failure = e; });
    io.run();
    if (failure) std::rethrow_exception(failure);
}

} // namespace

TEST_CASE("the first run gets the date and the memory by swapping ids", "[dynamic_context]") {
    temp_dir dir;
    auto clock = monday_clock();
    dynamic_context dc({}, manager_with_memory(dir), clock);
    plain_state state;
    state.messages = {human_message("earlier"), ai_message("answer"), human_message("What's new?")};
    state.messages[2].id = "X";
    state.messages[2].metadata["files"] = boost::json::array{};
    runtime rt{"t1", "run-1", {{"user_id", "alice"}}, 0};
    run_dynamic_context(dc, state, rt);
    REQUIRE(state.messages.size() == 5);
    const message& date = state.messages[2];
    CHECK(date.is_system());
    CHECK(date.id == "X");
    CHECK(date.text() ==
          "<system-reminder>\n<current_date>2026-11-23, Monday</current_date>\n</system-reminder>");
    CHECK(date.metadata.at("hide_from_ui") == true);
    CHECK(date.metadata.at("dynamic_context_reminder") == true);
    CHECK(date.metadata.at("reminder_date") == "2026-11-23");
    const message& mem = state.messages[3];
    CHECK(mem.is_human());
    CHECK(mem.id == "X__memory");
    CHECK(mem.text() == "<memory>\nUser Context:\n- Work: Writes C++ &lt;20&gt;\n\nFacts:\n"
                        "- [preference | 0.90] Prefers tabs\n</memory>");
    CHECK(mem.metadata.at("dynamic_context_reminder") == true);
    const message& user = state.messages[4];
    CHECK(user.id == "X__user");
    CHECK(user.text() == "What's new?");
    CHECK(user.metadata.contains("files"));

    // the same day: nothing more, even on a new turn
    state.messages.push_back(ai_message("Not much."));
    state.messages.push_back(human_message("And now?"));
    state.messages.back().id = "Y";
    run_dynamic_context(dc, state, rt);
    CHECK(state.messages.size() == 7);
    CHECK(state.messages.back().id == "Y");

    // the next day: a date-only reminder on the current message
    clock->advance(24h);
    run_dynamic_context(dc, state, rt);
    REQUIRE(state.messages.size() == 8);
    CHECK(state.messages[6].id == "Y");
    CHECK(state.messages[6].text().find("2026-11-24, Tuesday") != std::string::npos);
    CHECK(state.messages[7].id == "Y__user");
    // run again the same day: the swapped message is not swapped twice
    run_dynamic_context(dc, state, rt);
    CHECK(state.messages.size() == 8);
}

TEST_CASE("without memory only the date is injected, hidden and reminder messages are skipped",
          "[dynamic_context]") {
    temp_dir dir;
    dynamic_context dc({}, nullptr, monday_clock());
    plain_state state;
    state.messages = {human_message("real"), human_message("hidden")};
    state.messages[0].id = "A";
    state.messages[1].id = "B";
    state.messages[1].metadata["hide_from_ui"] = true;
    runtime rt{"t1", "run-1", {}, 0};
    run_dynamic_context(dc, state, rt);
    REQUIRE(state.messages.size() == 3);
    CHECK(state.messages[0].is_system());
    CHECK(state.messages[1].id == "A__user");
    CHECK(state.messages[2].id == "B");

    // memory injection off in the configuration: date only
    memory_options off;
    off.backend_config.storage_path = dir.path.string();
    off.injection_enabled = false;
    dynamic_context dc2({},
                        std::make_shared<memory_manager>(
                            off, memory_manager_setup{.model = {}, .clock = nullptr, .start_worker = false}),
                        monday_clock());
    plain_state s2;
    s2.messages = {human_message("hi")};
    run_dynamic_context(dc2, s2, rt);
    CHECK(s2.messages.size() == 2);

    plain_state empty;
    run_dynamic_context(dc, empty, rt);
    CHECK(empty.messages.empty());
}

TEST_CASE("dynamic_context runs in an agent and the model sees the reminder first", "[dynamic_context]") {
    temp_dir dir;
    using P = pipeline<dynamic_context>;
    scripted_model model({ai_message("Hello.")});
    agent<scripted_model, P> a(model, tool_set{},
                               P{dynamic_context({}, manager_with_memory(dir), monday_clock())});
    agent<scripted_model, P>::state_type state;
    run_config cfg;
    cfg.context["user_id"] = "alice";
    a.run(state, "Hi", cfg);
    const auto requests = model.requests();
    REQUIRE(requests.size() == 1);
    REQUIRE(requests[0].messages.size() == 3);
    CHECK(requests[0].messages[0].is_system());
    CHECK(requests[0].messages[1].text().starts_with("<memory>\n"));
    CHECK(requests[0].messages[2].text() == "Hi");
}

TEST_CASE("the dynamic_context section reads from JSON", "[dynamic_context]") {
    auto o =
        boost::json::value_to<dynamic_context_options>(boost::json::parse(R"({"inject_memory": false})"));
    CHECK(!o.inject_memory);
    CHECK_THROWS_WITH(
        boost::json::value_to<dynamic_context_options>(boost::json::parse(R"({"inject_memory": 1})")),
        "dynamic_context.inject_memory: expected true or false, got 1");
}

TEST_CASE("a memory read slower than the time box delays the run no longer, the next run injects",
          "[dynamic_context]") {
    temp_dir dir;
    memory_options o;
    o.backend_config.storage_path = dir.path.string();
    auto manager = std::make_shared<memory_manager>(
        o, memory_manager_setup{.model = {}, .clock = nullptr, .start_worker = false});
    // alice's memory.json is a FIFO: reading it waits for a writer, as a hung disk would.
    const auto file = dir.path / "users" / "alice" / "memory.json";
    std::filesystem::create_directories(file.parent_path());
    REQUIRE(::mkfifo(file.c_str(), 0600) == 0);

    dynamic_context dc({}, manager, monday_clock());
    CHECK(dc.memory_timeout == std::chrono::seconds(5)); // DeerFlow's limit
    dc.memory_timeout = 50ms;
    plain_state state;
    state.messages = {human_message("Hi")};
    state.messages[0].id = "X";
    runtime rt{"t1", "run-1", {{"user_id", "alice"}}, 0};
    // Returning at all is the time box at work: the read waits until the writer below.
    run_dynamic_context(dc, state, rt);
    // Nothing injected, not even the date: the next run tries again.
    REQUIRE(state.messages.size() == 1);
    CHECK(state.messages[0].id == "X");
    CHECK(state.messages[0].text() == "Hi");

    // The reader is let go (it reads an empty file, which is no memory), the
    // file becomes real memory, and the next run gets the date and the memory.
    const int fd = ::open(file.c_str(), O_WRONLY);
    REQUIRE(fd >= 0);
    ::close(fd);
    std::filesystem::remove(file);
    user_memory m;
    m.user[0].summary = "Writes C++";
    manager->storage().save("alice", "", m);
    dc.memory_timeout = 10s;
    run_dynamic_context(dc, state, rt);
    REQUIRE(state.messages.size() == 3);
    CHECK(state.messages[0].is_system());
    CHECK(state.messages[1].id == "X__memory");
    CHECK(state.messages[1].text() == "<memory>\nUser Context:\n- Work: Writes C++\n</memory>");
    CHECK(state.messages[2].id == "X__user");
}
