// human_in_the_loop: review requests, decisions, the count check, what the
// model sees after a reject, both loops, and the JSON options form.
#include <agentware/middleware/human_in_the_loop.hpp>

#include "../agent/run_async.hpp"
#include "human_in_the_loop_support.hpp"

#include <agentware/middleware/ask_user.hpp>
#include <agentware/middleware/tool_error_handling.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <atomic>
#include <memory>
#include <stdexcept>

using namespace agentware;
using strings = std::vector<std::string>;

namespace hitl_test {

inline human_in_the_loop_options write_and_delete() {
    human_in_the_loop_options o;
    o.interrupt_on["write_file"] = interrupt_on_config{};
    interrupt_on_config del;
    del.allowed_decisions = {"approve", "reject"};
    o.interrupt_on["delete"] = del;
    return o;
}

} // namespace hitl_test

TEST_CASE("human_in_the_loop: one interrupt per turn with every call that needs review",
          "[middleware][human_in_the_loop][interrupt]") {
    auto c = std::make_shared<hitl_test::counter>();
    scripted_model model({test::calls({test::call("w1", "write_file", R"({"path":"/a.txt","content":"x"})"),
                                       test::call("r1", "read_file", R"({"path":"/b.txt"})"),
                                       test::call("d1", "delete", R"({"path":"/c.txt"})")}),
                          ai_message("done")});
    auto a = make_agent(model, hitl_test::files(c), human_in_the_loop(hitl_test::write_and_delete()));
    a.use_checkpointer(memory_checkpointer{});

    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::interrupted);
    REQUIRE(r.interrupts.size() == 1);
    CHECK(r.interrupts[0].value == boost::json::parse(R"({
        "action_requests": [
          {"name": "write_file", "args": {"path": "/a.txt", "content": "x"},
           "description": "Tool execution requires approval\n\nTool: write_file\nArgs: {'path': '/a.txt', 'content': 'x'}"},
          {"name": "delete", "args": {"path": "/c.txt"},
           "description": "Tool execution requires approval\n\nTool: delete\nArgs: {'path': '/c.txt'}"}],
        "review_configs": [
          {"action_name": "write_file", "allowed_decisions": ["approve", "edit", "reject", "respond"]},
          {"action_name": "delete", "allowed_decisions": ["approve", "reject"]}]})"));
    // The call that needs no review ran before the pause.
    CHECK(c->of("r1") == 1);
    CHECK(c->of("w1") == 0);
    CHECK(c->of("d1") == 0);

    SECTION("approve and reject: the rejected call is answered, the model sees both") {
        auto done = a.invoke(resume{
            hitl_test::decisions(R"([{"type":"approve"},{"type":"reject","message":"not that one"}])")});
        REQUIRE(done.reason == stop_reason::finished);
        CHECK(c->of("w1") == 1);
        CHECK(c->of("d1") == 0);
        CHECK(c->of("r1") == 1);
        const message* rej = hitl_test::answer_to(done.state.messages, "d1");
        REQUIRE(rej != nullptr);
        CHECK(rej->text() == "not that one");
        CHECK(rej->status == tool_status::error);
        CHECK(rej->name == "delete");
        // The ai message keeps the rejected call (Python), and the model was called again.
        CHECK(done.state.messages[1].tool_calls.size() == 3);
        CHECK(model.calls() == 2);
        CHECK(done.answer() == "done");
    }
    SECTION("edit keeps the call id; reject without a message gets LangChain's text") {
        auto done = a.invoke(resume{hitl_test::decisions(
            R"([{"type":"edit","edited_action":{"name":"write_file","args":{"path":"/safe.txt","content":"y"}}},
                {"type":"reject"}])")});
        REQUIRE(done.reason == stop_reason::finished);
        CHECK(c->of("w1") == 1);
        CHECK(c->args["w1"] == R"({"path":"/safe.txt","content":"y"})");
        CHECK(done.state.messages[1].tool_calls[0].id == "w1");
        CHECK(done.state.messages[1].tool_calls[0].args.at("path") == "/safe.txt");
        CHECK(hitl_test::answer_to(done.state.messages, "d1")->text() ==
              "User rejected the tool call for `delete` with id d1");
    }
    SECTION("respond answers as the tool, with a successful status") {
        auto done = a.invoke(resume{
            hitl_test::decisions(R"([{"type":"respond","message":"written by hand"},{"type":"approve"}])")});
        REQUIRE(done.reason == stop_reason::finished);
        CHECK(c->of("w1") == 0);
        CHECK(c->of("d1") == 1);
        CHECK(hitl_test::answer_to(done.state.messages, "w1")->text() == "written by hand");
        CHECK(hitl_test::answer_to(done.state.messages, "w1")->status == tool_status::ok);
    }
    SECTION("the wrong number of decisions is an error, and the run can still be resumed") {
        auto bad = a.invoke(resume{hitl_test::decisions(R"([{"type":"approve"}])")});
        CHECK(bad.reason == stop_reason::error);
        CHECK_THAT(bad.error,
                   Catch::StartsWith("Number of human decisions (1) does not match number of hanging "
                                     "tool calls (2)."));
        CHECK(c->of("w1") == 0);
        auto disallowed = a.invoke(resume{hitl_test::decisions(R"([{"type":"approve"},{"type":"edit"}])")});
        CHECK(disallowed.reason == stop_reason::error);
        CHECK_THAT(
            disallowed.error,
            Catch::StartsWith("Unexpected human decision: {'type': 'edit'}. Decision type 'edit' is not "
                              "allowed for tool 'delete'. Expected one of ['approve', 'reject'] based on "
                              "the tool's configuration."));
        auto shapeless = a.invoke(resume{"yes"});
        CHECK(shapeless.reason == stop_reason::error);
        CHECK_THAT(shapeless.error, Catch::Contains("\"decisions\" array"));
        auto done = a.invoke(resume{hitl_test::decisions(R"([{"type":"approve"},{"type":"approve"}])")});
        REQUIRE(done.reason == stop_reason::finished);
        CHECK(c->of("w1") == 1);
        CHECK(c->of("d1") == 1);
        CHECK(c->of("r1") == 1);
    }
}

