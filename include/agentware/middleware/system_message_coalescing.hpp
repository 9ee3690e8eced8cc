#ifndef AGENTWARE_MIDDLEWARE_SYSTEM_MESSAGE_COALESCING_HPP
#define AGENTWARE_MIDDLEWARE_SYSTEM_MESSAGE_COALESCING_HPP

// system_message_coalescing: one system message per request (DeerFlow's
// SystemMessageCoalescingMiddleware). Middlewares add system messages inside
// the history (date reminders, durable-context contracts); many providers
// accept a system message only first, or only one. When the request's
// messages hold any, they are merged with the system prompt, in order and
// joined by a blank line, into the request's system prompt and removed from
// its messages. Of the dynamic-context reminders (metadata
// `dynamic_context_reminder`), only the last survives. Request only: the
// stored history is not touched.

#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/json_values.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace agentware {

struct system_message_coalescing {
    static constexpr std::string_view config_section = "system_message_coalescing";
    static constexpr std::string_view reminder_key = "dynamic_context_reminder";

    /// The merged system text, or nothing when `messages` holds no system message.
    static bool coalesce(std::string& system_prompt, std::vector<message>& messages) {
        std::size_t last_reminder = messages.size();
        bool any = false;
        for (std::size_t i = 0; i < messages.size(); ++i)
            if (messages[i].is_system()) {
                any = true;
                if (messages[i].metadata_flag(reminder_key)) last_reminder = i;
            }
        if (!any) return false;
        std::string merged = system_prompt;
        std::vector<message> rest;
        rest.reserve(messages.size());
        for (std::size_t i = 0; i < messages.size(); ++i) {
            message& m = messages[i];
            if (!m.is_system()) {
                rest.push_back(std::move(m));
                continue;
            }
            if (m.metadata_flag(reminder_key) && i != last_reminder) continue;
            const std::string text = m.text();
            if (text.empty()) continue;
            if (!merged.empty()) merged += "\n\n";
            merged += text;
        }
        messages = std::move(rest);
        system_prompt = std::move(merged);
        return true;
    }

    auto wrap_model_call(auto& req, auto&& next) {
        bool has_system = false;
        for (const message& m : req.messages.get())
            if (m.is_system()) {
                has_system = true;
                break;
            }
        if (has_system) {
            std::string prompt(static_cast<std::string_view>(req.system_prompt));
            coalesce(prompt, req.messages.edit());
            req.system_prompt = std::move(prompt);
        }
        return next(req);
    }
};

} // namespace agentware

#endif
