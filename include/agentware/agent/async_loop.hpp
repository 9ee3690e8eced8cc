#ifndef AGENTWARE_AGENT_ASYNC_LOOP_HPP
#define AGENTWARE_AGENT_ASYNC_LOOP_HPP

// The agent's coroutine loop: what agent::async_run and agent::async_invoke
// run. A header of its own, included by the files that call them, so that a
// file that runs agents with `invoke` alone compiles neither these coroutines
// nor the Asio they need (co_spawn, parallel groups).

#include <agentware/agent/agent.hpp>
#include <agentware/agent/coroutine_hooks.hpp>
#include <agentware/model/any_chat_model.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_state.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <concepts>
#include <cstddef>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace agentware::detail {

template <chat_model Model, class Pipeline>
struct async_loop<agent<Model, Pipeline>> {
    using agent_type = agent<Model, Pipeline>;
    using state_type = typename agent_type::state_type;

    static boost::asio::awaitable<run_result> run(agent_type& self, state_type& state, agent_input input,
                                                  run_config config, bool checkpoint = false) {
        run_result result;
        if (has_pending_interrupt(state.unknown_fields)) {
            result.reason = stop_reason::error;
            result.error = self.waiting_text(config);
            co_return result;
        }
        runtime rt =
            self.start(state, std::move(input), config, std::move(config.context), result, checkpoint);
        co_await drive(self, state, rt, config, result, std::nullopt, nullptr);
        co_return result;
    }

    static boost::asio::awaitable<run_result> resume_run(agent_type& self, state_type& state, resume r,
                                                         run_config config, bool checkpoint = false) {
        run_result result;
        runtime rt = self.start(state, agent_input{}, config, result, checkpoint);
        boost::json::object answers;
        boost::json::value record;
        interrupt_point at{};
        try {
            at = take_interrupts(state.unknown_fields, r.value, answers, record);
        } catch (...) {
            agent_type::fail(result, std::current_exception());
            co_return result;
        }
        agent_type::resume_with(rt, at, answers);
        co_await drive(self, state, rt, config, result, at, &record);
        co_return result;
    }

    static boost::asio::awaitable<invoke_result<state_type>> invoke(agent_type& self, agent_input input,
                                                                    run_config config) {
        invoke_result<state_type> out;
        if (!self.load_state(config, out)) co_return out;
        static_cast<run_result&>(out) = co_await run(self, out.state, std::move(input), config, true);
        self.save_state(config, out);
        co_return out;
    }

    static boost::asio::awaitable<invoke_result<state_type>> resume_invoke(agent_type& self, resume r,
                                                                           run_config config) {
        invoke_result<state_type> out;
        if (!self.can_resume(config, out) || !self.load_state(config, out)) co_return out;
        static_cast<run_result&>(out) = co_await resume_run(self, out.state, std::move(r), config, true);
        self.save_state(config, out);
        co_return out;
    }

private:
    // The loop of agent::drive, awaiting what may be awaited.
    static boost::asio::awaitable<void> drive(agent_type& self, state_type& state, runtime& rt,
                                              const run_config& config, run_result& result,
                                              std::optional<interrupt_point> resumed,
                                              const boost::json::value* record) {
        tool_round<state_type> round;
        auto at = interrupt_point::before_agent;
        std::optional<agentware::interrupt> paused;
        try {
            loop_step step;
            if (resumed) {
                at = *resumed;
                step = co_await resume_step(self, state, rt, result, at);
                if (at == interrupt_point::before_agent || at == interrupt_point::after_model)
                    record = nullptr; // as in agent::drive
            } else if constexpr (agent_type::template awaits<hooks::before_agent_t>) {
                step =
                    agent_type::start_at(co_await node_hooks<hooks::before_agent_t>(self, state, rt), result);
            } else {
                step = self.first_step(state, rt, result);
            }
            while (step != loop_step::end) {
                at = agent_type::step_point(step);
                step = step == loop_step::tools
                           ? co_await run_tools(self, state, rt, config, result, round)
                           : co_await model_round(self, state, rt, config, result, round);
                if (result.interrupts.empty()) { // as in agent::drive
                    agent_type::end_resume(rt);
                    record = nullptr;
                }
            }
        } catch (agentware::interrupt& i) {
            paused.emplace(std::move(i));
        } catch (...) {
            agent_type::fail(result, std::current_exception());
        }
        bool others_first = false;
        if (paused) {
            at = agent_type::refine_point(at, rt, result);
            others_first = agent_type::run_others_first(at, *paused);
        }
        if (others_first) {
            round.held = paused->held_calls;
            std::exception_ptr failure;
            try {
                co_await run_tools(self, state, rt, config, result, round);
            } catch (...) {
                failure = std::current_exception();
            }
            if (failure) agent_type::fail(result, failure);
            round.held.clear();
        }
        if constexpr (agent_type::template awaits<hooks::after_agent_t>) {
            // conclude, with the after_agent hooks awaited
            bool pausing = paused.has_value() || !result.interrupts.empty();
            bool keeps_waiting = record != nullptr;
            if ((pausing && result.reason != stop_reason::error) ||
                (keeps_waiting && result.reason == stop_reason::error)) {
                self.conclude(state, rt, result, at, std::move(paused), record);
                co_return;
            }
            try {
                co_await node_hooks<hooks::after_agent_t>(self, state, rt); // always, as in finish
            } catch (const agentware::interrupt&) {
                result.reason = stop_reason::error;
                result.error = "an after_agent hook interrupted the run: a run can pause before the agent, "
                               "around the model and in its tools, not after the agent";
            } catch (...) {
                agent_type::fail(result, std::current_exception());
            }
            result.context = std::move(rt.context);
        } else {
            self.conclude(state, rt, result, at, std::move(paused), record);
        }
    }

