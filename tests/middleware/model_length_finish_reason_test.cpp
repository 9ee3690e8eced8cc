// model_length_finish_reason: an answer cut by the output limit records
// stop_reason = model_length_capped, loses its (possibly truncated) tool calls,
// gets a notice when it shows no text, and is stamped model_length_termination.
#include "after_model_bench.hpp"

#include <agentware/middleware/model_length_finish_reason.hpp>

#include <catch2/catch.hpp>

#include <string>

using namespace agentware;

namespace {
// Text kept for parity with DeerFlow's ModelLengthFinishReasonMiddleware
const std::string notice = "The model reached its output limit before producing a complete final response. "
                           "Please continue the conversation to resume.";
} // namespace

TEST_CASE("length stops of each provider are recognised", "[middleware][model_length_finish_reason]") {
    struct row {
        const char* reason;
        const char* detector;
        const char* field;
    };
    for (const row r : {row{"length", "openai_compatible_length", "finish_reason"},
                        row{"max_tokens", "anthropic_max_tokens", "stop_reason"},
                        row{"MAX_TOKENS", "gemini_max_tokens", "finish_reason"},
                        row{"max_output_tokens", "openai_responses_incomplete", "finish_reason"}}) {
        test::bench<model_length_finish_reason> b;
        message m = ai_message("half an ans");
        m.provider.set_finish_reason(r.reason);
        const message& out = b.answer(m);
        CHECK(out.text() == "half an ans"); // partial text kept, no notice
        CHECK(b.rt.context.at("stop_reason") == "model_length_capped");
        const auto& stamp = out.metadata.at("model_length_termination").as_object();
        CHECK(stamp.at("reason_value") == r.reason);
        CHECK(stamp.at("detector") == r.detector);
        CHECK(stamp.at("reason_field") == r.field);
        CHECK(stamp.at("suppressed_tool_call_count") == 0);
        CHECK(stamp.at("suppressed_tool_call_names").as_array().empty());
    }
}

TEST_CASE("a capped answer's tool calls are dropped", "[middleware][model_length_finish_reason]") {
    test::bench<model_length_finish_reason> b;
    message m =
        test::calls({test::call("c1", "echo"), test::call("c2", "write_file"), test::call("c3", "echo")});
    m.edit_invalid_tool_calls().push_back(invalid_tool_call{"c4", "bash", R"({"cmd":"ls)", "bad json"});
    m.provider.set_finish_reason("length");
    const message& out = b.answer(m);
    CHECK(out.tool_calls.empty());
    CHECK(out.invalid_tool_calls().empty());
    CHECK(out.text() == notice); // no visible text: the notice is the answer
    CHECK(b.rt.context.at("stop_reason") == "model_length_capped");
    const auto& stamp = out.metadata.at("model_length_termination").as_object();
    CHECK(stamp.at("suppressed_tool_call_count") == 4);
    CHECK(stamp.at("suppressed_tool_call_names") == boost::json::array{"echo", "write_file", "bash"});
}

TEST_CASE("partial text beside dropped calls is kept without a notice",
          "[middleware][model_length_finish_reason]") {
    test::bench<model_length_finish_reason> b;
    message m = test::calls({test::call("c1", "echo")}, "Let me check");
    m.provider.set_finish_reason("max_tokens");
    const message& out = b.answer(m);
    CHECK(out.tool_calls.empty());
    CHECK(out.text() == "Let me check");
    CHECK(out.metadata.at("model_length_termination").at("suppressed_tool_call_count") == 1);
}

TEST_CASE("a whitespace-only capped answer gets the notice", "[middleware][model_length_finish_reason]") {
    test::bench<model_length_finish_reason> b;
    message m = ai_message(" \n");
    m.provider.set_finish_reason("MAX_TOKENS");
    const message& out = b.answer(m);
    CHECK(out.content.back().text == notice);
    CHECK(out.text() == " \n" + notice);
}

TEST_CASE("other answers and earlier stop reasons are left alone",
          "[middleware][model_length_finish_reason]") {
    test::bench<model_length_finish_reason> b;
    message done = test::calls({test::call("c", "echo")});
    done.provider.set_finish_reason("stop");
    const message& out = b.answer(done);
    CHECK(out.tool_calls.size() == 1);
    CHECK(!out.metadata.contains("model_length_termination"));
    CHECK(!b.rt.context.contains("stop_reason"));

    b.rt.context["stop_reason"] = "loop_capped";
    message cut = ai_message("x");
    cut.provider.set_finish_reason("length");
    b.answer(cut);
    CHECK(b.rt.context.at("stop_reason") == "loop_capped");
}
