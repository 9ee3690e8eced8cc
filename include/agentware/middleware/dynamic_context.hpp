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
//
// The memory is read on a thread of its own and waited for at most 5 seconds
// (DeerFlow's time box): a slow disk delays no run for longer. Past the limit
// nothing is injected in this run, and the next run tries again.

#include <agentware/agent/coroutine_hooks.hpp>
#include <agentware/agent/runtime.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/memory/clock.hpp>
#include <agentware/memory/manager.hpp>
#include <agentware/message/id.hpp>
#include <agentware/middleware/memory.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/chrono.h>
#include <fmt/core.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <variant>

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

namespace detail {

// manager->injection(user, agent) on a thread of its own, awaited at most
// `limit`: the text, or nothing when the limit passed first. A late lookup
// finishes on its thread and its text is dropped; it holds the manager until
// then. The thread never owns an Asio object: the channel lives in this
// coroutine (and so dies before the context that runs it), and the thread
// reaches it through `handoff` only while this coroutine is waiting. A
// template so that g++ emits the coroutine only where it is used.
template <class = void>
boost::asio::awaitable<std::optional<std::string>>
bounded_memory_injection(std::shared_ptr<memory_manager> manager, std::string user_id, std::string agent_name,
                         std::chrono::steady_clock::duration limit) {
    using namespace boost::asio::experimental::awaitable_operators;
    using channel =
        boost::asio::experimental::concurrent_channel<void(boost::system::error_code, std::string)>;
    struct handoff {
        std::mutex m;
        channel* waiting = nullptr; // null once the coroutine stopped waiting
    };
    struct stop_waiting { // on every way out, before the channel goes
        handoff& h;
        ~stop_waiting() {
            std::lock_guard lock(h.m);
            h.waiting = nullptr;
        }
    };
    auto executor = co_await boost::asio::this_coro::executor;
    channel done(executor, 1);
    auto hand = std::make_shared<handoff>();
    hand->waiting = &done;
    const stop_waiting guard{*hand};
    std::thread([hand, manager = std::move(manager), user_id = std::move(user_id),
                 agent_name = std::move(agent_name)] {
        std::string text;
        try {
            text = manager->injection(user_id, agent_name);
        } catch (...) { // injection() already answers "" for what it cannot read
        }
        std::lock_guard lock(hand->m);
        if (hand->waiting != nullptr) hand->waiting->try_send(boost::system::error_code{}, std::move(text));
    }).detach();
    boost::asio::steady_timer timer(executor, limit);
    std::variant<std::string, std::monostate> first = co_await (
        done.async_receive(boost::asio::use_awaitable) || timer.async_wait(boost::asio::use_awaitable));
    if (first.index() != 0) co_return std::nullopt;
    co_return std::get<0>(std::move(first));
}

} // namespace detail

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
    /// How long the run waits for the memory (DeerFlow's 5 s, reference §5.16e and §12).
    std::chrono::steady_clock::duration memory_timeout = std::chrono::seconds(5);

    /// "<system-reminder>\n<current_date>2026-11-23, Monday</current_date>\n</system-reminder>"
    static std::string date_reminder(memory_clock::time_point now) {
        // Text kept for parity with DeerFlow (reference §5.16e).
        return detail::format(
            "<system-reminder>\n<current_date>{:%Y-%m-%d, %A}</current_date>\n</system-reminder>",
            std::chrono::time_point_cast<std::chrono::seconds>(now));
    }

    /// A coroutine: the memory is awaited (at most `memory_timeout`), not
    /// waited for on the run's thread; the blocking loop runs it to its end.
    template <class State>
    boost::asio::awaitable<void> before_agent(State& state, runtime& rt) {
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
        if (!last_user) co_return;
        if (msgs[*last_user].id.ends_with(user_suffix)) co_return; // already given its context
        const auto now = clock ? clock->now() : std::chrono::system_clock::now();
        const std::string today = detail::iso_date(now);
        if (last_date && *last_date == today) co_return;

        std::string memory_text;
        if (!last_date && options.inject_memory && manager && manager->options().enabled &&
            manager->options().injection_enabled) {
            std::optional<std::string> found = co_await detail::bounded_memory_injection(
                manager, detail::context_user_id(&rt.context), detail::context_agent_name(rt.context),
                memory_timeout);
            // Too slow: no reminder in this run, so the next one tries again (as DeerFlow's time box).
            if (!found) co_return;
            memory_text = std::move(*found);
        }
        message& user = msgs[*last_user];
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
