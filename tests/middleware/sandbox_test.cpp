// The sandbox middleware's lifecycle: a thread keeps its sandbox across runs, every
// run releases it, lazy_init off acquires it before the first model call.
#include <agentware/middleware/sandbox.hpp>

#include "deerflow_support.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

using namespace agentware;

namespace {
struct counting_provider {
    struct counts {
        std::mutex m;
        int acquired = 0, released = 0;
        std::vector<std::string> released_ids;
    };
    std::shared_ptr<counts> c = std::make_shared<counts>();
    std::string acquire(std::string_view thread, std::string_view user) {
        std::lock_guard l(c->m);
        ++c->acquired;
        return fmt::format("box:{}:{}", user, thread);
    }
    void release(std::string_view id) {
        std::lock_guard l(c->m);
        ++c->released;
        c->released_ids.emplace_back(id);
    }
};
} // namespace

TEST_CASE("a thread keeps its sandbox across runs, every run releases it",
          "[middleware][sandbox][lifecycle]") {
    dftest::temp_dir base;
    counting_provider provider;
    scripted_model model(
        {test::calls(
             {test::call("c1", "write_file",
                         R"({"description":"d","path":"/mnt/user-data/workspace/a","content":"1"})"),
              test::call("c2", "write_file",
                         R"({"description":"d","path":"/mnt/user-data/workspace/b","content":"2"})")}),
         ai_message("done"),
         test::calls(
             {test::call("c3", "read_file", R"({"description":"d","path":"/mnt/user-data/workspace/a"})")}),
         ai_message("done again")});
    auto a = make_agent(model, tool_set{}, thread_data({base.path.string(), true}), sandbox({}, provider));
    a.use_checkpointer(memory_checkpointer{});
    run_config cfg;
    cfg.thread_id = "t9";
    auto r1 = a.invoke("write", cfg);
    REQUIRE(r1.ok());
    CHECK(r1.state.get<sandbox_field>()->sandbox_id == "box:default:t9");
    CHECK(provider.c->acquired == 2); // two parallel first calls, one id: the merge accepts it
    auto r2 = a.invoke("read", cfg);
    REQUIRE(r2.ok());
    CHECK(r2.state.messages[r2.state.messages.size() - 2].text() == "1");
    CHECK(provider.c->acquired == 2); // reused from the state
    CHECK(provider.c->released == 2);
    CHECK(provider.c->released_ids == std::vector<std::string>{"box:default:t9", "box:default:t9"});
}

TEST_CASE("with lazy_init off the sandbox is acquired before the first model call",
          "[middleware][sandbox][lifecycle]") {
    dftest::temp_dir base;
    counting_provider provider;
    scripted_model model({ai_message("hi")});
    sandbox_options o;
    o.lazy_init = false;
    auto a = make_agent(model, tool_set{}, thread_data({base.path.string(), true}), sandbox(o, provider));
    run_config cfg;
    cfg.context["user_id"] = "u1";
    auto r = a.invoke("x", cfg);
    REQUIRE(r.ok());
    CHECK(r.state.get<sandbox_field>()->sandbox_id == "box:u1:default");
    CHECK(provider.c->acquired == 1);
    CHECK(provider.c->released == 1);
}
