// tool_approval: a decision per call in process, or a pause for the user, in both loops.
#include <agentware/middleware/tool_approval.hpp>

#include "../agent/run_async.hpp"
#include "human_in_the_loop_support.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <memory>

using namespace agentware;

TEST_CASE("tool_approval answers in process, or pauses when it must ask",
          "[middleware][tool_approval][async]") {
    auto c = std::make_shared<hitl_test::counter>();
    auto decide = [](const tool_call& call) {
        if (call.name == "read_file") return tool_approval_decision::approve;
        if (call.name == "delete") return tool_approval_decision::deny;
        return tool_approval_decision::ask_user;
    };
    SECTION("approve, deny, and a confirmation asked in process") {
        scripted_model model({test::calls({test::call("r1", "read_file"), test::call("d1", "delete"),
                                           test::call("w1", "write_file"), test::call("w2", "write_file")}),
                              ai_message("ok")});
        tool_approval_options o;
        o.handler = decide;
        o.confirm = [](const tool_call& call) { return call.id == "w1"; };
        auto a = make_agent(model, hitl_test::files(c), tool_approval(o));
        auto r = a.invoke("go");
        REQUIRE(r.reason == stop_reason::finished);
        CHECK(c->of("r1") == 1);
        CHECK(c->of("d1") == 0);
        CHECK(c->of("w1") == 1);
        CHECK(c->of("w2") == 0);
        CHECK(hitl_test::answer_to(r.state.messages, "d1")->text() ==
              "User rejected the tool call for `delete` with id d1");
        CHECK(hitl_test::answer_to(r.state.messages, "d1")->status == tool_status::error);
    }
    SECTION("without a confirmation, ask_user pauses; the others run once") {
        for (bool coroutine : {false, true}) {
            auto c2 = std::make_shared<hitl_test::counter>();
            scripted_model model(
                {test::calls({test::call("r1", "read_file"), test::call("w1", "write_file")}),
                 ai_message("ok")});
            auto a = make_agent(model, hitl_test::files(c2), tool_approval(decide));
            a.use_checkpointer(memory_checkpointer{});
            auto r = coroutine ? test::run_async(a, "go") : a.invoke("go");
            REQUIRE(r.reason == stop_reason::interrupted);
            CHECK(r.interrupts[0].id == "w1");
            CHECK(r.interrupts[0].value.at("review_configs").at(0).at("allowed_decisions") ==
                  boost::json::parse(R"(["approve","reject"])"));
            CHECK(c2->of("r1") == 1);
            auto done = coroutine
                            ? test::resume_async(a, resume{hitl_test::decisions(R"([{"type":"approve"}])")})
                            : a.invoke(resume{hitl_test::decisions(R"([{"type":"approve"}])")});
            REQUIRE(done.reason == stop_reason::finished);
            CHECK(c2->of("r1") == 1);
            CHECK(c2->of("w1") == 1);
        }
    }
}
