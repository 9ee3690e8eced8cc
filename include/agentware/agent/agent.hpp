#ifndef AGENTWARE_AGENT_AGENT_HPP
#define AGENTWARE_AGENT_AGENT_HPP

// The agent: a model, tools and a middleware pipeline, run as a ReAct loop.
//
//   before_agent (once)
//   rounds of: before_model -> wrap_model_call(model) -> after_model
//              -> the round's tool calls, each through wrap_tool_call, concurrently
//   until the model calls no tool, a hook jumps to the end, a tool ends the run,
//   or the recursion limit is reached
//   after_agent (once, whatever happened)

#include <agentware/agent/checkpointer.hpp>
#include <agentware/agent/detail/loop_steps.hpp>
#include <agentware/agent/detail/tool_pool.hpp>
#include <agentware/agent/requests.hpp>
#include <agentware/agent/run.hpp>
#include <agentware/agent/runtime.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/core/pipeline.hpp>
#include <agentware/core/type_list.hpp>
#include <agentware/model/async_chat_model.hpp>
#include <agentware/model/chat_model.hpp>
#include <agentware/state/basic_state.hpp>
#include <agentware/tool/tool_set.hpp>

#include <agentware/detail/awaitable_fwd.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace agentware {

/// Settings that hold for every run of an agent.
struct agent_options {
    std::string system_prompt; ///< lent to each round's request: change it only while no run is in progress
    model_settings settings;
    std::size_t max_parallel_tools = 4;  ///< threads that run one round's tool calls side by side
    bool validate_tool_arguments = true; ///< check arguments against each tool's schema first
};

namespace detail {
/// The coroutine loop of an agent (async_run, async_invoke), defined in
/// <agentware/agent/async_loop.hpp>: its Asio (co_spawn, parallel groups) and
/// its coroutines cost only the files that run agents asynchronously.
template <class Agent>
struct async_loop {
    static_assert(always_false<Agent>, "agent::async_run and agent::async_invoke are defined in "
                                       "<agentware/agent/async_loop.hpp>: include it where you call them");
};

/// How the blocking loop awaits a coroutine node hook: runs it to its end on
/// the calling thread. Defined in <agentware/agent/coroutine_hooks.hpp>
/// (which the headers of middlewares with coroutine hooks include), so that
/// agents without one do not compile an io_context.
template <class Agent>
struct hook_awaiter {
    static_assert(always_false<Agent>,
                  "a middleware of this agent has a coroutine node hook (it returns "
                  "boost::asio::awaitable): include <agentware/agent/coroutine_hooks.hpp> "
                  "where the agent is run");
};
} // namespace detail

namespace detail {
/// An agent's state as a checkpointer reads it (incremental_checkpointer):
/// each piece converted to JSON when asked for.
template <class State>
class agent_state_view final : public state_view {
public:
    explicit agent_state_view(const State& state) noexcept : state_(state) {}
    std::size_t message_count() const override { return state_.messages.size(); }
    boost::json::value message(std::size_t i) const override {
        return boost::json::value_from(state_.messages[i]);
    }
    boost::json::object fields() const override { return state_.fields_json(); }
    boost::json::value whole() const override { return boost::json::value_from(state_); }

private:
    const State& state_;
};
} // namespace detail

/// An agent over a chat model, a tool set and a middleware pipeline.
///
/// One agent serves many runs at once (different threads of conversation, on
/// different threads of execution): it holds no per-run data. Middlewares are
/// shared by those runs, so keep per-run data in the state or the runtime.
template <chat_model Model, class Pipeline = pipeline<>>
class agent : private detail::loop_base {
public:
    using model_type = Model;
    using pipeline_type = Pipeline;
    using state_type = agent_state<Pipeline>;

    explicit agent(Model model, tool_set tools = {}, Pipeline middleware = {}, agent_options options = {})
        : model_(std::move(model)), tools_(std::move(tools)), pipeline_(std::move(middleware)),
          options_(std::move(options)),
          pool_(std::make_unique<detail::tool_pool>(options_.max_parallel_tools)) {
        if constexpr (offer_type::any) {
            detail::round_offer first; // a name clash among the tools shows here, not in a run
            offered_.current(pipeline_, tools_, first);
        }
    }

