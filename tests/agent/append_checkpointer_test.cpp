// The append-only file checkpointer: saves append what changed, a torn last
// record is ignored, a rewritten history becomes a snapshot, the log is
// compacted, and an agent checkpoints each tool result as its call completes.
#include "run_async.hpp"
#include "support.hpp"

#include <agentware/agent/append_checkpointer.hpp>
#include <agentware/agent/async_loop.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

using namespace agentware;

namespace append_cp {

namespace fs = std::filesystem;
namespace json = boost::json;

class scratch_dir {
public:
    scratch_dir() {
        static std::atomic<int> n{0};
        path_ = fs::temp_directory_path() /
                ("agentware-append-cp-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
        fs::create_directories(path_);
    }
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;
    ~scratch_dir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

inline std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

inline std::vector<std::string> records(const fs::path& p) {
    std::vector<std::string> out;
    std::ifstream in(p, std::ios::binary);
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

inline json::value state_with(int messages, json::value todos = json::array{}) {
    json::array ms;
    for (int i = 0; i < messages; ++i)
        ms.push_back(json::object{{"type", i % 2 ? "ai" : "human"},
                                  {"id", "m" + std::to_string(i)},
                                  {"content", "text " + std::to_string(i)}});
    return json::object{{"messages", std::move(ms)}, {"todos", std::move(todos)}};
}

} // namespace append_cp

using append_cp::records;
using append_cp::scratch_dir;
using append_cp::state_with;

TEST_CASE("append checkpointer: a save appends the new messages and the changed fields",
          "[checkpointer][append]") {
    scratch_dir dir;
    append_file_checkpointer cp(dir.path());
    CHECK_FALSE(cp.load("t").has_value());
    cp.save("t", state_with(2));
    cp.save("t", state_with(5, boost::json::array{"plan"}));
    cp.save("t", state_with(5, boost::json::array{"plan"})); // nothing changed: nothing written
    cp.save("t", state_with(6, boost::json::array{"plan"}));

    const auto lines = records(cp.path_of("t"));
    REQUIRE(lines.size() == 3);
    CHECK(lines[0].starts_with(R"({"snapshot":)"));
    const auto second = boost::json::parse(lines[1]).as_object();
    CHECK(second.at("at") == 2);
    CHECK(second.at("append").as_array().size() == 3);
    CHECK(second.at("set") == boost::json::parse(R"({"todos":["plan"]})"));
    const auto third = boost::json::parse(lines[2]).as_object();
    CHECK(third.at("at") == 5);
    CHECK(third.at("append").as_array().size() == 1);
    CHECK_FALSE(third.contains("set"));

    CHECK(*cp.load("t") == state_with(6, boost::json::array{"plan"}));
    // Another instance (a restarted process) replays the same log and extends it.
    append_file_checkpointer again(dir.path());
    CHECK(*again.load("t") == state_with(6, boost::json::array{"plan"}));
    auto fewer_fields = state_with(7).as_object();
    fewer_fields.erase("todos");
    again.save("t", fewer_fields);
    CHECK(boost::json::parse(records(cp.path_of("t")).back()).at("unset") == boost::json::array{"todos"});
    CHECK(*append_file_checkpointer(dir.path()).load("t") == boost::json::value(fewer_fields));
    CHECK(again.list() == std::vector<std::string>{"t"});
    CHECK(again.erase("t"));
    CHECK_FALSE(again.erase("t"));
    CHECK_FALSE(again.load("t").has_value());
}

TEST_CASE("append checkpointer: a rewritten history is saved as a snapshot", "[checkpointer][append]") {
    scratch_dir dir;
    append_file_checkpointer cp(dir.path());
    cp.save("t", state_with(8));
    // Summarised: fewer messages.
    cp.save("t", state_with(3));
    CHECK(records(cp.path_of("t")).size() == 1);
    CHECK(*cp.load("t") == state_with(3));
    // The last message edited in place (same count, same id).
    auto edited = state_with(4);
    cp.save("t", edited);
    edited.at("messages").as_array()[3].as_object()["content"] = "edited";
    cp.save("t", edited);
    CHECK(records(cp.path_of("t")).size() == 1);
    CHECK(*cp.load("t") == edited);
}

TEST_CASE("append checkpointer: a torn last record is ignored and cut off by the next write",
          "[checkpointer][append]") {
    scratch_dir dir;
    {
        append_file_checkpointer cp(dir.path());
        cp.save("t", state_with(2));
        cp.save("t", state_with(4));
    }
    const std::filesystem::path log = dir.path() / "t.jsonl";
    const std::string whole = append_cp::slurp(log);
    const auto size = std::filesystem::file_size(log);
    // A crash while the last record was written: every cut inside it.
    const std::size_t last_start = whole.rfind('\n', whole.size() - 2) + 1;
    for (std::size_t cut = last_start; cut < size; cut += 7) {
        INFO(cut);
        std::filesystem::resize_file(log, cut);
        CHECK(*append_file_checkpointer(dir.path()).load("t") == state_with(2));
        std::ofstream(log, std::ios::binary | std::ios::trunc) << whole;
    }
    // The next save after a torn record replaces it.
    std::filesystem::resize_file(log, size - 5);
    append_file_checkpointer cp(dir.path());
    cp.save("t", state_with(5));
    CHECK(*append_file_checkpointer(dir.path()).load("t") == state_with(5));
    CHECK(records(log).size() == 2);

    // A bad record that is not the last is an error naming the log and the record.
    std::ofstream(log, std::ios::binary | std::ios::app) << "{not json\n"
                                                         << R"({"at":5})"
                                                         << "\n";
    try {
        (void)append_file_checkpointer(dir.path()).load("t");
        FAIL("no error");
    } catch (const checkpoint_error& e) {
        CHECK_THAT(e.what(), Catch::Contains("t.jsonl\" record 3 is not a JSON object"));
    }
    std::ofstream(log, std::ios::binary | std::ios::trunc) << R"({"at":0,"append":[]})"
                                                           << "\n";
    CHECK_THROWS_WITH(append_file_checkpointer(dir.path()).load("t"),
                      Catch::Contains("comes before any snapshot"));
    std::ofstream(log, std::ios::binary | std::ios::trunc)
        << boost::json::serialize(boost::json::object{{"snapshot", state_with(2)}}) << "\n"
        << R"({"at":7,"append":[]})"
        << "\n";
    CHECK_THROWS_WITH(append_file_checkpointer(dir.path()).load("t"),
                      Catch::Contains("does not follow the messages before it"));
}

TEST_CASE("append checkpointer: tool results follow the saved state until the next save",
          "[checkpointer][append]") {
    scratch_dir dir;
    append_file_checkpointer cp(dir.path());
    CHECK_THROWS_AS(cp.save_result("t", boost::json::object{}), checkpoint_error);
    cp.save("t", state_with(2));
    cp.save_result("t", boost::json::object{{"type", "tool"}, {"content", "r1"}});
    auto loaded = *append_file_checkpointer(dir.path()).load("t");
    REQUIRE(loaded.at("messages").as_array().size() == 3);
    CHECK(loaded.at("messages").as_array().back().at("content") == "r1");
    // The next save holds the results itself: they are not added twice.
    auto next = state_with(2);
    next.at("messages").as_array().push_back(boost::json::object{{"type", "tool"}, {"content", "r1"}});
    cp.save("t", next);
    CHECK(*append_file_checkpointer(dir.path()).load("t") == next);
    CHECK(*cp.load("t") == next);
}

TEST_CASE("append checkpointer: the log is compacted into one snapshot", "[checkpointer][append]") {
    scratch_dir dir;
    append_checkpointer_options options;
    options.compact_min_bytes = 2000;
    options.sync = false;
    append_file_checkpointer cp(dir.path(), options);
    for (int n = 1; n <= 60; ++n)
        cp.save("t", state_with(n));
    CHECK(std::filesystem::file_size(cp.path_of("t")) < 6000);
    CHECK(records(cp.path_of("t")).size() < 40);
    CHECK(*append_file_checkpointer(dir.path()).load("t") == state_with(60));
    CHECK_THROWS_AS(cp.save("../x", state_with(1)), std::invalid_argument);
}

namespace append_cp {

// What a checkpointer read of the views it was given.
struct view_reads {
    std::atomic<int> messages{0}; // messages converted
    std::atomic<int> wholes{0};   // whole states converted
    std::atomic<int> plain_saves{0};
    std::atomic<int> lowest{-1}; // the oldest message index read since reset
    void reset() {
        messages = 0;
        wholes = 0;
        plain_saves = 0;
        lowest = -1;
    }
};

// Forwards to another view, counting what is read of it.
class counting_view final : public state_view {
public:
    counting_view(const state_view& inner, view_reads& reads) : inner_(inner), reads_(reads) {}
    std::size_t message_count() const override { return inner_.message_count(); }
    json::value message(std::size_t i) const override {
        ++reads_.messages;
        const int at = static_cast<int>(i);
        int low = reads_.lowest.load();
        while ((low < 0 || at < low) && !reads_.lowest.compare_exchange_weak(low, at)) {
        }
        return inner_.message(i);
    }
    json::object fields() const override { return inner_.fields(); }
    json::value whole() const override {
        ++reads_.wholes;
        return inner_.whole();
    }

private:
    const state_view& inner_;
    view_reads& reads_;
};

// An append_file_checkpointer that counts what the agent makes it read.
struct counted_checkpointer {
    std::shared_ptr<append_file_checkpointer> cp;
    std::shared_ptr<view_reads> reads = std::make_shared<view_reads>();

    std::optional<json::value> load(std::string_view id) const { return cp->load(id); }
    void save(std::string_view id, const json::value& state) {
        ++reads->plain_saves;
        cp->save(id, state);
    }
    void save_changes(std::string_view id, const state_view& state) {
        cp->save_changes(id, counting_view(state, *reads));
    }
    void save_result(std::string_view id, const json::value& m) { cp->save_result(id, m); }
    bool erase(std::string_view id) { return cp->erase(id); }
    std::vector<std::string> list() const { return cp->list(); }
};
static_assert(incremental_checkpointer<counted_checkpointer>);

// A tool that waits until the other call's result is in the log, then reads
// the thread as a restarted process would.
inline tool_set crash_probe_tools(const fs::path& dir, std::shared_ptr<boost::json::value> seen) {
    auto fast =
        make_tool("fast", "Fast.", boost::json::object{},
                  [](const boost::json::object&, const tool_runtime&) { return std::string("fast done"); });
    auto slow = make_tool("slow", "Slow.", boost::json::object{},
                          [dir, seen](const boost::json::object&, const tool_runtime& rt) {
                              const auto deadline =
                                  std::chrono::steady_clock::now() + std::chrono::seconds(20);
                              while (std::chrono::steady_clock::now() < deadline) {
                                  auto state = append_file_checkpointer(dir).load(rt.thread_id);
                                  if (state && state->at("messages").as_array().size() >= 3) {
                                      *seen = *state;
                                      break;
                                  }
                                  std::this_thread::sleep_for(std::chrono::milliseconds(5));
                              }
                              return std::string("slow done");
                          });
    return tool_set(fast, slow);
}

inline void check_crash_view(const boost::json::value& seen) {
    REQUIRE(seen.is_object());
    const auto& ms = seen.at("messages").as_array();
    REQUIRE(ms.size() == 3);
    CHECK(ms[0].at("role") == "user");
    CHECK(ms[1].at("role") == "assistant");
    CHECK(ms[2].at("tool_call_id") == "c1");
}

} // namespace append_cp

TEST_CASE("append checkpointer: save_changes reads of the state only what it compares and writes",
          "[checkpointer][append]") {
    scratch_dir dir;
    scratch_dir plain_dir;
    append_file_checkpointer cp(dir.path());
    append_file_checkpointer plain(plain_dir.path());
    append_cp::view_reads reads;
    auto save_both = [&](const boost::json::value& state) {
        const auto& o = state.as_object();
        cp.save_changes(
            "t", append_cp::counting_view(detail::json_state_view(o, o.at("messages").as_array()), reads));
        plain.save("t", state);
    };

    save_both(state_with(100)); // the first save: a snapshot of the whole state
    CHECK(reads.wholes == 1);
    reads.reset();
    save_both(state_with(103, boost::json::array{"plan"}));
    CHECK(reads.wholes == 0);
    CHECK(reads.messages == 32 + 3); // the last 32 saved, compared; the 3 new, written
    CHECK(reads.lowest == 100 - 32);
    // The same log as `save` of the whole JSON writes.
    CHECK(append_cp::slurp(cp.path_of("t")) == append_cp::slurp(plain.path_of("t")));
    CHECK(*append_file_checkpointer(dir.path()).load("t") == state_with(103, boost::json::array{"plan"}));

    reads.reset();
    save_both(state_with(50)); // a shorter history: a snapshot
    CHECK(reads.wholes == 1);
    CHECK(records(cp.path_of("t")).size() == 1);
    CHECK(*append_file_checkpointer(dir.path()).load("t") == state_with(50));
}

TEST_CASE("an agent checkpoints each tool result as its call completes",
          "[agent][checkpointer][append][concurrency]") {
    scratch_dir dir;
    auto seen = std::make_shared<boost::json::value>();
    scripted_model model(
        {test::calls({test::call("c1", "fast"), test::call("c2", "slow")}), ai_message("done")});
    auto a = make_agent(model, append_cp::crash_probe_tools(dir.path(), seen));
    a.use_checkpointer(append_file_checkpointer(dir.path()));
    run_config cfg;
    cfg.thread_id = "probe";
    auto r = a.invoke("go", cfg);
    REQUIRE(r.reason == stop_reason::finished);
    // While "slow" ran, the log held the question, the calls and "fast"'s result.
    append_cp::check_crash_view(*seen);
    // The final state replaces the pending result: each message once.
    auto final_state = *append_file_checkpointer(dir.path()).load("probe");
    CHECK(final_state.at("messages").as_array().size() == 5);
    CHECK(boost::json::value_to<message>(final_state.at("messages").as_array().back()).text() == "done");

    // `run` on a caller's state checkpoints nothing.
    scratch_dir other;
    auto b = make_agent(scripted_model({ai_message("x")}), tool_set{});
    b.use_checkpointer(append_file_checkpointer(other.path()));
    decltype(b)::state_type state;
    (void)b.run(state, "hi", cfg);
    CHECK(append_file_checkpointer(other.path()).list().empty());
}

TEST_CASE("the coroutine loop checkpoints each tool result too", "[agent][checkpointer][append][async]") {
    scratch_dir dir;
    auto seen = std::make_shared<boost::json::value>();
    scripted_model model(
        {test::calls({test::call("c1", "fast"), test::call("c2", "slow")}), ai_message("done")});
    auto a = make_agent(model, append_cp::crash_probe_tools(dir.path(), seen));
    a.use_checkpointer(append_file_checkpointer(dir.path()));
    run_config cfg;
    cfg.thread_id = "probe";
    auto r = test::run_async(a, "go", cfg);
    REQUIRE(r.reason == stop_reason::finished);
    append_cp::check_crash_view(*seen);
}

TEST_CASE("an agent saves what changed, not its whole state, in both loops",
          "[agent][checkpointer][append][async]") {
    for (const bool async : {false, true}) {
        CAPTURE(async);
        scratch_dir dir;
        append_cp::counted_checkpointer counted{std::make_shared<append_file_checkpointer>(dir.path())};
        auto reads = counted.reads;
        auto echo =
            make_tool("echo", "Echo.", boost::json::object{},
                      [](const boost::json::object&, const tool_runtime&) { return std::string("echoed"); });
        scripted_model model(
            {ai_message("noted"), test::calls({test::call("c1", "echo")}), ai_message("done")});
        auto a = make_agent(model, tool_set(echo));
        a.use_checkpointer(counted);
        run_config cfg;
        cfg.thread_id = "long";
        // A long first turn: its save is the thread's first, a snapshot.
        agent_input first;
        for (int i = 0; i < 200; ++i)
            first.messages.push_back(human_message("line " + std::to_string(i)));
        auto r1 = async ? test::run_async(a, std::move(first), cfg) : a.invoke(std::move(first), cfg);
        REQUIRE(r1.reason == stop_reason::finished);
        CHECK(reads->wholes == 1);

        // A tool round: the saves before the round, of its result and at the
        // end read the new messages and the last 32, never the whole history.
        reads->reset();
        auto r2 = async ? test::run_async(a, "go", cfg) : a.invoke("go", cfg);
        REQUIRE(r2.reason == stop_reason::finished);
        CHECK(reads->wholes == 0);
        CHECK(reads->plain_saves == 0);
        CHECK(reads->lowest >= 201 - 32);
        CHECK(reads->messages <= 2 * 32 + 4);
        const auto saved = *append_file_checkpointer(dir.path()).load("long");
        CHECK(saved == boost::json::value_from(r2.state));
        CHECK(saved.at("messages").as_array().size() == 205);
        CHECK(records(dir.path() / "long.jsonl").size() == 4); // the snapshot, the round, its result, the end
    }
}
