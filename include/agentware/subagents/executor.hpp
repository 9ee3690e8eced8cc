#ifndef AGENTWARE_SUBAGENTS_EXECUTOR_HPP
#define AGENTWARE_SUBAGENTS_EXECUTOR_HPP

// The subagent executor (DeerFlow's SubagentExecutor, reference §5.12);
// the `task` tool that delegates through it is in task_tool.hpp.
//
// Each delegation is a fresh agent (a fresh chain, from the runner's factory)
// with a state of its own: a system message with the type's prompt and a
// human message with the task; the parent's sandbox and thread directories
// are shared, its history is not. The run's recursion limit is the type's
// `max_turns`; the run is cancelled at the type's timeout, and when the
// parent run is cancelled (Asio cancellation of its coroutine) or asked to
// stop (`run_config::stop`). At most `max_concurrent` delegations run at once
// per executor; the others wait for a slot. Everything is a coroutine on the
// executor of the caller: in `async_run` the subagents hold no thread while
// their models wait; the blocking loop runs the task tool on an io_context
// that the tool keeps from one call to the next (tool_set's adapter).
//
// Each delegation's own stream (its tokens, steps and custom events) reaches
// the parent's event channel tagged with its task id, for the subagent types
// that `run_config::subagent_streams` shows.

#include <agentware/agent/agent.hpp>
#include <agentware/agent/async_loop.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/model/any_chat_model.hpp>
#include <agentware/subagents/config.hpp>
#include <agentware/thread/fields.hpp>
#include <agentware/tool/tool.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace agentware {

/// How a delegation ended.
enum class subagent_status { completed, failed, cancelled, timed_out };

constexpr std::string_view to_string(subagent_status s) noexcept {
    switch (s) {
    case subagent_status::completed:
        return "completed";
    case subagent_status::failed:
        return "failed";
    case subagent_status::cancelled:
        return "cancelled";
    case subagent_status::timed_out:
        return "timed_out";
    }
    return "failed";
}

/// What a delegation produced.
struct subagent_result {
    subagent_status status = subagent_status::failed;
    std::string result;      ///< the subagent's answer (completed)
    std::string error;       ///< why it did not complete (may be empty)
    std::string stop_reason; ///< token_capped, turn_capped or loop_capped, when a guard stopped it
    std::string model_name;
    token_usage usage;
    std::vector<message> messages; ///< the steps it took (its ai and tool messages)
};

namespace detail {

inline std::string timeout_text(std::chrono::milliseconds t) {
    const auto ms = t.count();
    // Text kept for parity with DeerFlow (reference §5.12).
    if (ms % 1000 == 0) return detail::format("Execution timed out after {} seconds", ms / 1000);
    return detail::format("Execution timed out after {} seconds", static_cast<double>(ms) / 1000.0);
}

// Text kept for parity with DeerFlow (reference §5.12).
inline constexpr std::string_view cancelled_text = "Cancelled by user";
inline constexpr std::string_view no_response_text = "No response generated";

} // namespace detail

/// What one delegation's agent is given.
struct subagent_run {
    std::string task_id;
    subagent_type type; ///< effective settings
    any_chat_model model;
    tool_set tools;                          ///< the tools the type allows
    std::vector<message> input;              ///< the system message (the type's prompt) and the task
    run_config config;                       ///< thread and run ids, context, recursion limit = max_turns
    std::optional<sandbox_state> sandbox;    ///< the parent's
    std::optional<thread_paths> thread_data; ///< the parent's
};

/// What the agent left: its result and all its messages.
struct subagent_run_outcome {
    run_result result;
    std::vector<message> messages;
};

/// Runs one delegation's agent to its end (made by make_subagent_runner).
using subagent_runner = std::function<boost::asio::awaitable<subagent_run_outcome>(subagent_run)>;