    Model& model() noexcept { return model_; }
    Pipeline& middleware() noexcept { return pipeline_; }
    /// The agent's own tools. Change them only while no run is in progress;
    /// the next round offers them (with those of the engaged middlewares).
    tool_set& tools() noexcept {
        if constexpr (offer_type::any) offered_.invalidate();
        ++own_generation_;
        return tools_;
    }
    /// The tools a model call would be offered now: the agent's own and those
    /// of the middlewares whose slots are engaged, less the disabled ones.
    std::shared_ptr<const tool_set> offered_tools() {
        std::shared_ptr<const tool_set> all;
        if constexpr (offer_type::any) {
            detail::round_offer now;
            offered_.current(pipeline_, tools_, now);
            all = std::move(now.tools);
        } else {
            all = std::shared_ptr<const tool_set>(std::shared_ptr<void>(), &tools_); // no owner: the agent's
        }
        if (disabled_tool_names_.empty()) return all;
        detail::enabled_offer enabled;
        detail::without_disabled(*all, own_generation_, disabled_tool_names_, enabled);
        return std::move(enabled.tools);
    }
    /// Rebuilds the offered tools at the next round. Engaging or resetting an
    /// optional slot is noticed by itself; replacing an engaged middleware by
    /// another (`emplace` on an engaged slot) whose `tools()` differ is not.
    void refresh_tools() noexcept {
        if constexpr (offer_type::any) offered_.invalidate();
    }
    agent_options& options() noexcept { return options_; }

    /// Tools never offered, whoever brings them (the agent or a middleware's
    /// `tools()`): not in the model's schema, and a call naming one is
    /// answered as a call of an unknown tool. Change it only while no run is in progress.
    agent& set_disabled_tool_names(std::vector<std::string> names) {
        disabled_tool_names_ = std::move(names);
        return *this;
    }
    const std::vector<std::string>& disabled_tool_names() const noexcept { return disabled_tool_names_; }

    /// Keeps each thread's state between invocations (see `invoke`).
    template <checkpointer C>
    agent& use_checkpointer(C c) {
        auto shared = std::make_shared<C>(std::move(c));
        // The state's JSON form is made here, so an agent without a checkpointer
        // does not compile it.
        load_ = [shared](std::string_view id) -> std::optional<state_type> {
            if (auto saved = shared->load(id)) return boost::json::value_to<state_type>(*saved);
            return std::nullopt;
        };
        if constexpr (incremental_checkpointer<C>) {
            // Each save converts what the checkpointer reads of it: the new
            // messages, the last ones it compares and the other fields.
            save_ = [shared](std::string_view id, const state_type& s) {
                shared->save_changes(id, detail::agent_state_view<state_type>(s));
            };
        } else {
            save_ = [shared](std::string_view id, const state_type& s) {
                shared->save(id, boost::json::value_from(s));
            };
        }
        if constexpr (result_checkpointer<C>) {
            save_result_ = [shared](std::string_view id, const message& m) {
                shared->save_result(id, boost::json::value_from(m));
            };
        } else {
            save_result_ = nullptr;
        }
        return *this;
    }

    /// Runs on a state the caller keeps: appends `input` and runs the loop.
    /// Never throws for what the model, tools or hooks do: failures are in the result.
    /// A state whose run is paused (stop_reason::interrupted) takes no new input:
    /// continue it with `run(state, resume{...})`.
    run_result run(state_type& state, agent_input input, const run_config& config = {}) {
        return run_from(state, std::move(input), config, false);
    }

    /// Continues a run that a hook or a tool paused (stop_reason::interrupted):
    /// the interrupted step runs again and its `interrupt(...)` call returns
    /// `r.value`. Calls of the paused round that had completed do not run again.
    run_result run(state_type& state, resume r, const run_config& config = {}) {
        return resume_from(state, std::move(r), config, false);
    }

    /// Loads the thread's state from the checkpointer (or starts one), runs, saves.
    invoke_result<state_type> invoke(agent_input input, const run_config& config = {}) {
        invoke_result<state_type> out;
        if (!load_state(config, out)) return out;
        static_cast<run_result&>(out) = run_from(out.state, std::move(input), config, true);
        save_state(config, out);
        return out;
    }

    /// Continues the thread's paused run (see `run(state, resume)`), loading and
    /// saving its state through the checkpointer, which resuming needs.
    invoke_result<state_type> invoke(resume r, const run_config& config = {}) {
        invoke_result<state_type> out;
        if (!can_resume(config, out) || !load_state(config, out)) return out;
        static_cast<run_result&>(out) = resume_from(out.state, std::move(r), config, true);
        save_state(config, out);
        return out;
    }

