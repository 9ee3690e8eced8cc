#ifndef AGENTWARE_MIDDLEWARE_TERMINAL_RESPONSE_HPP
#define AGENTWARE_MIDDLEWARE_TERMINAL_RESPONSE_HPP

// terminal_response: a run that used tools must not end in silence (DeerFlow's
// TerminalResponseMiddleware). When the model's final answer has no visible
// text and calls no tool, and a tool ran since the user last spoke, the first
// time in a run the empty answer is removed and the model is asked again, with
// a hidden reminder shown in that request only; the second time the empty
// answer is replaced by a fallback text marked `deerflow_error_fallback`.
// Answers stopped by the output limit (finish reason length / max_tokens) are
// left to model_length_finish_reason.

#include <agentware/agent/runtime.hpp>
#include <agentware/core/jump.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/ai_edit.hpp>
#include <agentware/middleware/detail/json_values.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace agentware {

struct terminal_response {
    // Text kept for parity with DeerFlow (reference §5.16j).
    static constexpr std::string_view reminder_text =
        "<system_reminder>\nYour previous response after the tool execution was empty. Review the tool "
        "results "
        "already present in the conversation and provide a concise, user-visible final response. Do not call "
        "another tool unless it is strictly necessary.\n</system_reminder>";
    // Text kept for parity with DeerFlow (reference §5.16j).
    static constexpr std::string_view fallback_text = "The model completed the tool run but returned no "
                                                      "final response, including after one automatic retry. "
                                                      "Please try again or use a different model.";
    static constexpr std::string_view fallback_reason = "Model returned an empty terminal response";
    static constexpr std::string_view config_section = "terminal_response";

    terminal_response() : shared_(std::make_shared<tracker>()) {}

    /// True when `m` shows the user nothing and asks for no tool.
    static bool is_empty_answer(const message& m) {
        return m.is_ai() && m.tool_calls.empty() && m.invalid_tool_calls().empty() &&
               detail::trim(m.text()).empty();
    }

    static bool stopped_by_length(const message& m) {
        const auto r = m.provider.finish_reason();
        return r == "length" || r == "max_tokens" || r == "max_output_tokens" || r == "MAX_TOKENS";
    }

    /// A tool message after the latest user message the user sees.
    template <class Messages>
    static bool tool_ran_this_turn(const Messages& messages) {
        std::size_t latest_user = messages.size();
        for (std::size_t i = 0; i < messages.size(); ++i)
            if (messages[i].is_human() && !messages[i].metadata_flag("hide_from_ui")) latest_user = i;
        if (latest_user == messages.size()) return false;
        for (std::size_t i = latest_user + 1; i < messages.size(); ++i)
            if (messages[i].is_tool()) return true;
        return false;
    }

    template <class State>
    hook_result after_model(State& state, runtime& rt) {
        if (state.messages.empty()) return {};
        const detail::run_key key = detail::run_key::of(rt);
        message& last = state.messages.back();
        const bool empty =
            is_empty_answer(last) && !stopped_by_length(last) && tool_ran_this_turn(state.messages);
        bool retried = false;
        {
            std::lock_guard lock(shared_->mutex);
            auto it = shared_->runs.find(key);
            if (it != shared_->runs.end()) {
                it->second = run_phase::done; // the retry has answered: no more reminders
                retried = true;
            } else if (empty) {
                shared_->runs.emplace(key, run_phase::reminding);
            }
        }
        if (!empty) return {};
        if (!retried) {
            state.messages.pop_back(); // DeerFlow's RemoveMessage(last)
            return jump_to::model;
        }
        last.content.clear();
        last.content.push_back(text_block(std::string(fallback_text)));
        last.metadata["deerflow_error_fallback"] = true;
        last.metadata["error_reason"] = fallback_reason;
        return {};
    }

    /// The retry's request carries the reminder, hidden, at its end.
    auto wrap_model_call(auto& req, auto&& next) {
        if (req.rt) {
            bool remind = false;
            {
                std::lock_guard lock(shared_->mutex);
                auto it = shared_->runs.find(detail::run_key::of(*req.rt));
                remind = it != shared_->runs.end() && it->second == run_phase::reminding;
            }
            if (remind) {
                message m = human_message(std::string(reminder_text));
                m.metadata["hide_from_ui"] = true;
                req.messages.edit().push_back(std::move(m));
            }
        }
        return next(req);
    }

    template <class State>
    void after_agent(State&, runtime& rt) {
        std::lock_guard lock(shared_->mutex);
        shared_->runs.erase(detail::run_key::of(rt));
    }

private:
    enum class run_phase { reminding, done };
    struct tracker {
        std::mutex mutex;
        std::map<detail::run_key, run_phase> runs;
    };
    std::shared_ptr<tracker> shared_;
};

} // namespace agentware

#endif