namespace detail {

// The chain `make` makes, from the delegation's type when it takes one.
template <class Factory>
decltype(auto) make_subagent_chain(Factory& make, const subagent_type& type) {
    if constexpr (std::is_invocable_v<Factory&, const subagent_type&>)
        return make(type);
    else
        return make();
}

template <class Factory>
boost::asio::awaitable<subagent_run_outcome> run_subagent(Factory make, subagent_run run) {
    using pipeline_t = std::remove_cvref_t<decltype(make_subagent_chain(std::declval<Factory&>(), run.type))>;
    using state_t = agent_state<pipeline_t>;
    agent<any_chat_model, pipeline_t> a(std::move(run.model), std::move(run.tools),
                                        make_subagent_chain(make, run.type));
    state_t state;
    if constexpr (state_t::template has<sandbox_field>) get<sandbox_field>(state) = std::move(run.sandbox);
    if constexpr (state_t::template has<thread_data_field>)
        get<thread_data_field>(state) = std::move(run.thread_data);
    subagent_run_outcome out;
    out.result = co_await a.async_run(state, agent_input(std::move(run.input)), std::move(run.config));
    out.messages = std::move(state.messages);
    co_return out;
}

/// Counts the subagents that run at once; a coroutine waits for a slot on its
/// own executor, whichever thread frees one. Waiting can be cancelled.
class subagent_slots {
public:
    explicit subagent_slots(std::size_t n) : free_(n == 0 ? 1 : n) {}

    /// Takes a slot when one is free, without waiting.
    bool try_acquire() {
        std::lock_guard lock(mutex_);
        if (free_ == 0) return false;
        --free_;
        return true;
    }

    /// Takes a slot; throws operation_aborted when cancelled, or when `stop`
    /// is requested, before one is free.
    template <class = void> // a template so that g++ emits the coroutine only where it is used
    boost::asio::awaitable<void> acquire(std::stop_token stop = {}) {
        if (try_acquire()) co_return;
        auto w = std::make_shared<waiter>(co_await boost::asio::this_coro::executor);
        {
            std::lock_guard lock(mutex_);
            if (free_ > 0) {
                --free_;
                co_return;
            }
            queue_.push_back(w);
        }
        std::stop_callback on_stop(
            stop, [w] { boost::asio::post(w->timer.get_executor(), [w] { w->timer.cancel(); }); });
        try {
            co_await w->timer.async_wait(boost::asio::use_awaitable);
        } catch (const boost::system::system_error&) { // woken (a slot) or cancelled: see below
        }
        std::lock_guard lock(mutex_);
        if (w->granted) co_return;
        std::erase(queue_, w);
        throw boost::system::system_error(boost::asio::error::operation_aborted);
    }

    void release() {
        std::lock_guard lock(mutex_);
        if (queue_.empty()) {
            ++free_;
            return;
        }
        std::shared_ptr<waiter> w = std::move(queue_.front());
        queue_.pop_front();
        w->granted = true;
        boost::asio::post(w->timer.get_executor(), [w] { w->timer.cancel(); });
    }

    std::size_t waiting() const {
        std::lock_guard lock(mutex_);
        return queue_.size();
    }

private:
    struct waiter {
        explicit waiter(const boost::asio::any_io_executor& ex)
            : timer(ex, boost::asio::steady_timer::time_point::max()) {}
        boost::asio::steady_timer timer;
        bool granted = false;
    };
    mutable std::mutex mutex_;
    std::size_t free_;
    std::deque<std::shared_ptr<waiter>> queue_;
};

} // namespace detail

/// A runner whose agents use the chain `make()` returns (a fresh one per
/// delegation, so guards start afresh). The parent's sandbox and thread
/// directories are put into the state when the chain declares those fields.
template <class Factory>
subagent_runner make_subagent_runner(Factory make) {
    // Type-erased before it enters the delegation's coroutine frame (in this
    // header): g++ warns (-Wsubobject-linkage) when such a frame holds a
    // lambda type of the user's main file.
    std::function<std::invoke_result_t<Factory&>()> erased(std::move(make));
    return
        [make = std::move(erased)](subagent_run&& run) { return detail::run_subagent(make, std::move(run)); };
}

/// The parent's state fields the subagents share (the sandbox and the thread's
/// directories), for a chain with no middleware that declares them.
struct subagent_shared_fields {
    using state_fields = fields<thread_data_field, sandbox_field>;
    static constexpr std::string_view middleware_name = "subagent_shared_fields";
    template <class State>
    void before_agent(State&) {}
};