    /// The same loop as `run`, as a coroutine on the caller's executor. A model
    /// with `async_invoke` is awaited, and so is an asynchronous tool's
    /// `async_call`; blocking tools run on the agent's pool while the coroutine
    /// waits. So a few threads can keep thousands of runs waiting. Defined in
    /// <agentware/agent/async_loop.hpp>, which a file that calls it includes.
    detail::awaitable_in<run_result, Model> async_run(state_type& state, agent_input input,
                                                      run_config config = {}) {
        return detail::async_loop<agent>::run(*this, state, std::move(input), std::move(config));
    }

    /// `invoke` as a coroutine (<agentware/agent/async_loop.hpp>).
    detail::awaitable_in<invoke_result<state_type>, Model> async_invoke(agent_input input,
                                                                        run_config config = {}) {
        return detail::async_loop<agent>::invoke(*this, std::move(input), std::move(config));
    }

    /// `run(state, resume)` as a coroutine (<agentware/agent/async_loop.hpp>).
    detail::awaitable_in<run_result, Model> async_run(state_type& state, resume r, run_config config = {}) {
        return detail::async_loop<agent>::resume_run(*this, state, std::move(r), std::move(config));
    }

    /// `invoke(resume)` as a coroutine (<agentware/agent/async_loop.hpp>).
    detail::awaitable_in<invoke_result<state_type>, Model> async_invoke(resume r, run_config config = {}) {
        return detail::async_loop<agent>::resume_invoke(*this, std::move(r), std::move(config));
    }

private:
    template <class>
    friend struct detail::async_loop;

    using offer_type = detail::offered_tools<Pipeline>;

    // The tools this round offers (the run keeps the last offer in `round`),
    // less the disabled ones.
    const tool_set& offer(detail::tool_round<state_type>& round) {
        const tool_set* all = &tools_;
        if constexpr (offer_type::any) all = &offered_.current(pipeline_, tools_, round.offer);
        if (disabled_tool_names_.empty()) return *all;
        return detail::without_disabled(*all, own_generation_, disabled_tool_names_, round.enabled);
    }

    // The runs of `run` and `invoke` (`checkpoint`: each tool result is saved as it completes).
    run_result run_from(state_type& state, agent_input input, const run_config& config, bool checkpoint) {
        run_result result;
        if (detail::has_pending_interrupt(state.unknown_fields)) {
            result.reason = stop_reason::error;
            result.error = waiting_text(config);
            return result;
        }
        runtime rt = start(state, std::move(input), config, result, checkpoint);
        drive(state, rt, config, result, std::nullopt, nullptr);
        return result;
    }

    run_result resume_from(state_type& state, resume r, const run_config& config, bool checkpoint) {
        run_result result;
        runtime rt = start(state, agent_input{}, config, result, checkpoint);
        boost::json::object answers;
        boost::json::value record;
        detail::interrupt_point at{};
        try {
            at = detail::take_interrupts(state.unknown_fields, r.value, answers, record);
        } catch (...) {
            fail(result, std::current_exception());
            return result;
        }
        resume_with(rt, at, answers);
        drive(state, rt, config, result, at, &record);
        return result;
    }

    runtime start(state_type& state, agent_input input, const run_config& config, run_result& result,
                  bool checkpoint) {
        return start(state, std::move(input), config, config.context, result, checkpoint);
    }

    // `context` is the run's context: config.context, copied or moved (the
    // coroutine loop's config is its own; nothing reads its context after).
    runtime start(state_type& state, agent_input input, const run_config& config, boost::json::object context,
                  run_result& result, bool checkpoint) {
        runtime rt{config.thread_id,   config.run_id.empty() ? make_message_id() : config.run_id,
                   std::move(context), 0,
                   model_ref(model_),  event_sink(&config.stream.on_event, &config.subagent_streams),
                   config.stop};
        rt.checkpoint_results = checkpoint && static_cast<bool>(save_result_);
        result.first_new_message = state.messages.size();
        for (auto& m : input.messages)
            detail::append_message(state.messages, std::move(m));
        return rt;
    }

    // True when some middleware's node hook `Hook` is a coroutine.
    template <class Hook>
    static constexpr bool awaits = Pipeline::template awaits<Hook, state_type, runtime>;

    // One chain of node hooks, in the blocking loop: a coroutine hook runs to
    // its end on this thread. Without one, the pipeline is called as it always was.
    template <class Hook>
    hook_result node_hooks(state_type& state, runtime& rt) {
        if constexpr (awaits<Hook>)
            return pipeline_.template node<Hook>(state, rt, detail::hook_awaiter<agent>{});
        else
            return pipeline_.template node<Hook>(state, rt);
    }