    static boost::asio::awaitable<loop_step> resume_step(agent_type& self, state_type& state, runtime& rt,
                                                         run_result& result, interrupt_point at) {
        loop_step step = loop_step::model;
        switch (at) {
        case interrupt_point::before_agent:
            if constexpr (agent_type::template awaits<hooks::before_agent_t>)
                step =
                    agent_type::start_at(co_await node_hooks<hooks::before_agent_t>(self, state, rt), result);
            else
                step = self.first_step(state, rt, result);
            agent_type::end_hook_resume(rt);
            break;
        case interrupt_point::after_model:
            if constexpr (agent_type::template awaits<hooks::after_model_t>)
                step = agent_type::after_answer(
                    state.messages, co_await node_hooks<hooks::after_model_t>(self, state, rt), result);
            else
                step = agent_type::after_answer(
                    state.messages, self.template node_hooks<hooks::after_model_t>(state, rt), result);
            agent_type::end_hook_resume(rt);
            break;
        case interrupt_point::before_model:
            step = loop_step::model;
            break;
        case interrupt_point::tools:
            step = loop_step::tools;
            break;
        }
        co_return step;
    }

    // A chain of node hooks with at least one coroutine among them: each step
    // runs in order, a coroutine hook awaited on this executor, until one jumps.
    // (Not a coroutine itself: the chain's frame is the only one.)
    template <class Hook>
    static boost::asio::awaitable<hook_result> node_hooks(agent_type& self, state_type& state, runtime& rt) {
        return node_chain<Hook>(self, state, rt, Pipeline::template node_order<Hook>());
    }

    template <class Hook, std::size_t... Is>
    static boost::asio::awaitable<hook_result> node_chain(agent_type& self, state_type& state, runtime& rt,
                                                          std::index_sequence<Is...>) {
        hook_result out;
        bool stop = false;
        const auto cancellation = co_await boost::asio::this_coro::cancellation_state;
        const bool throws = co_await boost::asio::this_coro::throw_if_cancelled();
        (co_await node_step<Hook, Is>(self, state, rt, out, stop, cancellation, throws), ...);
        co_return out;
    }

    // A plain step runs at once, in the chain's frame, and gives what
    // co_await takes without suspending (a question on the coroutine's
    // cancellation setting, which only reads a flag); only a coroutine
    // step costs a coroutine of its own. (No co_await in a conditional
    // expression: g++ 12 miscompiles some.) A cancelled run stops before a
    // plain step as co_await stops it before a coroutine one.
    template <class Hook, std::size_t I>
    static auto node_step(agent_type& self, state_type& state, runtime& rt, hook_result& out, bool& stop,
                          const boost::asio::cancellation_state& cancellation, bool throws) {
        if constexpr (Pipeline::template step_awaits<Hook, I, state_type, runtime>) {
            return awaited_step<Hook, I>(self, state, rt, out, stop);
        } else {
            if (throws && cancellation.cancelled() != boost::asio::cancellation_type::none)
                throw boost::system::system_error(boost::asio::error::operation_aborted, "co_await");
            if (!stop) stop = self.pipeline_.template node_step<Hook, I>(state, rt, out);
            return boost::asio::this_coro::throw_if_cancelled();
        }
    }

    template <class Hook, std::size_t I>
    static boost::asio::awaitable<void> awaited_step(agent_type& self, state_type& state, runtime& rt,
                                                     hook_result& out, bool& stop) {
        if (stop) co_return;
        auto started = self.pipeline_.template start_node_step<Hook, I>(state, rt);
        if (!started) co_return;
        using value_t = node_hook_value_t<typename decltype(started)::value_type>;
        if constexpr (std::is_void_v<value_t>)
            co_await std::move(*started);
        else
            stop = record_node_value(co_await std::move(*started), out);
    }

