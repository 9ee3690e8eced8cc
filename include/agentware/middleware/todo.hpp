#ifndef AGENTWARE_MIDDLEWARE_TODO_HPP
#define AGENTWARE_MIDDLEWARE_TODO_HPP

// todo: plan mode (DeerFlow's TodoMiddleware over LangChain's
// TodoListMiddleware, reference §5.8): todo_list (todo_list.hpp) configured
// with the rules of DeerFlow's prompt block and tool description (in our
// words), active in a run whose context sets `is_plan_mode` to true
// (otherwise it only hides its tool), plus:
//
//  * a context-loss reminder when the calls that set the list are gone from
//    the history (summarization removed them) but the list is not;
//  * a premature-exit guard: a final answer while items are open sends the
//    model back, with a reminder, at most twice per run.

#include <agentware/agent/requests.hpp>
#include <agentware/agent/runtime.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/core/fields.hpp>
#include <agentware/core/jump.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/todo_list.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

struct todo_options {
    std::string plan_mode_key = "is_plan_mode"; ///< the run's context flag that switches plan mode on
    std::size_t max_completion_reminders = 2;   ///< premature-exit reminders per run
    std::size_t max_tracked_runs = 4096;        ///< reminder bookkeeping kept (least recently used dropped)

    static constexpr std::string_view config_section = "todo";
    friend bool operator==(const todo_options&, const todo_options&) = default;
};

namespace detail {

inline std::string todo_lines(const std::vector<todo_item>& todos, bool open_only) {
    std::string out;
    for (const auto& t : todos) {
        if (open_only && t.status == "completed") continue;
        out += "- [" + (t.status.empty() ? std::string("pending") : t.status) + "] " + t.content + "\n";
    }
    return out;
}

} // namespace detail

class todo : public todo_list {
public:
    // Text kept for parity with DeerFlow (reference §5.8): the context-loss reminder, around the list.
    static constexpr std::string_view context_loss_head =
        "<system_reminder>\nYour todo list from earlier is no longer visible in the current context window, "
        "but it "
        "is still active. Here is the current state:\n\n";
    static constexpr std::string_view context_loss_tail =
        "\nContinue tracking and updating this todo list as you work. Call `write_todos` whenever the status "
        "of "
        "any item changes.\n</system_reminder>";
    // Text kept for parity with DeerFlow (reference §5.8): the premature-exit reminder, around the open
    // items.
    static constexpr std::string_view completion_head =
        "<system_reminder>\nYou have incomplete todo items that must be finished before giving your final "
        "response:\n\n";
    static constexpr std::string_view completion_tail =
        "\nPlease continue working on these tasks. Call `write_todos` to mark items as completed as you "
        "finish "
        "them, and only respond when all items are done.\n</system_reminder>";
    static constexpr std::string_view context_loss_name = "todo_reminder";
    static constexpr std::string_view completion_name = "todo_completion_reminder";
    // Our own words for the rules of DeerFlow's `<todo_list_system>` block and
    // tool description (prompts are not kept verbatim): a list only for work of
    // three or more steps, exactly one item in_progress, completed as soon as
    // done, updated as the work goes (the user follows it).
    static constexpr std::string_view system_prompt_block =
        "<todo_list_system>\nYou are in plan mode. Keep a todo list with the `write_todos` tool for work of "
        "three or more steps; a task of one or two steps needs no list. Write the plan first. Exactly one "
        "item is in_progress at any time: set it before you start the step, and mark it completed the moment "
        "the step is done, before starting the next. Update the list as you go rather than in batches at the "
        "end: the user follows your progress through it. Send the whole list each time, and call the tool "
        "once per answer. Do not finish while items are still pending or in progress.\n</todo_list_system>";
    static constexpr std::string_view tool_description =
        "Replaces the todo list of this conversation. Only for work of three or more steps. Send every item, "
        "each with its content and its status (pending, in_progress or completed); while work remains, "
        "exactly one item is in_progress.";

    todo() : todo(todo_options{}) {}
    explicit todo(todo_options o)
        : todo_list(list_options_of(o)), options_(std::move(o)), shared_(std::make_shared<shared>()) {}

    const todo_options& options() const noexcept { return options_; }

    /// LangChain's middleware as DeerFlow configures it.
    static todo_list_options list_options_of(const todo_options& o) {
        todo_list_options l;
        l.system_prompt = std::string(system_prompt_block);
        l.tool_description = std::string(tool_description);
        l.active_when = o.plan_mode_key;
        return l;
    }

    bool plan_mode(const runtime& rt) const { return active(rt); }

    /// Drops the reminder bookkeeping of the thread's other runs.
    template <class State>
    void before_agent(State&, runtime& rt) {
        std::lock_guard lock(shared_->mutex);
        for (auto it = shared_->runs.begin(); it != shared_->runs.end();) {
            if (it->first.first == thread_of(rt) && it->first.second != run_of(rt)) {
                shared_->order.remove(it->first);
                it = shared_->runs.erase(it);
            } else {
                ++it;
            }
        }
    }