    // The blocking loop, from the start or from where a paused run stopped.
    void drive(state_type& state, runtime& rt, const run_config& config, run_result& result,
               std::optional<detail::interrupt_point> resumed, const boost::json::value* record) {
        detail::run_buffers<state_type> buffers;
        auto at = detail::interrupt_point::before_agent;
        std::optional<agentware::interrupt> paused;
        try {
            detail::loop_step step;
            if (resumed) {
                at = *resumed;
                step = resume_step(state, rt, result, at);
                if (at == detail::interrupt_point::before_agent || at == detail::interrupt_point::after_model)
                    record = nullptr; // the resumed step is over: a later failure does not re-open it
            } else {
                step = first_step(state, rt, result);
            }
            while (step != detail::loop_step::end) {
                at = step_point(step);
                step = step == detail::loop_step::tools ? run_tools(state, rt, config, result, buffers.tools)
                                                        : model_round(state, rt, config, result, buffers);
                if (result.interrupts.empty()) { // a tool that paused again keeps its answers
                    end_resume(rt);
                    record = nullptr;
                }
            }
        } catch (agentware::interrupt& i) {
            paused.emplace(std::move(i));
        } catch (...) {
            fail(result, std::current_exception());
        }
        if (paused) {
            at = refine_point(at, rt, result);
            if (run_others_first(at, *paused)) {
                try {
                    buffers.tools.held = paused->held_calls;
                    run_tools(state, rt, config, result, buffers.tools);
                } catch (...) {
                    fail(result, std::current_exception());
                }
                buffers.tools.held.clear();
            }
        }
        conclude(state, rt, result, at, std::move(paused), record);
    }

    // A resumed run's first step: the interrupted hook chain again (before_agent,
    // after_model), or where the loop goes (before_model, tools).
    detail::loop_step resume_step(state_type& state, runtime& rt, run_result& result,
                                  detail::interrupt_point at) {
        switch (at) {
        case detail::interrupt_point::before_agent: {
            auto step = first_step(state, rt, result);
            end_hook_resume(rt);
            return step;
        }
        case detail::interrupt_point::after_model: {
            auto step = after_answer(state.messages, node_hooks<hooks::after_model_t>(state, rt), result);
            end_hook_resume(rt);
            return step;
        }
        case detail::interrupt_point::before_model:
            return detail::loop_step::model;
        case detail::interrupt_point::tools:
            return detail::loop_step::tools;
        }
        return detail::loop_step::model;
    }

    // The end of a run, paused or not: a paused run records its interrupts in
    // the state (its after_agent hooks run when it finally ends); a resumed run
    // that failed in the step it resumed (`record` still set) keeps waiting for its resume.
    void conclude(state_type& state, runtime& rt, run_result& result, detail::interrupt_point at,
                  std::optional<agentware::interrupt> paused, const boost::json::value* record) {
        if (paused) {
            result.interrupts.insert(
                result.interrupts.begin(),
                interrupt_info{std::string(detail::to_string(at)), std::move(paused->payload)});
        } else if (!result.interrupts.empty()) {
            at = detail::interrupt_point::tools;
        }
        if (!result.interrupts.empty() && result.reason != stop_reason::error) {
            result.reason = stop_reason::interrupted;
            detail::record_interrupts(state.unknown_fields, at, result.interrupts, rt.tool_resumes,
                                      rt.resumes.values);
            result.context = std::move(rt.context);
            return;
        }
        if (record != nullptr && result.reason == stop_reason::error) {
            state.unknown_fields[detail::interrupt_key] = *record; // the resume can be given again
            result.error += " (the run is still paused: resume it again)";
            result.context = std::move(rt.context);
            return;
        }
        finish(state, rt, result);
    }

    bool can_resume(const run_config& config, run_result& out) const {
        if (load_) return true;
        out.reason = stop_reason::error;
        out.error = "cannot resume thread \"" + config.thread_id +
                    "\": the agent has no checkpointer (use_checkpointer) to keep a paused run's state";
        return false;
    }

    // The before_agent hooks, and where the loop starts.
    detail::loop_step first_step(state_type& state, runtime& rt, run_result& result) {
        return start_at(node_hooks<hooks::before_agent_t>(state, rt), result);
    }