/// What the parent run gives a delegation.
struct subagent_parent {
    std::string thread_id = "default";
    std::string run_id;
    boost::json::object context; ///< the parent's run context (identity fields are passed on)
    model_ref model;             ///< the parent's model ("inherit")
    std::optional<sandbox_state> sandbox;
    std::optional<thread_paths> thread_data;
    event_sink events;
    std::stop_token stop;

    /// From a tool call's runtime.
    static subagent_parent of(const tool_runtime& rt) {
        subagent_parent p;
        p.thread_id = std::string(rt.thread_id);
        p.run_id = std::string(rt.run_id);
        if (rt.context) p.context = *rt.context;
        p.model = rt.model;
        if (const auto* s = rt.field<sandbox_field>()) p.sandbox = *s;
        if (const auto* d = rt.field<thread_data_field>()) p.thread_data = *d;
        p.events = rt.events;
        p.stop = rt.stop;
        return p;
    }
};

/// A delegation: the task tool's arguments and its call id.
struct subagent_task {
    std::string task_id; ///< the task call's id
    std::string description;
    std::string prompt;
    std::string subagent_type;
};

/// Where the subagents' timeouts take their time from. Without one, the
/// executor times each delegation with a steady_timer on its executor.
class subagent_clock {
public:
    virtual ~subagent_clock() = default;
    /// Calls `fire` once `after` has passed on this clock, from whichever
    /// thread moves it. Dropping the returned handle withdraws the call.
    virtual std::shared_ptr<void> call_after(std::chrono::milliseconds after, std::function<void()> fire) = 0;
};

/// A clock that stands still until advance() moves it, for tests and replays:
/// a subagent times out as soon as the clock passes its deadline, without any
/// real wait. Safe to use from several threads.
class manual_subagent_clock final : public subagent_clock {
public:
    std::shared_ptr<void> call_after(std::chrono::milliseconds after, std::function<void()> fire) override {
        auto e = std::make_shared<entry>();
        e->fire = std::move(fire);
        std::lock_guard lock(mutex_);
        e->at = now_ + after;
        e->order = next_++;
        entries_.push_back(e);
        return e;
    }

    /// Moves the clock by `by` and makes the calls that are due, earliest first.
    void advance(std::chrono::milliseconds by) {
        std::vector<std::shared_ptr<entry>> due;
        {
            std::lock_guard lock(mutex_);
            now_ += by;
            std::erase_if(entries_, [&](const std::weak_ptr<entry>& w) {
                auto e = w.lock();
                if (!e) return true; // withdrawn
                if (e->at > now_) return false;
                due.push_back(std::move(e));
                return true;
            });
        }
        std::sort(due.begin(), due.end(), [](const auto& a, const auto& b) {
            return std::tie(a->at, a->order) < std::tie(b->at, b->order);
        });
        for (const auto& e : due)
            e->fire();
    }

    /// The time passed since the clock was made.
    std::chrono::milliseconds now() const {
        std::lock_guard lock(mutex_);
        return now_;
    }

    /// Takes `d` on this clock, as a scripted step that lasts `d` does: moves
    /// the clock by `d` (a deadline passed on the way fires first) and
    /// resumes after what that made due. Throws operation_aborted when the
    /// awaiting coroutine is cancelled meanwhile (a subagent that timed out).
    template <class = void> // a template so that g++ emits the coroutine only where it is used
    boost::asio::awaitable<void> sleep(std::chrono::milliseconds d) {
        auto timer = std::make_shared<boost::asio::steady_timer>(
            co_await boost::asio::this_coro::executor, boost::asio::steady_timer::time_point::max());
        auto handle = call_after(
            d, [timer] { boost::asio::post(timer->get_executor(), [timer] { timer->cancel(); }); });
        advance(d);
        boost::system::error_code ec;
        co_await timer->async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
        // (Named first: g++ 12 cannot parse a member call on a co_await in a template.)
        const auto state = co_await boost::asio::this_coro::cancellation_state;
        if (state.cancelled() != boost::asio::cancellation_type::none)
            throw boost::system::system_error(boost::asio::error::operation_aborted);
    }

private:
    struct entry {
        std::chrono::milliseconds at{0};
        std::size_t order = 0;
        std::function<void()> fire;
    };
    mutable std::mutex mutex_;
    std::chrono::milliseconds now_{0};
    std::size_t next_ = 0;
    std::vector<std::weak_ptr<entry>> entries_;
};