    /// The context-loss reminder.
    template <class State>
    void before_model(State& state, runtime& rt) {
        if (!plan_mode(rt)) return;
        const auto& todos = get<todos_field>(state);
        if (todos.empty()) return;
        for (const auto& m : state.messages) {
            if (m.is_ai() && std::any_of(m.tool_calls.begin(), m.tool_calls.end(),
                                         [](const tool_call& c) { return c.name == tool_name; }))
                return;
            if (m.is_human() && m.name == context_loss_name) return;
        }
        message reminder = human_message(std::string(context_loss_head) + detail::todo_lines(todos, false) +
                                         std::string(context_loss_tail));
        reminder.name = std::string(context_loss_name);
        reminder.metadata["hide_from_ui"] = true;
        state.messages.push_back(std::move(reminder));
    }

    /// The premature-exit guard.
    template <class State>
    hook_result after_model(State& state, runtime& rt) {
        if (!plan_mode(rt) || state.messages.empty()) return {};
        const message& last = state.messages.back();
        if (!last.is_ai() || !last.tool_calls.empty() || !last.invalid_tool_calls().empty()) return {};
        const std::string_view finish = last.provider.finish_reason();
        if (finish == "tool_calls" || finish == "function_call") return {};
        if (last.metadata.contains("tool_calls") || last.metadata.contains("function_call")) return {};
        const auto& todos = get<todos_field>(state);
        if (std::all_of(todos.begin(), todos.end(),
                        [](const todo_item& t) { return t.status == "completed"; }))
            return {};
        std::lock_guard lock(shared_->mutex);
        run_entry& run = touch(rt);
        if (run.sent >= options_.max_completion_reminders) return {};
        ++run.sent;
        run.pending.push_back(std::string(completion_head) + detail::todo_lines(todos, true) +
                              std::string(completion_tail));
        return jump_to::model;
    }

    /// Forgets the run's bookkeeping.
    template <class State>
    void after_agent(State&, runtime& rt) {
        std::lock_guard lock(shared_->mutex);
        auto key = std::pair{thread_of(rt), run_of(rt)};
        shared_->runs.erase(key);
        shared_->order.remove(key);
    }

    /// In plan mode: todo_list's prompt block and the queued reminders
    /// (request only); otherwise the tool is not offered.
    template <class Request, class Next>
    decltype(auto) wrap_model_call(Request& req, Next&& next) {
        if (!prepare(req)) return next(req);
        std::vector<std::string> pending;
        {
            std::lock_guard lock(shared_->mutex);
            auto it = shared_->runs.find(std::pair{thread_of(*req.rt), run_of(*req.rt)});
            if (it != shared_->runs.end()) pending.swap(it->second.pending);
        }
        if (!pending.empty()) {
            std::vector<std::string> unique;
            for (auto& p : pending)
                if (std::find(unique.begin(), unique.end(), p) == unique.end())
                    unique.push_back(std::move(p));
            std::string text;
            for (const auto& u : unique)
                text += (text.empty() ? "" : "\n\n") + u;
            message reminder = human_message(std::move(text));
            reminder.name = std::string(completion_name);
            reminder.metadata["hide_from_ui"] = true;
            std::vector<message> ms(req.messages.begin(), req.messages.end());
            ms.push_back(std::move(reminder));
            req.messages = cow_vector<message>(std::move(ms));
        }
        return next(req);
    }

    /// Reminders queued and not yet shown for this run (for tests).
    std::size_t pending_reminders(const runtime& rt) const {
        std::lock_guard lock(shared_->mutex);
        auto it = shared_->runs.find(std::pair{thread_of(rt), run_of(rt)});
        return it == shared_->runs.end() ? 0 : it->second.pending.size();
    }

private:
    using key = std::pair<std::string, std::string>;
    struct run_entry {
        std::size_t sent = 0;
        std::vector<std::string> pending;
    };
    struct shared {
        mutable std::mutex mutex;
        std::map<key, run_entry> runs;
        std::list<key> order; // least recently touched first
    };

    static std::string thread_of(const runtime& rt) {
        return rt.thread_id.empty() ? "default" : rt.thread_id;
    }
    static std::string run_of(const runtime& rt) { return rt.run_id.empty() ? "default" : rt.run_id; }

    run_entry& touch(const runtime& rt) {
        key k{thread_of(rt), run_of(rt)};
        shared_->order.remove(k);
        shared_->order.push_back(k);
        while (shared_->order.size() > options_.max_tracked_runs) {
            shared_->runs.erase(shared_->order.front());
            shared_->order.pop_front();
        }
        return shared_->runs[k];
    }

    todo_options options_;
    std::shared_ptr<shared> shared_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const todo_options& o) {
    jv = boost::json::object{{"plan_mode_key", o.plan_mode_key},
                             {"max_completion_reminders", o.max_completion_reminders},
                             {"max_tracked_runs", o.max_tracked_runs}};
}

inline todo_options tag_invoke(boost::json::value_to_tag<todo_options>, const boost::json::value& jv) {
    json_reader r(jv, std::string(todo_options::config_section));
    todo_options o;
    r.read("plan_mode_key", o.plan_mode_key)
        .read("max_completion_reminders", o.max_completion_reminders)
        .read("max_tracked_runs", o.max_tracked_runs)
        .reject_unknown_keys();
    if (o.max_tracked_runs < 1) throw json_error(r.path_of("max_tracked_runs"), "expected at least 1");
    return o;
}

} // namespace agentware

#endif