    static boost::asio::awaitable<loop_step> model_round(agent_type& self, state_type& state, runtime& rt,
                                                         const run_config& config, run_result& result,
                                                         tool_round<state_type>& round) {
        if constexpr (agent_type::template awaits<hooks::before_model_t>) {
            if (!agent_type::count_round(rt, config, result)) co_return loop_step::end;
            if (auto step = agent_type::round_jump(
                    co_await node_hooks<hooks::before_model_t>(self, state, rt), result))
                co_return *step;
        } else if (auto step = self.enter_round(state, rt, config, result)) {
            co_return *step;
        }
        auto req = self.make_request(state, rt, config, self.offer(round));
        // The terminal copies the request into the model coroutine's frame
        // (cheap: the messages are shared), so hooks may pass a request of their own.
        model_response response = co_await self.pipeline_.wrap_model_call(
            req, [&self](model_request<state_type>& r) { return call_model(self, chat_request(r)); });
        if constexpr (agent_type::template awaits<hooks::after_model_t>) {
            self.record_answer(state, rt, config, result, std::move(response));
            co_return agent_type::after_answer(
                state.messages, co_await node_hooks<hooks::after_model_t>(self, state, rt), result);
        } else {
            co_return self.leave_round(state, rt, config, result, std::move(response));
        }
    }

    static boost::asio::awaitable<model_response> call_model(agent_type& self, chat_request request) {
        if constexpr (async_chat_model<Model>) {
            // A blocking model behind a type-erased one is called here, as
            // its async_invoke would call it, without a coroutine of its own.
            if constexpr (std::same_as<Model, any_chat_model>)
                if (!self.model_.is_async()) co_return self.model_.invoke(request);
            co_return co_await self.model_.async_invoke(request);
        } else {
            co_return self.model_.invoke(request);
        }
    }

    // A coroutine, not a lambda: its parameters live in its own frame.
    // With a result checkpointer, the result is saved as soon as it is there
    // (`unsaved` gets the failure to save it).
    static boost::asio::awaitable<void> call_into(agent_type& self, tool_slot<state_type>& slot,
                                                  const runtime& rt, std::exception_ptr& unsaved) {
        slot.result = co_await call_through_chain(self, slot.request);
        if (rt.checkpoint_results) unsaved = self.checkpoint_result(rt, slot);
    }

    static boost::asio::awaitable<tool_response> call_through_chain(agent_type& self,
                                                                    tool_request<state_type>& req) {
        // Wrap hooks run on the caller's executor; the blocking tool runs on the pool.
        co_return co_await self.pipeline_.wrap_tool_call(req, [&self](tool_request<state_type>& r) {
            return call_tool(self, tool_request<state_type>(r));
        });
    }

    // An asynchronous tool is awaited here, on the caller's executor (so are
    // calls answered without running: an unknown tool, bad arguments); a
    // blocking one runs on the pool, so that it holds no executor's thread.
    static boost::asio::awaitable<tool_response> call_tool(agent_type& self, tool_request<state_type> r) {
        if (!r.tool || r.tool->is_async())
            co_return co_await detail::async_call_tool(r, self.options_.validate_tool_arguments);
        co_return co_await boost::asio::co_spawn(self.pool_->get(), call_tool_on_pool(self, std::move(r)),
                                                 boost::asio::use_awaitable);
    }

    static boost::asio::awaitable<tool_response> call_tool_on_pool(agent_type& self,
                                                                   tool_request<state_type> r) {
        co_return detail::call_tool(r, self.options_.validate_tool_arguments);
    }

    static boost::asio::awaitable<loop_step> run_tools(agent_type& self, state_type& state, runtime& rt,
                                                       const run_config& config, run_result& result,
                                                       tool_round<state_type>& round) {
        std::size_t first = state.messages.size();
        self.prepare_tools(state, rt, round);
        auto& calls = round.calls;
        self.checkpoint_round(state, rt);
        std::vector<std::exception_ptr> unsaved(calls.size());
        if (calls.size() == 1) {
            // Nothing to run beside it: awaited here, without a group.
            try {
                co_await call_into(self, calls[0], rt, unsaved[0]);
            } catch (...) {
                calls[0].failure = std::current_exception();
            }
        } else if (!calls.empty()) {
            auto ex = co_await boost::asio::this_coro::executor;
            using op_type = decltype(boost::asio::co_spawn(ex, std::declval<boost::asio::awaitable<void>>(),
                                                           boost::asio::deferred));
            std::vector<op_type> ops;
            ops.reserve(calls.size());
            for (std::size_t i = 0; i < calls.size(); ++i)
                ops.push_back(boost::asio::co_spawn(ex, call_into(self, calls[i], rt, unsaved[i]),
                                                    boost::asio::deferred));
            auto [order, errors] =
                co_await boost::asio::experimental::make_parallel_group(std::move(ops))
                    .async_wait(boost::asio::experimental::wait_for_all(), boost::asio::use_awaitable);
            (void)order;
            for (std::size_t i = 0; i < calls.size(); ++i)
                calls[i].failure = errors[i];
        }
        auto step = self.merge_tools(state, rt, config, result, round, first);
        for (const auto& e : unsaved)
            if (e) std::rethrow_exception(e); // as in agent::run_tools
        co_return step;
    }
};

} // namespace agentware::detail

#endif
