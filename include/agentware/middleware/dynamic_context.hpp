#ifndef AGENTWARE_MIDDLEWARE_DYNAMIC_CONTEXT_HPP
#define AGENTWARE_MIDDLEWARE_DYNAMIC_CONTEXT_HPP

// dynamic_context: tells the model today's date and what it remembers about
// the user (DeerFlow's DynamicContextMiddleware, reference §5.16e and §9.3).
//
// Once per thread (and again on the first run of a new day) the last real
// user message X is replaced, keeping its place and id, by:
//   system  (id X)          "<system-reminder>\n<current_date>...</current_date>\n</system-reminder>"
//   human   (id X__memory)  "<memory>\n...\n</memory>"   (first time only, when there is memory)
//   human   (id X__user)    the user's message as it was
// The reminders are hidden from the UI and marked `dynamic_context_reminder`,
// so summarization keeps them and memory ignores them. The system prompt is
// never touched, so a provider's prompt cache keeps working.

#include <agentware/agent/runtime.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/memory/clock.hpp>
#include <agentware/memory/manager.hpp>
#include <agentware/message/id.hpp>
#include <agentware/middleware/detail/user_data_paths.hpp>
#include <agentware/middleware/memory.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace agentware {

struct dynamic_context_options {
    bool inject_memory = true; ///< when a memory manager is attached

    static constexpr std::string_view config_section = "dynamic_context";
    friend bool operator==(const dynamic_context_options&, const dynamic_context_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                       const dynamic_context_options& o) {
    jv = boost::json::object{{"inject_memory", o.inject_memory}};
}
inline dynamic_context_options tag_invoke(boost::json::value_to_tag<dynamic_context_options>,
                                          const boost::json::value& jv) {
    json_reader r(jv, std::string(dynamic_context_options::config_section));
    dynamic_context_options o;
    r.skip("enabled").read("inject_memory", o.inject_memory).reject_unknown_keys();
    return o;
}

struct dynamic_context {
    static constexpr std::string_view memory_suffix = "__memory";
    static constexpr std::string_view user_suffix = "__user";

    dynamic_context() = default;
    explicit dynamic_context(dynamic_context_options o, std::shared_ptr<memory_manager> manager = nullptr,
                             std::shared_ptr<memory_clock> clock = default_memory_clock())
        : options(o), manager(std::move(manager)), clock(std::move(clock)) {}

    dynamic_context_options options;
    std::shared_ptr<memory_manager> manager; ///< where the `<memory>` text comes from; none: date only
    std::shared_ptr<memory_clock> clock = default_memory_clock();

    /// "<system-reminder>\n<current_date>2026-11-23, Monday</current_date>\n</system-reminder>"
    static std::string date_reminder(memory_clock::time_point now) {
        // Text kept for parity with DeerFlow (reference §5.16e).
        return fmt::format(
            "<system-reminder>\n<current_date>{:%Y-%m-%d, %A}</current_date>\n</system-reminder>",
            std::chrono::time_point_cast<std::chrono::seconds>(now));
    }

    template <class State>
    void before_agent(State& state, runtime& rt) {
        auto& msgs = state.messages;
        std::optional<std::size_t> last_user;
        std::optional<std::string> last_date;
        for (std::size_t i = 0; i < msgs.size(); ++i) {
            const message& m = msgs[i];
            if (m.metadata_flag("dynamic_context_reminder")) {
                if (const auto* d = m.metadata.if_contains("reminder_date"); d && d->is_string())
                    last_date = std::string(d->get_string());
                continue;
            }
            if (m.is_human() && !m.metadata_flag("hide_from_ui") && m.name != "summary") last_user = i;
        }
        if (!last_user) return;
        message& user = msgs[*last_user];
        if (user.id.ends_with(user_suffix)) return; // this message was already given its context
        const auto now = clock ? clock->now() : std::chrono::system_clock::now();
        const std::string today = detail::iso_date(now);
        if (last_date && *last_date == today) return;

        std::string memory_text;
        if (!last_date && options.inject_memory && manager)
            memory_text = manager->injection(detail::context_user_id(&rt.context),
                                             detail::context_agent_name(rt.context));
        if (user.id.empty()) user.id = make_message_id();
        const std::string id = user.id;

        message reminder = system_message(date_reminder(now));
        reminder.id = id;
        reminder.metadata["hide_from_ui"] = true;
        reminder.metadata["dynamic_context_reminder"] = true;
        reminder.metadata["reminder_date"] = today;
        std::vector<message> replacement;
        replacement.push_back(std::move(reminder));
        if (!memory_text.empty()) {
            message mem = human_message(std::move(memory_text));
            mem.id = id + std::string(memory_suffix);
            mem.metadata["hide_from_ui"] = true;
            mem.metadata["dynamic_context_reminder"] = true;
            replacement.push_back(std::move(mem));
        }
        message original = std::move(user);
        original.id = id + std::string(user_suffix);
        replacement.push_back(std::move(original));
        msgs.erase(msgs.begin() + std::ptrdiff_t(*last_user));
        msgs.insert(msgs.begin() + std::ptrdiff_t(*last_user), std::make_move_iterator(replacement.begin()),
                    std::make_move_iterator(replacement.end()));
    }
};

} // namespace agentware

#endif
