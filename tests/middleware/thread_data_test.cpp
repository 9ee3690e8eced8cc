// thread_data: the per-user thread directories.
#include "deerflow_support.hpp"

#include <catch2/catch.hpp>

using namespace agentware;
using dftest::fs::path;
namespace fs = std::filesystem;

namespace {
struct dirs_probe {
    using state_fields = fields<thread_data_field>;
    std::optional<thread_paths> seen;
    template <class S>
    void before_agent(S& s, runtime&) {
        seen = get<thread_data_field>(s);
    }
};
} // namespace

TEST_CASE("thread_data computes the per-user thread directories without creating them",
          "[middleware][thread_data]") {
    dftest::temp_dir base;
    scripted_model model({ai_message("ok")});
    auto a = make_agent(model, tool_set{}, thread_data({base.path.string(), true}));
    run_config cfg;
    cfg.thread_id = "thread-1";
    cfg.run_id = "run-7";
    auto r = a.invoke("hello", cfg);
    REQUIRE(r.ok());
    const auto& td = r.state.get<thread_data_field>();
    REQUIRE(td);
    const auto root = base.path / "users" / "default" / "threads" / "thread-1" / "user-data";
    CHECK(td->workspace_path == (root / "workspace").string());
    CHECK(td->uploads_path == (root / "uploads").string());
    CHECK(td->outputs_path == (root / "outputs").string());
    CHECK_FALSE(fs::exists(base.path / "users")); // lazy: nothing on disk

    const message& human = r.state.messages.front();
    CHECK(human.name == "user-input");
    CHECK(human.metadata.at("run_id") == "run-7");
    const std::string ts(human.metadata.at("timestamp").as_string());
    CHECK(ts.size() == 32);
    CHECK(ts.ends_with("+00:00"));
}

TEST_CASE("thread_data with lazy_init off creates the directories and uses the context's user",
          "[middleware][thread_data]") {
    dftest::temp_dir base;
    scripted_model model({ai_message("ok")});
    auto a = make_agent(model, tool_set{}, thread_data({base.path.string(), false}));
    run_config cfg;
    cfg.thread_id = "t2";
    cfg.context["user_id"] = "alice";
    message named = human_message("hi");
    named.name = "bob";
    auto r = a.invoke(named, cfg);
    REQUIRE(r.ok());
    const auto thread = base.path / "users" / "alice" / "threads" / "t2";
    for (auto d : {"workspace", "uploads", "outputs"})
        CHECK(fs::is_directory(thread / "user-data" / d));
    CHECK(fs::is_directory(thread / "acp-workspace"));
    CHECK(r.state.messages.front().name == "bob"); // an existing name is kept
}

TEST_CASE("thread_data rejects bad thread and user ids before touching the disk",
          "[middleware][thread_data][paths]") {
    dftest::temp_dir base;
    scripted_model model({ai_message("never")});
    auto a = make_agent(model, tool_set{}, thread_data({base.path.string(), false}));

    SECTION("a traversal in the context's thread id") {
        decltype(a)::state_type s;
        run_config cfg;
        cfg.context["thread_id"] = "../../etc";
        auto r = a.run(s, "x", cfg);
        CHECK(r.reason == stop_reason::error);
        CHECK(r.error ==
              R"(invalid thread id "../../etc": use 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-')");
    }
    SECTION("a thread id that is too long") {
        decltype(a)::state_type s;
        run_config cfg;
        cfg.thread_id = std::string(65, 'a');
        auto r = a.run(s, "x", cfg);
        CHECK(r.reason == stop_reason::error);
        CHECK_THAT(r.error, Catch::Contains("(65 bytes long)"));
    }
    SECTION("a user id with a slash") {
        decltype(a)::state_type s;
        run_config cfg;
        cfg.context["user_id"] = "a/../../b";
        auto r = a.run(s, "x", cfg);
        CHECK(r.reason == stop_reason::error);
        CHECK(r.error == R"(invalid user id "a/../../b": use characters from A-Z, a-z, 0-9, '_' and '-')");
    }
    CHECK(model.calls() == 0);
    CHECK(fs::is_empty(base.path));
}
