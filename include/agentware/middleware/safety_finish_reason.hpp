#ifndef AGENTWARE_MIDDLEWARE_SAFETY_FINISH_REASON_HPP
#define AGENTWARE_MIDDLEWARE_SAFETY_FINISH_REASON_HPP

// safety_finish_reason: a provider that stops an answer for safety may still
// return tool calls, cut off mid-argument (DeerFlow's
// SafetyFinishReasonMiddleware). When the last answer has tool calls and its
// finish reason is a safety stop (OpenAI `content_filter`, Anthropic
// `refusal`, Gemini `SAFETY` and its kin), the calls are removed, an
// explanation is appended and the answer is stamped with
// `metadata.safety_termination`; the provider's finish reason is kept. A
// `safety_termination` event goes to the run's event channel and its context.
//
// It must stand after loop_detection and token_budget in the pipeline: after
// hooks run in reverse order, so it then sees the answer first and the loop
// and token guards count the cleaned one. The pipeline refuses the other order.

#include <agentware/agent/run_events.hpp>
#include <agentware/agent/runtime.hpp>
#include <agentware/core/type_list.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/ai_edit.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace agentware {

struct loop_detection;
class token_budget;

/// One built-in detector: a provider's safety finish reasons.
struct safety_detector {
    std::string name;         ///< "openai_content_filter", "anthropic_refusal", "gemini_safety"
    std::string reason_field; ///< how the provider names the field: finish_reason or stop_reason
    std::vector<std::string> reason_values;

    friend bool operator==(const safety_detector&, const safety_detector&) = default;
};

/// The built-in detectors, by name.
inline std::vector<safety_detector> builtin_safety_detectors() {
    return {{"openai_content_filter", "finish_reason", {"content_filter"}},
            {"anthropic_refusal", "stop_reason", {"refusal"}},
            {"gemini_safety",
             "finish_reason",
             {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}}};
}

/// DeerFlow's `safety_finish_reason:` section.
struct safety_finish_reason_options {
    /// The detectors by name; empty means all built-in ones (DeerFlow's `detectors: null`).
    std::vector<std::string> detectors;

    static constexpr std::string_view config_section = "safety_finish_reason";
    friend bool operator==(const safety_finish_reason_options&,
                           const safety_finish_reason_options&) = default;
};

class safety_finish_reason {
public:
    using must_come_after = type_list<loop_detection, token_budget>;

    // Text kept for parity with DeerFlow (reference §5.16l; the message of its code).
    static constexpr std::string_view explanation_format =
        "The model provider stopped this response with a safety-related signal ({}='{}', detector='{}'). Any "
        "tool calls produced in this turn were suppressed because their arguments may be truncated and "
        "unsafe "
        "to execute. Please rephrase the request or ask for a narrower output.";

    safety_finish_reason() : safety_finish_reason(safety_finish_reason_options{}) {}
    explicit safety_finish_reason(safety_finish_reason_options o) : options_(std::move(o)) {
        const auto& all = builtin();
        for (const auto& name : options_.detectors) {
            auto it = std::find_if(all.begin(), all.end(), [&](const auto& d) { return d.name == name; });
            if (it == all.end())
                throw std::invalid_argument(detail::format(
                    "unknown detector \"{}\" (known: openai_content_filter, anthropic_refusal, "
                    "gemini_safety)",
                    name));
            chosen_.push_back(&*it);
        }
    }

    const safety_finish_reason_options& options() const noexcept { return options_; }

    /// The detector that recognises `finish_reason`, if any.
    const safety_detector* detect(std::string_view finish_reason) const {
        const auto recognises = [finish_reason](const safety_detector& d) {
            return std::find(d.reason_values.begin(), d.reason_values.end(), finish_reason) !=
                   d.reason_values.end();
        };
        if (options_.detectors.empty()) {
            for (const safety_detector& d : builtin())
                if (recognises(d)) return &d;
            return nullptr;
        }
        for (const safety_detector* d : chosen_)
            if (recognises(*d)) return d;
        return nullptr;
    }

    template <class State>
    void after_model(State& state, runtime& rt) {
        message* ai = detail::last_ai_with_calls(state);
        if (!ai) return;
        const safety_detector* d = detect(ai->provider.finish_reason());
        if (!d) return;
        boost::json::array names;
        for (const auto& c : ai->tool_calls)
            names.emplace_back(c.name.empty() ? "unknown" : c.name);
        const std::size_t count = ai->tool_calls.size();
        const std::string value(ai->provider.finish_reason());
        ai->tool_calls.clear();
        ai->edit_invalid_tool_calls().clear();
        detail::append_note(*ai,
                            fmt::format(fmt::runtime(explanation_format), d->reason_field, value, d->name),
                            detail::empty_answer_note::alone);
        boost::json::object stamp{{"detector", d->name},
                                  {"reason_field", d->reason_field},
                                  {"reason_value", value},
                                  {"suppressed_tool_call_count", count},
                                  {"suppressed_tool_call_names", std::move(names)}};
        // DeerFlow's `safety_termination` custom event: the stamp, its type and the message's id.
        boost::json::object event{{"type", "safety_termination"}};
        for (const auto& [k, v] : stamp)
            event.emplace(k, v);
        event.emplace("message_id", ai->id);
        ai->metadata["safety_termination"] = std::move(stamp);
        emit_event(&rt, event);
        record_event(
            &rt, "safety_finish_reason", "safety_termination",
            detail::format("{}={} ({}): {} tool call(s) suppressed", d->reason_field, value, d->name, count));
    }

private:
    // Made once: a subagent's chain makes this middleware at every delegation,
    // and with the default options (all of them) it allocates nothing.
    static const std::vector<safety_detector>& builtin() {
        static const std::vector<safety_detector> all = builtin_safety_detectors();
        return all;
    }

    safety_finish_reason_options options_;
    std::vector<const safety_detector*> chosen_; // into builtin(), when options name some
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                       const safety_finish_reason_options& o) {
    jv = boost::json::object{{"detectors", o.detectors.empty() ? boost::json::value(nullptr)
                                                               : boost::json::value_from(o.detectors)}};
}

/// Reads `detectors`: null (all built-in ones) or a non-empty list of their
/// names. An empty list is refused, as DeerFlow refuses it.
inline safety_finish_reason_options tag_invoke(boost::json::value_to_tag<safety_finish_reason_options>,
                                               const boost::json::value& jv) {
    json_reader r(jv, std::string(safety_finish_reason_options::config_section));
    safety_finish_reason_options o;
    if (const auto* d = r.find("detectors")) {
        o.detectors = json_read_as<std::vector<std::string>>(*d, r.path_of("detectors"));
        if (o.detectors.empty())
            throw json_error(
                r.path_of("detectors"),
                "must be omitted (use built-ins) or contain at least one entry; use enabled=false to "
                "disable the middleware entirely.");
        try {
            safety_finish_reason check(o);
        } catch (const std::invalid_argument& e) {
            throw json_error(r.path_of("detectors"), e.what());
        }
    }
    r.reject_unknown_keys();
    return o;
}

} // namespace agentware

#endif
