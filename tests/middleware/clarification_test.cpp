// clarification: the question's text and structured request, ending the run,
// the context switches, batched calls dropped; and the whole guard chain end to end.
#include "../agent/support.hpp"

#include <agentware/middleware/clarification.hpp>
#include <agentware/middleware/dangling_tool_call.hpp>
#include <agentware/middleware/guardrail.hpp>
#include <agentware/middleware/loop_detection.hpp>
#include <agentware/middleware/subagent_limit.hpp>
#include <agentware/middleware/tool_error_handling.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>

using namespace agentware;
using strings = std::vector<std::string>;

namespace {

std::string text_for(const char* args_json, std::string id = "c1") {
    return clarification{}.build(boost::json::parse(args_json).as_object(), id).text;
}

boost::json::object payload_for(const char* args_json, std::string id = "c1") {
    return clarification{}.build(boost::json::parse(args_json).as_object(), id).payload;
}

tool_call ask(std::string id, const char* args) {
    return test::call(std::move(id), "ask_clarification", args);
}

} // namespace

TEST_CASE("a clarification question is formatted with its type's icon", "[middleware][clarification]") {
    CHECK(text_for(R"({"question":"Which file?","clarification_type":"missing_info"})") == "❓ Which file?");
    CHECK(text_for(R"({"question":"Q","clarification_type":"ambiguous_requirement"})") == "🤔 Q");
    CHECK(text_for(R"({"question":"Q","clarification_type":"approach_choice"})") == "🔀 Q");
    CHECK(text_for(R"({"question":"Q","clarification_type":"risk_confirmation"})") == "⚠️ Q");
    CHECK(text_for(R"({"question":"Q","clarification_type":"suggestion"})") == "💡 Q");
    CHECK(text_for(R"({"question":"Q","clarification_type":"whatever"})") == "❓ Q");
    CHECK(text_for(R"({"question":"Q"})") == "❓ Q");
    CHECK(text_for(R"({})") == "❓ ");
}

TEST_CASE("context and numbered options follow the question", "[middleware][clarification]") {
    CHECK(text_for(R"({"question":"Deploy where?","clarification_type":"approach_choice",
                       "context":"Two targets exist.","options":["staging","production"]})") ==
          "🔀 Two targets exist.\n\nDeploy where?\n\n  1. staging\n  2. production");
    CHECK(text_for(R"({"question":"Q","context":"","options":[]})") == "❓ Q");
}

TEST_CASE("options are normalized: JSON text, mappings, scalars, tags, blanks, duplicates",
          "[middleware][clarification]") {
    using v = boost::json::value;
    auto norm = [](const char* json) { return clarification::normalize_options(boost::json::parse(json)); };
    CHECK(norm(R"("[\"a\",\"b\"]")") == strings{"a", "b"});
    CHECK(norm(R"("just one")") == strings{"just one"});
    CHECK(norm(R"({"x":"first","y":{"z":2}})") == strings{"first", "2"});
    CHECK(norm(R"(["<b>bold</b>", "  a  ", "", "a", 1.5, true, null])") ==
          strings{"bold", "a", "1.5", "True"});
    CHECK(clarification::normalize_options(v(7)) == strings{"7"});
    CHECK(text_for(R"({"question":"Q","options":"[\"x\",\"y\"]"})") == "❓ Q\n\n  1. x\n  2. y");
}

TEST_CASE("form fields are listed with their marks and a closing line", "[middleware][clarification]") {
    const char* args = R"({"question":"Details?","clarification_type":"missing_info","fields":[
        {"name":"env","label":"Environment","type":"select","options":["dev","prod"],"required":true},
        {"name":"tags","type":"multi_select","options":["a","b"]},
        {"name":"note","label":"  ","type":"weird","required":"TRUE","placeholder":" say more "}]})";
    CHECK(text_for(args) == "❓ Details?\n\n  1. Environment (required) — options: dev / prod\n"
                            "  2. tags — options: a / b (multiple allowed)\n  3. note (required)\n\n"
                            "Please reply with a value for each field.");
    auto p = payload_for(args);
    CHECK(p.at("version") == 2);
    CHECK(p.at("input_mode") == "form");
    const auto& fields = p.at("fields").as_array();
    REQUIRE(fields.size() == 3);
    CHECK(fields[0].at("options").at(1) ==
          boost::json::parse(R"({"id":"env-option-2","label":"prod","value":"prod"})"));
    CHECK(fields[2].at("type") == "text");
    CHECK(fields[2].at("label") == "note");
    CHECK(fields[2].at("placeholder") == "say more");
    CHECK_FALSE(p.contains("options"));
}