struct subagent_executor_options {
    subagents_options config;
    bool allow_bash = false; ///< the sandbox runs bash (isolated, or allow_host_bash): shows `bash`
    tool_set tools;          ///< every tool a subagent may be given (the types filter them)
    /// A model by name, for types whose model is not "inherit". Empty: such a
    /// type fails ("no model named ...").
    std::function<any_chat_model(std::string_view)> model_named;
    /// Runs each delegation's agent. Empty: a chain of subagent_shared_fields alone.
    subagent_runner runner;
    /// The timeouts' clock; empty: real time (a steady_timer).
    std::shared_ptr<subagent_clock> clock;
    /// The time a delegation's ledger entry is stamped with; empty: the
    /// system clock. A replay fixes it, so that its output is the same each time.
    std::function<std::chrono::system_clock::time_point()> now;
};

/// Runs delegations. One executor serves every run of an agent (its
/// concurrency bound is shared by them); keep it in a shared_ptr, as the task
/// tool does.
class subagent_executor : public std::enable_shared_from_this<subagent_executor> {
public:
    explicit subagent_executor(subagent_executor_options o)
        : registry_(o.config, o.allow_bash), tools_(std::move(o.tools)),
          model_named_(std::move(o.model_named)), runner_(std::move(o.runner)), clock_(std::move(o.clock)),
          now_(std::move(o.now)), slots_(o.config.max_concurrent) {}

    const subagent_registry& registry() const noexcept { return registry_; }
    /// The wall-clock time of the executor's options (`now`).
    std::chrono::system_clock::time_point now() const {
        return now_ ? now_() : std::chrono::system_clock::now();
    }
    /// Delegations waiting for a slot now.
    std::size_t waiting() const { return slots_.waiting(); }