TEST_CASE("human_in_the_loop: a reject followed by a new model turn that is reviewed again",
          "[middleware][human_in_the_loop][interrupt][async]") {
    for (bool coroutine : {false, true}) {
        auto c = std::make_shared<hitl_test::counter>();
        scripted_model model({test::calls({test::call("w1", "write_file", R"({"path":"/a"})")}),
                              test::calls({test::call("w2", "write_file", R"({"path":"/b"})")}),
                              ai_message("ok")});
        auto a = make_agent(model, hitl_test::files(c), human_in_the_loop(hitl_test::write_and_delete()));
        a.use_checkpointer(memory_checkpointer{});
        auto go = [&](auto in) { return coroutine ? test::run_async(a, in) : a.invoke(in); };
        auto resume_with = [&](resume r) { return coroutine ? test::resume_async(a, r) : a.invoke(r); };
        auto r = go("go");
        REQUIRE(r.reason == stop_reason::interrupted);
        auto second = resume_with(resume{hitl_test::decisions(R"([{"type":"reject","message":"use /b"}])")});
        // The model read the rejection and tried again: a second review.
        REQUIRE(second.reason == stop_reason::interrupted);
        CHECK(model.calls() == 2);
        CHECK(hitl_test::answer_to(second.state.messages, "w1")->text() == "use /b");
        CHECK(second.interrupts[0].value.at("action_requests").at(0).at("args") ==
              boost::json::parse(R"({"path":"/b"})"));
        auto done = resume_with(resume{hitl_test::decisions(R"([{"type":"approve"}])")});
        REQUIRE(done.reason == stop_reason::finished);
        CHECK(c->of("w1") == 0);
        CHECK(c->of("w2") == 1);
        CHECK(test::roles(done.state.messages) == strings{"human", "ai", "tool", "ai", "tool", "ai"});
    }
}