TEST_CASE("any structural error in the fields means no form at all", "[middleware][clarification]") {
    clarification c;
    auto fields = [&](const char* json) { return c.normalize_fields(boost::json::parse(json)); };
    CHECK(fields(R"([{"name":"a"}])"));
    CHECK(fields(R"("[{\"name\":\"a\"}]")"));              // JSON text
    CHECK_FALSE(fields(R"([{"name":"a"},{"name":"a"}])")); // duplicate
    CHECK_FALSE(fields(R"([{"name":"__proto__"}])"));      // reserved
    CHECK_FALSE(fields(R"([{"name":"  "}])"));             // blank
    CHECK_FALSE(fields(R"([{"label":"no name"}])"));
    CHECK_FALSE(fields(R"([{"name":"a"}, 3])"));
    CHECK_FALSE(fields(R"({"name":"a"})"));
    CHECK_FALSE(fields(R"("not json")"));
    CHECK_FALSE(fields(R"([])"));
    std::string seventeen = "[";
    for (int i = 0; i < 17; ++i)
        seventeen += fmt::format(R"({}{{"name":"f{}"}})", i ? "," : "", i);
    CHECK_FALSE(fields((seventeen + "]").c_str()));
    std::string long_name = R"([{"name":")" + std::string(201, 'n') + R"("}])";
    CHECK_FALSE(fields(long_name.c_str()));
    std::string options;
    for (int i = 0; i < 24; ++i)
        options += fmt::format(R"({}"{}{}")", i ? "," : "", i, std::string(190, 'o'));
    std::string huge = fmt::format(
        R"([{{"name":"a","type":"select","options":[{0}]}},{{"name":"b","type":"select","options":[{0}]}})",
        options);
    REQUIRE(c.normalize_fields(
        boost::json::parse(R"([{"name":"a","type":"select","options":[)" + options + "]}]")));
    CHECK_FALSE(fields((huge + "]").c_str())); // over 16384 bytes as JSON
    // without a form, the options are shown instead
    CHECK(text_for(R"({"question":"Q","fields":[{"name":"a"},{"name":"a"}],"options":["x"]})") ==
          "❓ Q\n\n  1. x");
}

TEST_CASE("the structured request carries what a UI needs", "[middleware][clarification]") {
    auto p = payload_for(
        R"({"question":"Pick","clarification_type":"approach_choice","options":["a","b"],"context":null})");
    CHECK(p == boost::json::parse(R"({"version":1,"kind":"human_input_request","source":"ask_clarification",
        "request_id":"clarification:c1","clarification_type":"approach_choice","question":"Pick",
        "input_mode":"choice_with_other","tool_call_id":"c1","context":null,
        "options":[{"id":"option-1","label":"a","value":"a"},{"id":"option-2","label":"b","value":"b"}]})"));
    auto free = payload_for(R"({"question":"Why?"})", "");
    CHECK(free.at("input_mode") == "free_text");
    CHECK_FALSE(free.contains("tool_call_id"));
    CHECK_FALSE(free.contains("context"));
    // no call id: the id is derived from the text (first 16 hex digits of its SHA-256)
    CHECK(free.at("request_id").as_string() ==
          "clarification:" + detail::sha256_hex("❓ Why?").substr(0, 16));
    CHECK(detail::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(detail::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("asking for clarification ends the run with the question as the tool message",
          "[middleware][clarification][agent]") {
    scripted_model model(
        {test::calls({ask("c1", R"({"question":"Which city?","clarification_type":"missing_info",
                                                     "options":["Paris","Rome"]})")},
                     "I need to ask.")});
    auto a = make_agent(model, tool_set{}, clarification{});
    auto r = a.invoke("Book a flight");
    REQUIRE(r.reason == stop_reason::ended_by_tool);
    CHECK(model.calls() == 1);
    const message& q = r.state.messages.back();
    CHECK(q.is_tool());
    CHECK(q.id == "clarification:c1");
    CHECK(q.name == "ask_clarification");
    CHECK(q.tool_call_id() == "c1");
    CHECK_FALSE(q.is_error());
    CHECK(q.text() == "❓ Which city?\n\n  1. Paris\n  2. Rome");
    CHECK(q.metadata.at("human_input").at("request_id") == "clarification:c1");
    CHECK(model.requests()[0].tool_names == strings{"ask_clarification"}); // the middleware brings its tool
}

TEST_CASE("malformed clarification arguments still give a question, not a crash",
          "[middleware][clarification][agent]") {
    scripted_model model(
        {test::calls({ask("c1", R"({"question":42,"clarification_type":7,"options":{"a":[1,{"b":null}]},
                                                     "fields":"{broken"})")})});
    auto a = make_agent(model, tool_set{}, clarification{});
    auto r = a.invoke("x");
    REQUIRE(r.reason == stop_reason::ended_by_tool);
    CHECK(r.state.messages.back().text() == "❓ 42\n\n  1. 1");
}

TEST_CASE("with disable_clarification the model is told to proceed and the run goes on",
          "[middleware][clarification][agent]") {
    scripted_model model(
        {test::calls({ask("c1", R"({"question":"Sure?","clarification_type":"risk_confirmation"})"),
                      test::call("c2", "echo", R"({"text":"did it"})")}),
         ai_message("done")});
    auto a = make_agent(model, tool_set(test::echo_tool()), clarification{});
    run_config cfg;
    cfg.context["disable_clarification"] = true;
    auto r = a.invoke("x", cfg);
    REQUIRE(r.reason == stop_reason::finished);
    const message& m = r.state.messages.at(2);
    CHECK(m.id == "clarification:c1");
    CHECK(m.text() ==
          "Clarification is disabled in this context — the human is not present to answer synchronously. "
          "Do not ask for confirmation. Proceed with your best judgment, carry out the requested action, "
          "and state any assumptions you made in your final response.");
    CHECK(r.state.messages.at(3).text() == "did it"); // the batched call ran: nobody is asked
}

TEST_CASE("a non-interactive run is not offered the tool", "[middleware][clarification][agent]") {
    scripted_model model({ai_message("ok")});
    auto a = make_agent(model, tool_set(test::echo_tool()), clarification{});
    run_config cfg;
    cfg.context["non_interactive"] = true;
    REQUIRE(a.invoke("x", cfg).ok());
    CHECK(model.requests()[0].tool_names == strings{"echo"});
    REQUIRE(a.invoke("y").ok() == false); // script ran out, but the tool was offered
    CHECK(model.requests()[1].tool_names == strings{"echo", "ask_clarification"});
}

TEST_CASE("calls batched with a clarification are dropped from the answer",
          "[middleware][clarification][agent]") {
    std::atomic<int> runs{0};
    auto side_effect =
        make_tool("deploy", "Deploys.", R"({"type":"object"})", [&](const boost::json::object&) {
            ++runs;
            return std::string("deployed");
        });
    scripted_model model(
        {test::calls({test::call("d1", "deploy"), ask("c1", R"({"question":"Really deploy?"})"),
                      test::call("d2", "deploy"), ask("c2", R"({"question":"Where?"})")},
                     "Let me check first.")});
    auto a = make_agent(model, tool_set(side_effect), clarification{});
    auto r = a.invoke("x");
    REQUIRE(r.reason == stop_reason::ended_by_tool);
    CHECK(runs == 0);
    REQUIRE(r.state.messages.size() == 4); // the question, the answer, one result per clarification
    const message& answer = r.state.messages.at(1);
    REQUIRE(answer.tool_calls.size() == 2); // both clarifications kept, in their order
    CHECK(answer.tool_calls[0].id == "c1");
    CHECK(answer.tool_calls[1].id == "c2");
    CHECK(answer.text() == "Let me check first."); // no note: the text stays the model's
    CHECK(r.state.messages.at(2).tool_call_id() == "c1");
    CHECK(r.state.messages.at(2).text() == "❓ Really deploy?");
    CHECK(r.state.messages.at(3).tool_call_id() == "c2");
    for (const auto& m : r.state.messages)
        CHECK(m.tool_call_id() != "d1");

    clarification_options off;
    off.skip_batched_calls = false;
    scripted_model model2({test::calls({test::call("d1", "deploy"), ask("c1", R"({"question":"Q"})")})});
    auto b = make_agent(model2, tool_set(side_effect), clarification{off});
    auto r2 = b.invoke("x");
    REQUIRE(r2.reason == stop_reason::ended_by_tool);
    CHECK(runs == 1);
    CHECK(r2.state.messages.at(1).tool_calls.size() == 2);
}

TEST_CASE("after_model leaves an answer without a clarification, or with only clarifications, as it is",
          "[middleware][clarification]") {
    clarification c;
    runtime rt;
    struct {
        std::vector<message> messages;
    } state;
    state.messages = {human_message("x"),
                      test::calls({test::call("d1", "deploy"), test::call("e1", "echo")}, "Go.")};
    const message before = state.messages.back();
    c.after_model(state, rt);
    CHECK(state.messages.back() == before);

    state.messages.back() = test::calls({ask("c1", R"({"question":"Q"})"), ask("c2", R"({"question":"R"})")});
    const message asks = state.messages.back();
    c.after_model(state, rt);
    CHECK(state.messages.back() == asks);

    state.messages.back() = test::calls({test::call("d1", "deploy"), ask("c1", R"({"question":"Q"})")});
    state.messages.back().id = "ai-1";
    c.after_model(state, rt);
    REQUIRE(state.messages.back().tool_calls.size() == 1);
    CHECK(state.messages.back().tool_calls[0].id == "c1");
    CHECK(state.messages.back().id == "ai-1"); // edited in place

    // Clarification disabled: nobody is asked, so every call stays.
    state.messages.back() = test::calls({test::call("d1", "deploy"), ask("c1", R"({"question":"Q"})")});
    rt.context["disable_clarification"] = true;
    c.after_model(state, rt);
    CHECK(state.messages.back().tool_calls.size() == 2);
}

// ---------------------------------------------------------------- the chain end to end

TEST_CASE("the guard chain end to end: repair, deny, recover, limit, watch, ask",
          "[middleware][chain][agent]") {
    std::atomic<int> tasks{0}, bash_runs{0};
    tool_set tools(test::echo_tool(),
                   make_tool("bash", "Runs a command.", R"({"type":"object"})",
                             [&](const boost::json::object&) {
                                 ++bash_runs;
                                 return std::string("ran");
                             }),
                   make_tool("explode", "Fails.", R"({"type":"object"})",
                             [](const boost::json::object&) -> std::string {
                                 throw std::runtime_error("disk on fire");
                             }),
                   make_tool("task", "Delegates.", R"({"type":"object"})", [&](const boost::json::object&) {
                       ++tasks;
                       return std::string("Task Succeeded. Result: ok");
                   }));
    auto task_call = [](std::string id) {
        return test::call(std::move(id), "task", R"({"description":"d","prompt":"p"})");
    };
    scripted_model model({
        test::calls({test::call("b1", "bash", R"({"command":"rm -rf /"})"), test::call("e1", "explode"),
                     task_call("t1"), task_call("t2"), task_call("t3"), task_call("t4")},
                    "Working."),
        test::calls({test::call("s1", "echo", R"({"text":"same"})")}),
        test::calls({test::call("s2", "echo", R"({"text":"same"})")}),
        test::calls({test::call("s3", "echo", R"({"text":"same"})")}),
        test::calls({ask("q1", R"({"question":"Which report format?","clarification_type":"approach_choice",
                                   "context":"Both work.","options":["PDF","HTML"]})"),
                     test::call("s4", "echo", R"({"text":"batched"})")}),
        ai_message("Writing the PDF report."),
    });
    auto a = make_agent(model, std::move(tools), dangling_tool_call{},
                        guardrail(allowlist_provider{std::nullopt, {"bash"}}), tool_error_handling{},
                        subagent_limit{}, loop_detection{}, clarification{});
    agent_state<decltype(a)::pipeline_type> state;
    // A previous run was interrupted while its call was in flight.
    state.messages = {human_message("earlier"), test::calls({test::call("old", "echo", R"({"text":"x"})")})};

    auto r = a.run(state, "Make the report");
    REQUIRE(r.reason == stop_reason::ended_by_tool);
    auto reqs = model.requests();
    REQUIRE(reqs.size() == 5);
    // dangling_tool_call: the interrupted call is answered in every request, never in the state
    CHECK(reqs[0].messages.at(2).text() == "[Tool call was interrupted and did not return a result.]");
    CHECK(reqs[0].messages.at(3).text() == "Make the report");
    CHECK(state.messages.at(2).text() == "Make the report");
    // round 1: bash denied, explode recovered, 4 tasks cut to 3
    CHECK(bash_runs == 0);
    CHECK(tasks == 3);
    const message& round1 = state.messages.at(3);
    CHECK(round1.tool_calls.size() == 5);
    CHECK(state.messages.at(4).text() ==
          "Guardrail denied: tool 'bash' was blocked (oap.tool_not_allowed). Reason: "
          "tool 'bash' is denied. Choose an alternative approach.");
    CHECK(state.messages.at(5).text() ==
          "Error: Tool 'explode' failed with std::runtime_error: disk on fire. Continue "
          "with available context, or choose an alternative tool.");
    CHECK(state.messages.at(5).metadata.at("deerflow_tool_meta").at("error_type") == "unknown");
    CHECK(state.messages.at(6).metadata.at("deerflow_tool_meta").at("status") == "success");
    // loop_detection: the third identical echo is warned about in the next request only
    CHECK(reqs[4].messages.back().name == "loop_warning");
    CHECK(reqs[4].messages.back().text() ==
          "[LOOP DETECTED] You are repeating the same tool calls. Stop calling tools and produce your final "
          "answer now. "
          "If you cannot complete the task, summarize what you accomplished so far.");
    for (const auto& m : state.messages)
        CHECK(m.name != "loop_warning");
    // clarification: the batched echo was dropped from the answer; the question ends the run
    const message& asking = state.messages.at(state.messages.size() - 2);
    REQUIRE(asking.tool_calls.size() == 1);
    CHECK(asking.tool_calls[0].id == "q1");
    const message& question = state.messages.back();
    CHECK(question.id == "clarification:q1");
    CHECK(question.text() == "🔀 Both work.\n\nWhich report format?\n\n  1. PDF\n  2. HTML");

    // The user's answer is the next run, on the same state.
    auto r2 = a.run(state, "PDF please");
    REQUIRE(r2.reason == stop_reason::finished);
    CHECK(state.messages.back().text() == "Writing the PDF report.");
    CHECK(model.requests().back().messages.back().text() == "PDF please"); // stale warnings were dropped
}