    /// Runs one delegation to its end and reports its progress on
    /// `parent.events`. Never throws for what the subagent does.
    template <class = void>
    boost::asio::awaitable<subagent_result> execute(subagent_task task, subagent_parent parent) {
        subagent_result out;
        if (registry_.refused(task.subagent_type)) {
            out.error = std::string(detail::bash_subagent_disabled);
            co_return out;
        }
        const subagent_type* type = registry_.find(task.subagent_type);
        if (!type) {
            // Text kept for parity with DeerFlow (reference §5.12).
            out.error = detail::format("Unknown subagent type '{}'. Available: {}", task.subagent_type,
                                       fmt::join(registry_.available(), ", "));
            co_return out;
        }
        // Made with its type: a default one's lists, overwritten by a copy, cost allocations.
        subagent_run run{.task_id = {},
                         .type = *type,
                         .model = {},
                         .tools = {},
                         .input = {},
                         .config = {},
                         .sandbox = {},
                         .thread_data = {}};
        try {
            prepare(run, task, parent, out.model_name);
        } catch (const std::exception& e) {
            out.error = e.what();
            co_return out;
        }
        if (parent.events) // the event's JSON is made only when someone listens
            parent.events.emit(boost::json::object{{"type", "task_started"},
                                                   {"task_id", task.task_id},
                                                   {"description", task.description},
                                                   {"model_name", out.model_name}});
        std::exception_ptr failure;
        const auto cancellation = co_await boost::asio::this_coro::cancellation_state;
        if (cancellation.cancelled() == boost::asio::cancellation_type::none) {
            // Supervised in this coroutine (sparing a co_spawn): the parent's cancellation
            // state, not cancelled yet, serves as a fresh one would. Supervising turns
            // throw_if_cancelled off; the parent's setting is given back after.
            const bool throws = co_await boost::asio::this_coro::throw_if_cancelled();
            try {
                co_await supervise(shared_from_this(), run, task, parent, out);
            } catch (...) {
                failure = std::current_exception();
            }
            co_await boost::asio::this_coro::throw_if_cancelled(throws);
        } else {
            // A coroutine of its own, whose cancellation state is the delegation's: only a
            // cancellation that comes later reaches it. It works on this frame's run,
            // task and parent: this frame waits for it to end.
            auto ex = co_await boost::asio::this_coro::executor;
            try {
                co_await boost::asio::co_spawn(ex, supervise(shared_from_this(), run, task, parent, out),
                                               boost::asio::use_awaitable);
            } catch (...) {
                failure = std::current_exception();
            }
        }
        if (!failure) co_return out;
        try {
            std::rethrow_exception(failure);
        } catch (const boost::system::system_error& e) {
            // The parent was cancelled before the delegation could start.
            if (e.code() != boost::asio::error::operation_aborted) throw;
            out.status = subagent_status::cancelled;
            out.error = std::string(detail::cancelled_text);
            parent.events.emit(boost::json::object{{"type", "task_cancelled"},
                                                   {"task_id", task.task_id},
                                                   {"error", out.error},
                                                   {"usage", usage_json(out.usage)},
                                                   {"model_name", out.model_name}});
        }
        co_return out;
    }

private:
    // Fills in `run`, made with its type, for the task. Takes the task's prompt (the
    // run's input keeps it; nothing reads it after).
    void prepare(subagent_run& run, subagent_task& task, const subagent_parent& parent,
                 std::string& model_name) const {
        const subagent_type& type = run.type;
        run.task_id = task.task_id;
        if (type.model.empty() || type.model == "inherit") {
            if (!parent.model)
                throw std::runtime_error("the parent run has no model for the subagent to inherit");
            run.model = any_chat_model(parent.model);
            for (std::string_view key : {"model_name", "model"})
                if (const auto* v = parent.context.if_contains(key); v && v->is_string()) {
                    model_name = std::string(v->get_string());
                    break;
                }
        } else {
            if (!model_named_)
                throw std::runtime_error("no model named \"" + type.model + "\" is configured");
            run.model = model_named_(type.model);
            if (!run.model) throw std::runtime_error("no model named \"" + type.model + "\" is configured");
            model_name = type.model;
        }
        run.tools = subagent_tools(tools_, type);
        run.input.reserve(2);
        run.input.push_back(system_message(type.system_prompt));
        run.input.push_back(human_message(std::move(task.prompt)));
        run.config.thread_id = parent.thread_id;
        run.config.run_id = parent.run_id;
        run.config.recursion_limit = type.max_turns;
        // The identity fields passed on, and the two the subagent's context adds: its
        // table is sized once (growing it from empty reallocated it twice).
        static constexpr std::string_view passed_on[] = {"thread_id",        "user_id",         "user_role",
                                                         "oauth_provider",   "oauth_id",        "is_internal",
                                                         "authz_attributes", "channel_user_id", "agent_name"};
        const boost::json::value* found[std::size(passed_on)];
        std::size_t passed = 2;
        for (std::size_t i = 0; i < std::size(passed_on); ++i)
            passed += (found[i] = parent.context.if_contains(passed_on[i])) != nullptr;
        run.config.context.reserve(run.config.context.size() + passed);
        for (std::size_t i = 0; i < std::size(passed_on); ++i)
            if (found[i]) run.config.context[passed_on[i]] = *found[i];
        run.config.context["run_id"] = parent.run_id;
        run.config.context["is_subagent"] = true;
        run.sandbox = parent.sandbox;
        run.thread_data = parent.thread_data;
    }

    // What a delegation's coroutine, its runner's completion, the stop
    // callback and the clock share. All of it is touched on the delegation's
    // executor only (the others post there).
    struct race {
        explicit race(boost::asio::any_io_executor ex) : executor(std::move(ex)) {}
        boost::asio::any_io_executor executor;
        /// The timeout, and how the others wake the coroutine: made only for a runner
        /// that waits (a timer costs its service's lookup, and the first one on an
        /// io_context adds the reactor to every later turn of its queue).
        std::optional<boost::asio::steady_timer> timer;
        /// The coroutine, waiting for the completion of a runner whose body has
        /// ended (co_spawn hands the result over a turn later): resumed by it.
        std::optional<boost::asio::any_completion_handler<void()>> completion_waiter;
        boost::asio::cancellation_signal stop_runner;
        bool body_ended = false;  ///< the runner's coroutine returned
        bool done = false;        ///< the runner's completion came
        bool stopped = false;     ///< the parent asked to stop
        bool clock_fired = false; ///< the clock passed the deadline
        std::exception_ptr failure;
        subagent_run_outcome outcome;