    void finish(state_type& state, runtime& rt, run_result& result) {
        try {
            node_hooks<hooks::after_agent_t>(state, rt); // always: it releases what before_agent took
        } catch (const agentware::interrupt&) {
            result.reason = stop_reason::error;
            result.error = "an after_agent hook interrupted the run: a run can pause before the agent, "
                           "around the model and in its tools, not after the agent";
        } catch (...) {
            fail(result, std::current_exception());
        }
        result.context = std::move(rt.context);
    }

    // Returns false (with the error in `out`) when the stored state cannot be read.
    bool load_state(const run_config& config, invoke_result<state_type>& out) {
        if (!load_) return true;
        try {
            if (auto saved = load_(config.thread_id)) out.state = std::move(*saved);
            return true;
        } catch (...) {
            fail(out, std::current_exception());
            out.error = "could not load the state of thread \"" + config.thread_id + "\": " + out.error;
            return false;
        }
    }
    void save_state(const run_config& config, invoke_result<state_type>& out) {
        if (!save_) {
            if (out.reason == stop_reason::interrupted) {
                // Nothing would keep the paused state: a clear error, the state still in `out`.
                out.reason = stop_reason::error;
                out.error = "a hook or a tool interrupted the run on thread \"" + config.thread_id +
                            "\", but the agent has no checkpointer to keep its state until it is resumed: "
                            "call use_checkpointer(...) on the agent (the payload is in `interrupts`)";
            }
            return;
        }
        try {
            save_(config.thread_id, out.state);
        } catch (...) {
            fail(out, std::current_exception());
        }
    }

    model_request<state_type> make_request(state_type& state, runtime& rt, const run_config& config,
                                           const tool_set& offered) {
        model_request<state_type> req;
        req.messages = cow_vector<message>(state.messages);
        req.system_prompt = cow_string(options_.system_prompt); // borrowed: hooks that edit it copy it
        req.tools = cow_vector<tool_schema>(offered.schemas());
        req.settings = options_.settings;
        req.stream = config.stream;
        req.state = &state;
        req.rt = &rt;
        return req;
    }

    // Before the model call: the round limit, then the before_model hooks.
    // Returns the step to take instead of calling the model, if any.
    std::optional<detail::loop_step> enter_round(state_type& state, runtime& rt, const run_config& config,
                                                 run_result& result) {
        if (!count_round(rt, config, result)) return detail::loop_step::end;
        return round_jump(node_hooks<hooks::before_model_t>(state, rt), result);
    }

    // After the model call: record the answer, run after_model, decide.
    detail::loop_step leave_round(state_type& state, runtime& rt, const run_config& config,
                                  run_result& result, model_response&& response) {
        record_answer(state, rt, config, result, std::move(response));
        return after_answer(state.messages, node_hooks<hooks::after_model_t>(state, rt), result);
    }
    void record_answer(state_type& state, runtime& rt, const run_config& config, run_result& result,
                       model_response&& response) {
        result.usage += response.usage;
        result.rounds = rt.round;
        std::size_t first = state.messages.size();
        detail::normalize_ai(response.ai, first);
        detail::append_message(state.messages, std::move(response.ai));
        notify(config, "model", rt, state.messages, first);
    }

    detail::loop_step model_round(state_type& state, runtime& rt, const run_config& config,
                                  run_result& result, detail::run_buffers<state_type>& buffers) {
        if (auto step = enter_round(state, rt, config, result)) return *step;
        const tool_set& offered = offer(buffers.tools);
        model_response response = [&] {
            if constexpr (Pipeline::template declares<hooks::wrap_model_call_t>) {
                auto req = make_request(state, rt, config, offered);
                return pipeline_.wrap_model_call(
                    req, [this](model_request<state_type>& r) { return model_.invoke(r); });
            } else {
                // No hook can change the request, and what it borrows (the
                // history, the tools) is the same every round: one serves the run.
                if (!buffers.request)
                    buffers.request = make_request(state, rt, config, offered);
                else if constexpr (offer_type::any)
                    buffers.request->tools = cow_vector<tool_schema>(offered.schemas()); // slots may change
                return model_.invoke(static_cast<const chat_request&>(*buffers.request));
            }
        }();
        return leave_round(state, rt, config, result, std::move(response));
    }

    tool_response call_through_chain(tool_request<state_type>& req) {
        return pipeline_.wrap_tool_call(req, [this](tool_request<state_type>& r) {
            return detail::call_tool(r, options_.validate_tool_arguments);
        });
    }