TEST_CASE("human_in_the_loop: `when`, description functions and unreviewed turns",
          "[middleware][human_in_the_loop]") {
    auto c = std::make_shared<hitl_test::counter>();
    human_in_the_loop_options o;
    interrupt_on_config cfg;
    cfg.when = [](const tool_call& call, const std::vector<message>&, const runtime&) {
        return call.args.at("path").as_string().starts_with("/etc");
    };
    cfg.describe = [](const tool_call& call, const std::vector<message>&, const runtime&) {
        return "Write " + std::string(call.args.at("path").as_string()) + "?";
    };
    cfg.args_schema = boost::json::parse(R"({"type":"object"})").as_object();
    o.interrupt_on["write_file"] = cfg;
    scripted_model model({test::calls({test::call("w1", "write_file", R"({"path":"/tmp/x"})"),
                                       test::call("w2", "write_file", R"({"path":"/etc/passwd"})")}),
                          ai_message("ok")});
    auto a = make_agent(model, hitl_test::files(c), human_in_the_loop(o));
    a.use_checkpointer(memory_checkpointer{});
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::interrupted);
    CHECK(r.interrupts[0].value.at("action_requests").as_array().size() == 1);
    CHECK(r.interrupts[0].value.at("action_requests").at(0).at("description") == "Write /etc/passwd?");
    CHECK(r.interrupts[0].value.at("review_configs").at(0).at("args_schema") ==
          boost::json::parse(R"({"type":"object"})"));
    CHECK(c->of("w1") == 1);
    auto done = a.invoke(resume{hitl_test::decisions(R"([{"type":"approve"}])")});
    REQUIRE(done.reason == stop_reason::finished);
    CHECK(c->of("w1") == 1);
    CHECK(c->of("w2") == 1);
}

TEST_CASE("human_in_the_loop options read LangChain's JSON form",
          "[middleware][human_in_the_loop][options]") {
    auto o = boost::json::value_to<human_in_the_loop_options>(boost::json::parse(
        R"({"interrupt_on": {"write_file": true, "ls": false,
                             "delete": {"allowed_decisions": ["approve", "reject"], "description": "Delete?"}},
            "description_prefix": "Please check"})"));
    CHECK(o.interrupt_on.size() == 2);
    CHECK(o.interrupt_on.at("write_file").allowed_decisions ==
          strings{"approve", "edit", "reject", "respond"});
    CHECK(o.interrupt_on.at("delete").allowed_decisions == strings{"approve", "reject"});
    CHECK(o.interrupt_on.at("delete").description == "Delete?");
    CHECK(o.description_prefix == "Please check");
    auto back = boost::json::value_to<human_in_the_loop_options>(boost::json::value_from(o));
    CHECK(back.interrupt_on.at("delete").allowed_decisions == strings{"approve", "reject"});

    auto error_of = [](std::string_view json) {
        try {
            (void)boost::json::value_to<human_in_the_loop_options>(boost::json::parse(json));
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(error_of(R"({"interrupt_on": {"x": 3}})") ==
          "human_in_the_loop.interrupt_on.x: expected true, false or an object, got 3");
    CHECK(error_of(R"({"interrupt_on": {"x": {"allowed": []}}})") ==
          "human_in_the_loop.interrupt_on.x.allowed: unknown key (known: allowed_decisions, description, "
          "args_schema)");
    CHECK(error_of(R"({"interrupt_on": {"x": {"allowed_decisions": ["maybe"]}}})") ==
          "human_in_the_loop: interrupt_on.x.allowed_decisions: unknown decision \"maybe\" (known: approve, "
          "edit, reject, respond)");
    CHECK(error_of(R"({"interupt_on": {}})").starts_with("human_in_the_loop.interupt_on: unknown key"));
}

TEST_CASE("human_in_the_loop: an error-handling middleware does not swallow the pause",
          "[middleware][human_in_the_loop][interrupt]") {
    auto c = std::make_shared<hitl_test::counter>();
    scripted_model model(
        {test::calls({test::call("q1", "ask_user", R"({"question":"Which file?"})")}), ai_message("thanks")});
    auto a = make_agent(model, hitl_test::files(c), tool_error_handling{}, ask_user{});
    a.use_checkpointer(memory_checkpointer{});
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::interrupted);
    CHECK(r.interrupts[0].id == "q1");
    CHECK(r.interrupts[0].value == boost::json::parse(R"({"type":"ask_user","question":"Which file?"})"));
    auto done = a.invoke(resume{boost::json::parse(R"({"answer":"/b.txt"})")});
    REQUIRE(done.reason == stop_reason::finished);
    CHECK(hitl_test::answer_to(done.state.messages, "q1")->text() == "/b.txt");
}