        void wake() {
            if (timer) timer->cancel();
        }
    };

    // Drops the waiting coroutine if the runner's thread of execution is
    // destroyed without completing (its io_context gone): the race holds the
    // coroutine, whose frame holds the race.
    struct completion_guard {
        std::shared_ptr<race> r;
        explicit completion_guard(std::shared_ptr<race> rr) noexcept : r(std::move(rr)) {}
        completion_guard(completion_guard&&) noexcept = default;
        completion_guard& operator=(completion_guard&&) = delete;
        ~completion_guard() {
            if (r && !r->done) r->completion_waiter.reset();
        }
    };

    // `d` from now; a timeout beyond the clock's range (a configured "never")
    // saturates, as Asio's expires_after does.
    static std::chrono::steady_clock::time_point deadline_after(std::chrono::milliseconds d) {
        const auto now = std::chrono::steady_clock::now();
        const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::time_point::max() - now);
        return d >= room ? std::chrono::steady_clock::time_point::max() : now + d;
    }

    // The runner, noting when its body has ended.
    static boost::asio::awaitable<subagent_run_outcome>
    noting_end(std::shared_ptr<race> r, boost::asio::awaitable<subagent_run_outcome> run) {
        subagent_run_outcome outcome = co_await std::move(run);
        r->body_ended = true;
        co_return outcome;
    }

    // The delegation's own streams on the parent's channel, namespaced by its
    // task id: its tokens, its reasoning and its chain's custom events.
    static void forward_stream(const subagent_parent& parent, const std::string& task_id, subagent_run& run) {
        auto tagged = [events = parent.events, task_id, type = run.type.name](std::string_view kind) {
            return [events, task_id, type, kind](auto&& payload) {
                boost::json::object e{{"type", kind}, {"task_id", task_id}, {"subagent_type", type}};
                if constexpr (std::is_convertible_v<decltype(payload), std::string_view>)
                    e["text"] = std::string_view(payload);
                else
                    e["event"] = payload;
                events.emit(e);
            };
        };
        run.config.stream.on_text = tagged("subagent_token");
        run.config.stream.on_reasoning = tagged("subagent_reasoning");
        run.config.stream.on_event = tagged("subagent_event");
        if (const auto* f = parent.events.subagent_filter())
            run.config.subagent_streams = *f; // nested ones too
    }

    // The configured runner, or agents on a chain with no middleware (chosen
    // here rather than in the constructor, so that the default chain's loop
    // is compiled only where delegations run).
    template <class = void>
    boost::asio::awaitable<subagent_run_outcome> run_agent(subagent_run&& run) const {
        if (runner_) return runner_(std::move(run));
        return detail::run_subagent([] { return pipeline<subagent_shared_fields>{}; }, std::move(run));
    }

    // Waits for a slot, then runs the agent against its timeout, the parent's
    // stop and the parent's cancellation, and classifies what it left into
    // `out` (the delegation's result, its model name set; written in place, as
    // a result returned would be moved through each frame on its way).
    template <class = void>
    static boost::asio::awaitable<void> supervise(std::shared_ptr<subagent_executor> self, subagent_run& run,
                                                  const subagent_task& task, const subagent_parent& parent,
                                                  subagent_result& out) {
        co_await boost::asio::this_coro::throw_if_cancelled(false);
        auto ex = co_await boost::asio::this_coro::executor;
        // Read where it is needed (a handle on this coroutine's state, not a copy of it):
        // a coroutine that only read it would cost a frame each time.
        const auto cancellation = co_await boost::asio::this_coro::cancellation_state;
        const auto parent_cancelled = [&cancellation] {
            return cancellation.cancelled() != boost::asio::cancellation_type::none;
        };
        const std::size_t max_turns = run.type.max_turns;
        const auto timeout = run.type.timeout;

        const std::string& model_name = out.model_name;
        const bool streamed = parent.events.shows_subagent(run.type.name);
        if (streamed) forward_stream(parent, task.task_id, run);
        // Each step the subagent takes is reported as it happens (when its stream is shown).
        // The callback reaches what it reads through one pointer, which std::function keeps
        // in place (a lambda holding six references would be allocated).
        struct progress {
            const subagent_parent& parent;
            const subagent_task& task;
            const std::string& model_name;
            bool streamed;
            std::size_t captured = 0;
            token_usage usage;
        } steps_taken{parent, task, model_name, streamed, 0, {}};
        run.config.on_update = [p = &steps_taken](const agent_update& u) {
            for (const message& m : u.messages) {
                if (m.is_ai()) p->usage += m.provider.usage();
                ++p->captured;
                if (p->streamed)
                    p->parent.events.emit(boost::json::object{{"type", "task_running"},
                                                              {"task_id", p->task.task_id},
                                                              {"message", boost::json::value_from(m)},
                                                              {"message_index", p->captured},
                                                              {"total_messages", p->captured},
                                                              {"usage", usage_json(p->usage)},
                                                              {"model_name", p->model_name}});
            }
        };

        auto r = std::make_shared<race>(ex);
        std::stop_callback on_stop(parent.stop, [r] {
            boost::asio::post(r->executor, [r] {
                r->stopped = true;
                r->wake();
            });
        });
        bool timed_out = false;
        bool ran = false;
        bool slot = self->slots_.try_acquire();
        if (!slot) {
            try {
                co_await self->slots_.acquire(parent.stop);
                slot = true;
            } catch (const boost::system::system_error&) { // stopped or cancelled while waiting
            }
        }
        struct slot_guard {
            detail::subagent_slots* s;
            ~slot_guard() {
                if (s) s->release();
            }
        } guard{slot ? &self->slots_ : nullptr};
        if (slot && !parent.stop.stop_requested() && !parent_cancelled()) {
            ran = true;
            // The deadline starts now; a timer is made and waited on (which is what
            // costs) only when the runner waits.
            const auto deadline_at = deadline_after(timeout);
            std::shared_ptr<void> deadline;
            if (self->clock_)
                deadline = self->clock_->call_after(timeout, [r] {
                    boost::asio::post(r->executor, [r] {
                        r->clock_fired = true;
                        r->wake();
                    });
                });
            boost::asio::co_spawn(
                ex, noting_end(r, self->run_agent(std::move(run))),
                boost::asio::bind_cancellation_slot(
                    r->stop_runner.slot(),
                    [guard = completion_guard(r)](std::exception_ptr e, subagent_run_outcome o) {
                        race& rr = *guard.r;
                        rr.done = true;
                        rr.failure = std::move(e);
                        rr.outcome = std::move(o);
                        if (rr.completion_waiter) {
                            auto resume = std::move(*rr.completion_waiter);
                            rr.completion_waiter.reset();
                            std::move(resume)(); // on this executor: the coroutine goes on from here
                        } else {
                            rr.wake();
                        }
                    }));
            if (!r->done && r->body_ended) {
                // The runner ended without waiting (co_spawn ran it at once): its
                // result comes on the next turn, which resumes this coroutine.
                co_await boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void()>(
                    [r](auto handler) { r->completion_waiter.emplace(std::move(handler)); },
                    boost::asio::use_awaitable);
            }
            if (!r->done) {
                r->timer.emplace(ex,
                                 self->clock_ ? boost::asio::steady_timer::time_point::max() : deadline_at);
                boost::system::error_code ec;
                bool waited = false;
                if (!r->stopped && !r->clock_fired && !parent_cancelled()) {
                    co_await r->timer->async_wait(
                        boost::asio::redirect_error(boost::asio::use_awaitable, ec));
                    waited = true;
                }
                if (!r->done) {
                    timed_out = r->clock_fired || (waited && !ec);
                    r->stop_runner.emit(boost::asio::cancellation_type::terminal);
                    while (!r->done) { // its thread of execution ends before the delegation does
                        r->timer->expires_at(boost::asio::steady_timer::time_point::max());
                        co_await r->timer->async_wait(
                            boost::asio::redirect_error(boost::asio::use_awaitable, ec));
                    }
                }
            }
        }
        const bool cancelled = !ran || r->stopped || parent_cancelled();

        if (timed_out) {
            out.status = subagent_status::timed_out;
            out.error = detail::timeout_text(timeout);
        } else if (!cancelled && !r->failure) {
            classify(std::move(r->outcome), max_turns, out);
        } else if (!cancelled) {
            out.status = subagent_status::failed;
            out.error = detail::describe(r->failure);
        } else {
            out.status = subagent_status::cancelled;
            out.error = std::string(detail::cancelled_text);
            if (ran && !r->failure) {
                out.usage = r->outcome.result.usage;
                out.messages = steps(r->outcome.messages);
            }
        }
        if (out.usage.empty()) out.usage = steps_taken.usage;
        if (!parent.events) co_return;
        boost::json::object event{{"task_id", task.task_id}};
        switch (out.status) {
        case subagent_status::completed:
            event["type"] = "task_completed";
            event["result"] = out.result;
            break;
        case subagent_status::failed:
            event["type"] = "task_failed";
            event["error"] = out.error;
            break;
        case subagent_status::cancelled:
            event["type"] = "task_cancelled";
            event["error"] = out.error;
            break;
        case subagent_status::timed_out:
            event["type"] = "task_timed_out";
            event["error"] = out.error;
            break;
        }
        if (!out.stop_reason.empty()) event["stop_reason"] = out.stop_reason;
        event["usage"] = usage_json(out.usage);
        event["model_name"] = model_name;
        parent.events.emit(event);
        co_return;
    }

    static boost::json::object usage_json(const token_usage& u) {
        return boost::json::object{{"input_tokens", u.input_tokens},
                                   {"output_tokens", u.output_tokens},
                                   {"total_tokens", u.total_tokens}};
    }

    // The messages after the input (the system message and the task).
    static std::vector<message> steps(std::vector<message>& all) {
        std::vector<message> out;
        for (auto& m : all)
            if (m.is_ai() || m.is_tool()) out.push_back(std::move(m));
        return out;
    }

    // DeerFlow's completion rules (reference §5.12).
    static void classify(subagent_run_outcome&& o, std::size_t max_turns, subagent_result& out) {
        out.usage = o.result.usage;
        out.messages = steps(o.messages);
        std::string guard;
        if (const auto* v = o.result.context.if_contains("stop_reason"); v && v->is_string())
            if (v->get_string() == "token_capped" || v->get_string() == "loop_capped")
                guard = std::string(v->get_string());
        const message* last_ai = nullptr;
        for (auto it = out.messages.rbegin(); it != out.messages.rend(); ++it)
            if (it->is_ai()) {
                last_ai = &*it;
                break;
            }
        const bool fallback = last_ai && last_ai->metadata_flag("deerflow_error_fallback");
        if (o.result.reason == stop_reason::recursion_limit) {
            out.stop_reason = guard.empty() ? "turn_capped" : guard;
            if (fallback) {
                out.status = subagent_status::failed;
                out.error = last_ai->text();
            } else if (last_ai && !detail::trim(last_ai->text()).empty()) {
                out.status = subagent_status::completed;
                out.result = last_ai->text();
            } else {
                out.status = subagent_status::failed;
                // Text kept for parity with DeerFlow (reference §5.12).
                out.error = detail::format("Reached max_turns={}", max_turns);
            }
            return;
        }
        if (o.result.reason == stop_reason::error) {
            out.status = subagent_status::failed;
            out.error = o.result.error;
            return;
        }
        if (fallback) {
            out.status = subagent_status::failed;
            out.error = last_ai->text();
            return;
        }
        out.status = subagent_status::completed;
        out.stop_reason = guard;
        if (last_ai && !last_ai->text().empty())
            out.result = last_ai->text();
        else if (!out.messages.empty() && !out.messages.back().text().empty())
            out.result = out.messages.back().text();
        else
            out.result = std::string(detail::no_response_text);
    }

    subagent_registry registry_;
    tool_set tools_;
    std::function<any_chat_model(std::string_view)> model_named_;
    subagent_runner runner_;
    std::shared_ptr<subagent_clock> clock_;
    std::function<std::chrono::system_clock::time_point()> now_;
    detail::subagent_slots slots_;
};

} // namespace agentware

#endif
