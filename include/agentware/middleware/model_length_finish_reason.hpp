#ifndef AGENTWARE_MIDDLEWARE_MODEL_LENGTH_FINISH_REASON_HPP
#define AGENTWARE_MIDDLEWARE_MODEL_LENGTH_FINISH_REASON_HPP

// model_length_finish_reason: tells the caller that the run's final answer was
// cut by the model's output limit (DeerFlow's ModelLengthFinishReasonMiddleware).
// When the last answer calls no tool and its provider stopped it for length
// (OpenAI `finish_reason=length`, Anthropic `stop_reason=max_tokens`, Gemini
// `MAX_TOKENS`), the run's context gets `stop_reason = model_length_capped`
// (unless an earlier guard already set one) and the answer is stamped with
// `metadata.model_length_termination`; its content is left as it is.

#include <agentware/agent/runtime.hpp>
#include <agentware/message/message.hpp>

#include <boost/json/object.hpp>

#include <array>
#include <string>
#include <string_view>

namespace agentware {

struct model_length_finish_reason {
    static constexpr std::string_view stop_reason_value = "model_length_capped";
    static constexpr std::string_view config_section = "model_length_finish_reason";

    /// The provider finish reasons that mean "out of output tokens".
    static bool is_length_reason(std::string_view r) {
        static constexpr std::array<std::string_view, 4> reasons{"length", "max_tokens", "MAX_TOKENS",
                                                                 "max_output_tokens"};
        for (auto x : reasons)
            if (r == x) return true;
        return false;
    }

    template <class State>
    void after_model(State& state, runtime& rt) {
        if (state.messages.empty()) return;
        message& last = state.messages.back();
        if (!last.is_ai() || !last.tool_calls.empty() || !is_length_reason(last.provider.finish_reason()))
            return;
        if (!rt.context.contains("stop_reason")) rt.context["stop_reason"] = stop_reason_value;
        last.metadata["model_length_termination"] = boost::json::object{
            {"reason_field", "finish_reason"}, {"reason_value", last.provider.finish_reason()}};
    }
};

} // namespace agentware

#endif
