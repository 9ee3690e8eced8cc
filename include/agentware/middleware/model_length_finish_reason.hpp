#ifndef AGENTWARE_MIDDLEWARE_MODEL_LENGTH_FINISH_REASON_HPP
#define AGENTWARE_MIDDLEWARE_MODEL_LENGTH_FINISH_REASON_HPP

// model_length_finish_reason: a model answer cut by the provider's output limit
// (DeerFlow's ModelLengthFinishReasonMiddleware) may not act. When the last
// answer's provider stopped it for length (OpenAI `finish_reason=length`,
// Anthropic `stop_reason=max_tokens`, Gemini `MAX_TOKENS`, `max_output_tokens`):
//  - the run's context gets `stop_reason = model_length_capped` unless an
//    earlier guard already set one;
//  - its tool calls, parsed or invalid, are dropped: their arguments may have
//    been cut at the limit, so none runs and the answer becomes the final one;
//  - when it shows no visible text, a notice is appended to its content
//    (partial text is kept as it is, with no notice);
//  - it is stamped with `metadata.model_length_termination` = {detector,
//    reason_field, reason_value, suppressed_tool_call_count,
//    suppressed_tool_call_names}.

#include <agentware/agent/runtime.hpp>
#include <agentware/message/content.hpp>
#include <agentware/message/message.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace agentware {

struct model_length_finish_reason {
    static constexpr std::string_view stop_reason_value = "model_length_capped";
    static constexpr std::string_view config_section = "model_length_finish_reason";
    // Text kept for parity with DeerFlow's ModelLengthFinishReasonMiddleware
    static constexpr std::string_view capped_notice =
        "The model reached its output limit before producing a complete final response. Please continue the "
        "conversation to resume.";

    /// Which provider convention reported the cap: the stamp's detector and reason_field.
    struct length_reason {
        std::string_view detector;
        std::string_view reason_field;
    };

    /// The provider finish reasons that mean "out of output tokens"; nullopt for any other.
    static std::optional<length_reason> classify(std::string_view r) {
        if (r == "length") return length_reason{"openai_compatible_length", "finish_reason"};
        if (r == "max_tokens") return length_reason{"anthropic_max_tokens", "stop_reason"};
        if (r == "MAX_TOKENS") return length_reason{"gemini_max_tokens", "finish_reason"};
        if (r == "max_output_tokens") return length_reason{"openai_responses_incomplete", "finish_reason"};
        return std::nullopt;
    }
    static bool is_length_reason(std::string_view r) { return classify(r).has_value(); }

    /// Text a reader would see: a text block that is not only whitespace.
    static bool has_visible_text(const message& m) {
        return std::any_of(m.content.begin(), m.content.end(), [](const content_block& b) {
            return b.is_text() && b.text.find_first_not_of(" \t\r\n\f\v") != std::string::npos;
        });
    }

    template <class State>
    void after_model(State& state, runtime& rt) {
        if (state.messages.empty()) return;
        message& last = state.messages.back();
        if (!last.is_ai()) return;
        const auto reason = classify(last.provider.finish_reason());
        if (!reason) return;
        if (!rt.context.contains("stop_reason")) rt.context["stop_reason"] = stop_reason_value;

        // Every suppressed call counts; names are listed once each, in order.
        boost::json::array names;
        auto note = [&names](std::string_view name) {
            if (name.empty()) return;
            for (const auto& n : names)
                if (n.as_string() == name) return;
            names.emplace_back(name);
        };
        std::int64_t suppressed = 0;
        for (const tool_call& c : last.tool_calls) {
            note(c.name);
            ++suppressed;
        }
        if (!last.invalid_tool_calls().empty()) {
            for (const invalid_tool_call& c : last.invalid_tool_calls()) {
                note(c.name);
                ++suppressed;
            }
            last.edit_invalid_tool_calls().clear();
        }
        last.tool_calls.clear();

        if (!has_visible_text(last)) last.content.push_back(text_block(std::string(capped_notice)));
        last.metadata["model_length_termination"] = boost::json::object{
            {"detector", reason->detector},
            {"reason_field", reason->reason_field},
            {"reason_value", last.provider.finish_reason()},
            {"suppressed_tool_call_count", suppressed},
            {"suppressed_tool_call_names", std::move(names)},
        };
    }
};

} // namespace agentware

#endif