    // Answers garbled calls, then collects the calls to run (none: back to the model).
    void prepare_tools(state_type& state, const runtime& rt, detail::tool_round<state_type>& round) {
        detail::answer_invalid_calls(state.messages);
        detail::collect_tool_calls(state, rt, offer(round), round);
    }

    detail::loop_step merge_tools(state_type& state, runtime& rt, const run_config& config,
                                  run_result& result, detail::tool_round<state_type>& round,
                                  std::size_t first) {
        bool ended = false;
        std::exception_ptr failure = detail::merge_tool_results(state, round, ended, result.interrupts);
        notify(config, "tools", rt, state.messages, first);
        if (failure) std::rethrow_exception(failure);
        if (!result.interrupts.empty()) return detail::loop_step::end; // paused: see conclude
        if (ended) {
            result.reason = stop_reason::ended_by_tool;
            return detail::loop_step::end;
        }
        return detail::loop_step::model;
    }

    detail::loop_step run_tools(state_type& state, runtime& rt, const run_config& config, run_result& result,
                                detail::tool_round<state_type>& round) {
        std::size_t first = state.messages.size();
        prepare_tools(state, rt, round);
        auto& calls = round.calls;
        checkpoint_round(state, rt);
        std::vector<std::exception_ptr> unsaved(rt.checkpoint_results ? calls.size() : 0);
        auto run_one = [&](detail::tool_slot<state_type>& slot) {
            try {
                // Built where it is kept: a result holds a message, which is large to move.
                slot.result.emplace(detail::construct_from{[&] { return call_through_chain(slot.request); }});
            } catch (...) {
                slot.failure = std::current_exception();
            }
            if (rt.checkpoint_results)
                unsaved[static_cast<std::size_t>(&slot - calls.data())] = checkpoint_result(rt, slot);
        };
        if (calls.size() > 1 && options_.max_parallel_tools <= 1) {
            // One at a time, in order (what a replay needs to be deterministic).
            for (auto& slot : calls)
                run_one(slot);
        } else if (calls.size() > 1) {
            // The first call runs here; the others on the pool, side by side.
            auto run_at = [&](std::size_t i) { run_one(calls[i]); };
            pool_->run_side_by_side(calls.size(), run_at);
        } else if (calls.size() == 1) {
            run_one(calls[0]);
        }
        auto step = merge_tools(state, rt, config, result, round, first);
        for (const auto& e : unsaved)
            if (e) std::rethrow_exception(e); // every result is in the state: the final save may succeed
        return step;
    }

    // With a result checkpointer in `invoke`: the state (its last ai message
    // and the calls) is saved before the round's calls run...
    void checkpoint_round(const state_type& state, const runtime& rt) {
        if (rt.checkpoint_results) save_(rt.thread_id, state);
    }
    // ... and each call's result as the call completes (from the thread that
    // ran it). Returns the failure to save it, if any.
    std::exception_ptr checkpoint_result(const runtime& rt,
                                         const detail::tool_slot<state_type>& slot) noexcept {
        if (!slot.result) return nullptr; // failed or interrupted: its answer comes with the round
        try {
            message m = slot.result->msg;
            if (m.tool_call_id().empty()) m.set_tool_call_id(slot.request.call->id);
            m.type = role::tool;
            save_result_(rt.thread_id, m);
            return nullptr;
        } catch (...) {
            return std::current_exception();
        }
    }

    Model model_;
    tool_set tools_;
    Pipeline pipeline_;
    agent_options options_;
    [[no_unique_address]] std::conditional_t<offer_type::any, offer_type, std::monostate> offered_;
    std::unique_ptr<detail::tool_pool> pool_;
    std::function<std::optional<state_type>(std::string_view)> load_;
    std::function<void(std::string_view, const state_type&)> save_;
    std::function<void(std::string_view, const message&)> save_result_;
    std::uint64_t own_generation_ = 0; // bumped when tools() hands out the agent's tool set
    std::vector<std::string> disabled_tool_names_;
};

/// Makes an agent from a model, tools and middlewares: the pipeline's type is
/// the list of the middlewares' types, in order.
template <chat_model Model, class... Middlewares>
auto make_agent(Model model, tool_set tools, Middlewares... middlewares) {
    using pipeline_t = pipeline<Middlewares...>;
    if constexpr (sizeof...(Middlewares) == 0)
        return agent<Model, pipeline_t>(std::move(model), std::move(tools));
    else
        return agent<Model, pipeline_t>(std::move(model), std::move(tools),
                                        pipeline_t(std::move(middlewares)...));
}

} // namespace agentware

#endif
