// model_length_finish_reason: a final answer cut by the output limit records
// stop_reason = model_length_capped; its content is kept.
#include "after_model_bench.hpp"

#include <agentware/middleware/model_length_finish_reason.hpp>

#include <catch2/catch.hpp>

using namespace agentware;

TEST_CASE("length stops of each provider are recognised", "[middleware][model_length_finish_reason]") {
    for (const char* r : {"length", "max_tokens", "MAX_TOKENS", "max_output_tokens"}) {
        test::bench<model_length_finish_reason> b;
        message m = ai_message("half an ans");
        m.provider.set_finish_reason(r);
        const message& out = b.answer(m);
        CHECK(out.text() == "half an ans");
        CHECK(b.rt.context.at("stop_reason") == "model_length_capped");
        CHECK(out.metadata.at("model_length_termination").at("reason_value") == r);
    }
}

TEST_CASE("other answers and earlier stop reasons are left alone",
          "[middleware][model_length_finish_reason]") {
    test::bench<model_length_finish_reason> b;
    message done = ai_message("complete");
    done.provider.set_finish_reason("stop");
    b.answer(done);
    CHECK(!b.rt.context.contains("stop_reason"));

    message with_call = test::calls({test::call("c", "echo")});
    with_call.provider.set_finish_reason("length");
    b.answer(with_call); // not a final answer
    CHECK(!b.rt.context.contains("stop_reason"));

    b.rt.context["stop_reason"] = "loop_capped";
    message cut = ai_message("x");
    cut.provider.set_finish_reason("length");
    b.answer(cut);
    CHECK(b.rt.context.at("stop_reason") == "loop_capped");
}
