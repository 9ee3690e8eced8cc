#ifndef AGENTWARE_AGENT_DETAIL_LOOP_STEPS_HPP
#define AGENTWARE_AGENT_DETAIL_LOOP_STEPS_HPP

// The pieces of one agent round that the blocking and the asynchronous loops
// share. Nothing here walks the whole history: each step looks only at the
// tail of the messages, so a round costs the same at any history length.

#include <agentware/agent/detail/offered_tools.hpp>
#include <agentware/agent/requests.hpp>
#include <agentware/agent/run.hpp>
#include <agentware/agent/runtime.hpp>
#include <agentware/core/jump.hpp>
#include <agentware/detail/config.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/message/add_messages.hpp>
#include <agentware/message/id.hpp>
#include <agentware/tool/invalid_arguments.hpp>
#include <agentware/tool/schema_validation.hpp>
#include <agentware/tool/tool_set.hpp>

#include <agentware/detail/awaitable_fwd.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace agentware::detail {

/// Where the loop goes next.
enum class loop_step { model, tools, end };

inline loop_step step_after_jump(jump_to j) noexcept {
    switch (j) {
    case jump_to::end:
        return loop_step::end;
    case jump_to::tools:
        return loop_step::tools;
    case jump_to::model:
        return loop_step::model;
    }
    return loop_step::model;
}

/// Converts to what `make` returns, so that `emplace(construct_from{make})`
/// builds the result in place instead of moving a temporary into it.
template <class Make>
struct construct_from {
    Make make;
    operator std::invoke_result_t<Make&>() { return make(); } // NOLINT: implicit on purpose
};
template <class Make>
construct_from(Make) -> construct_from<Make>;

/// Appends a message the agent made or received. A message without an id gets
/// a fresh one and is appended without a search; one that brings its own id
/// goes through the add_messages rule (it may replace an earlier one).
AGENTWARE_DECL void append_message(std::vector<message>& messages, message&& m);

/// Makes the model's answer fit the history: an ai message whose tool calls
/// all have ids, so that their results can answer them. A call the model sent
/// without one is labelled by where it stands, `call_{index}_{position}`
/// (`call_{index}_invalid_{position}` for an invalid call), `index` being the
/// message's place in the history: the same run gives the same ids.
AGENTWARE_DECL void normalize_ai(message& ai, std::size_t index);

/// Index of the last ai message, searching back only over the latest
/// non-ai messages; npos when there is none.
inline std::size_t last_ai_index(const std::vector<message>& messages) noexcept {
    for (std::size_t i = messages.size(); i-- > 0;)
        if (messages[i].is_ai()) return i;
    return static_cast<std::size_t>(-1);
}

AGENTWARE_DECL bool answered_after(const std::vector<message>& messages, std::size_t ai,
                                   std::string_view call_id) noexcept;

/// One tool call of a round: the request the chain receives, then either its
/// result or, when the chain threw, why.
template <class State>
struct tool_slot {
    tool_slot(const tool_call& call, tool_interface* tool, const tool_set* tools, const State* state,
              const runtime* rt) noexcept
        : request{cow<tool_call>(call), tool, state, rt, tools} {}

    tool_request<State> request;
    std::optional<tool_response> result;
    std::exception_ptr failure;
};

/// A run's offer less the disabled tools, rebuilt only when what it was made
/// from changed: the offer (held, so its address is not reused), the agent's
/// own tools, or the disabled names.
struct enabled_offer {
    const tool_set* from = nullptr;
    std::uint64_t own_generation = 0;
    std::vector<std::string> disabled;
    std::shared_ptr<const tool_set> tools;
};

AGENTWARE_DECL const tool_set& without_disabled(const tool_set& all, std::uint64_t own_generation,
                                                const std::vector<std::string>& disabled,
                                                enabled_offer& held);

/// One round's tool calls, in call order. The agent keeps one for a whole run,
/// so rounds after the first allocate nothing for them.
template <class State>
struct tool_round {
    std::vector<tool_slot<State>> calls;
    round_offer offer; ///< the tools offered last (see offered_tools)
    /// Calls that wait for a human's answer (an after_model interrupt's
    /// held_calls): not collected while set.
    std::vector<std::string> held;
    /// The offer less the disabled tools (agent::set_disabled_tool_names).
    enabled_offer enabled{};
};

/// What a run keeps from round to round, so that later rounds allocate
/// nothing for it: the tool calls' buffers, and the model request when no
/// hook can change it.
template <class State>
struct run_buffers {
    tool_round<State> tools;
    std::optional<model_request<State>> request;
};

/// Fills `round` with the calls of the last ai message that have no tool
/// message yet, in call order. Each request borrows its call from the history,
/// which stays untouched until every call of the round has returned.
template <class State>
void collect_tool_calls(State& state, const runtime& rt, const tool_set& tools, tool_round<State>& round) {
    round.calls.clear();
    const std::vector<message>& messages = state.messages;
    std::size_t ai = last_ai_index(messages);
    if (ai == static_cast<std::size_t>(-1)) return;
    for (const tool_call& c : messages[ai].tool_calls)
        if (!answered_after(messages, ai, c.id) &&
            std::find(round.held.begin(), round.held.end(), c.id) == round.held.end())
            round.calls.emplace_back(c, tools.find(c.name), &tools, &state, &rt);
}

/// Answers the calls whose arguments the model garbled with error tool
/// messages, so that every call has an answer and the model can try again.
AGENTWARE_DECL void answer_invalid_calls(std::vector<message>& messages);

AGENTWARE_DECL bool wants_tools(const std::vector<message>& messages);

AGENTWARE_DECL tool_response error_result(const tool_call& call, std::string text);

AGENTWARE_DECL tool_response to_result(const tool_call& call, tool_output&& out);

/// The answer to a call that cannot run: an unknown tool, or arguments that
/// fail its schema. Empty when the call may run.
template <class State>
std::optional<tool_response> refuse_call(const tool_request<State>& r, bool validate) {
    const tool_call& call = *r.call;
    static const tool_set none; // a request built by hand may name no tool set
    const tool_set& tools = r.tools ? *r.tools : none;
    if (!r.tool)
        return error_result(call, detail::format("Error: there is no tool named \"{}\". Available tools: {}.",
                                                 call.name, tools.empty() ? "none" : tools.names()));
    const tool_schema& schema = r.tool->schema();
    if (validate && !schema.parameters.empty()) {
        if (auto problem = validate_arguments(schema.parameters, call.args, tools.schema_index_of(r.tool)))
            return error_result(call, invalid_arguments_message(call.name, *problem));
    }
    return std::nullopt;
}

template <class State>
tool_runtime runtime_for(const tool_request<State>& r) noexcept {
    tool_runtime trt;
    trt.thread_id = r.rt->thread_id;
    trt.run_id = r.rt->run_id;
    trt.tool_call_id = r.call->id;
    trt.context = &r.rt->context;
    trt.events = r.rt->events;
    trt.stop = r.rt->stop;
    trt.model = r.rt->model;
    if (r.rt->tool_resumes != nullptr)
        if (const auto* answers = r.rt->tool_resumes->if_contains(r.call->id))
            trt.resumes.values = answers->if_array();
    trt.bind_state(*r.state);
    return trt;
}

/// The end of the tool chain: finds the tool, checks the arguments against its
/// schema, and calls it. Unknown tools and bad arguments become error tool
/// messages the model can read; what the tool throws goes up the chain.
template <class State>
tool_response call_tool(const tool_request<State>& r, bool validate) {
    if (auto refused = refuse_call(r, validate)) return std::move(*refused);
    return to_result(*r.call, r.tool->call(r.call->args, runtime_for(r)));
}

/// The same, awaiting the tool's `async_call` on the caller's executor. The
/// caller keeps `r` alive until the await completes.
template <class State, class Response = tool_response> // Response: see model_ref::async_invoke_as
detail::awaitable<Response> async_call_tool(const tool_request<State>& r, bool validate) {
    if (auto refused = refuse_call(r, validate)) co_return std::move(*refused);
    const tool_runtime trt = runtime_for(r);
    co_return to_result(*r.call, co_await r.tool->async_call(r.call->args, trt));
}

/// The message of an exception, whatever its type.
AGENTWARE_DECL std::string describe(std::exception_ptr e);

/// Folds one round's tool results into the state, in call order. A call whose
/// chain threw gets an error tool message, so the history never has a call
/// without an answer; the first such failure is returned.
///
/// Every answer is made before the first is appended: the requests borrow
/// their calls from the history, which appending may move (they are not read
/// again; the next round's collect_tool_calls drops them).
///
/// A call that interrupted (threw agentware::interrupt) stays unanswered: its
/// id and payload are added to `paused`, and it runs again on resume.
template <class State>
std::exception_ptr merge_tool_results(State& state, tool_round<State>& round, bool& ended,
                                      std::vector<interrupt_info>& paused) {
    std::exception_ptr first_failure;
    for (tool_slot<State>& slot : round.calls) {
        const tool_call& call = *slot.request.call;
        if (slot.failure && is_interrupt(slot.failure)) {
            try {
                std::rethrow_exception(slot.failure);
            } catch (interrupt& i) {
                paused.push_back(interrupt_info{call.id, std::move(i.payload)});
            }
            continue;
        }
        if (slot.failure) {
            slot.result = error_result(
                call, detail::format("Error: the tool \"{}\" failed: {}", call.name, describe(slot.failure)));
            if (!first_failure) first_failure = slot.failure;
            continue;
        }
        if (slot.result->msg.tool_call_id().empty()) slot.result->msg.set_tool_call_id(call.id);
        slot.result->msg.type = role::tool;
    }
    for (tool_slot<State>& slot : round.calls) {
        if (!slot.result) continue; // interrupted
        tool_response& r = *slot.result;
        append_message(state.messages, std::move(r.msg));
        ended = ended || r.end_run;
        // An update that cannot be applied (an unknown field, a merge conflict)
        // fails the run, but only after every result of the round is recorded.
        if (!r.update.empty()) {
            try {
                state.apply(std::move(r.update));
            } catch (...) {
                if (!first_failure) first_failure = std::current_exception();
            }
        }
    }
    return first_failure;
}

/// Where a paused run continues.
enum class interrupt_point { before_agent, before_model, after_model, tools };

inline std::string_view to_string(interrupt_point p) noexcept {
    switch (p) {
    case interrupt_point::before_agent:
        return "before_agent";
    case interrupt_point::before_model:
        return "before_model";
    case interrupt_point::after_model:
        return "after_model";
    case interrupt_point::tools:
        return "tools";
    }
    return "tools";
}

/// The state key under which a paused run keeps its pending interrupts (saved
/// with the state by the checkpointer): {"at": point, "interrupts": [{"id",
/// "value"}], "answered": {id: [resume values already given]}}.
inline constexpr std::string_view interrupt_key = "__interrupt__";

/// Records the run's pending interrupts in the state. `answered` (tool calls,
/// by id) and `hook_answered` (the pausing hook's): the resume values the
/// interrupted step received before it paused again (kept so that its next
/// resume gives them again, in order), or null.
AGENTWARE_DECL void record_interrupts(boost::json::object& unknown_fields, interrupt_point at,
                                      const std::vector<interrupt_info>& pending,
                                      const boost::json::object* answered,
                                      const boost::json::array* hook_answered);

/// True when the state (its `unknown_fields`) holds a paused run's interrupts.
AGENTWARE_DECL bool has_pending_interrupt(const boost::json::object& unknown_fields) noexcept;

/// Takes the pending interrupts out of the state for a resumed run: fills
/// `answers` (interrupt id -> the resume values for it, in order) and
/// returns where the run continues. Throws std::invalid_argument (state
/// untouched) when the thread is not paused or `value` does not answer every
/// pending interrupt.
AGENTWARE_DECL interrupt_point take_interrupts(boost::json::object& unknown_fields,
                                               const boost::json::value& value, boost::json::object& answers,
                                               boost::json::value& record);

AGENTWARE_DECL std::string recursion_message(std::size_t limit);

/// The loop's rules that do not depend on the agent's type: a base of every
/// agent, compiled once with AGENTWARE_SEPARATE_COMPILATION instead of once
/// per agent type.
class loop_base {
protected:
    // A resumed run: the answers its tool calls and its interrupted hook read.
    AGENTWARE_DECL static void resume_with(runtime& rt, interrupt_point at,
                                           const boost::json::object& answers);
    // The interrupted hook chain is over; the answers of the round's tool calls
    // stay until their step (an after_model pause may hold calls that also paused).
    AGENTWARE_DECL static void end_hook_resume(runtime& rt) noexcept;
    // The interrupted step is over: later interrupts pause the run again.
    AGENTWARE_DECL static void end_resume(runtime& rt) noexcept;
    AGENTWARE_DECL static interrupt_point step_point(loop_step step) noexcept;
    // A model round that paused after its model call paused in after_model
    // (or in its model call, which runs again on resume with the round).
    AGENTWARE_DECL static interrupt_point refine_point(interrupt_point at, const runtime& rt,
                                                       const run_result& result) noexcept;
    AGENTWARE_DECL static bool run_others_first(interrupt_point at, const agentware::interrupt& i) noexcept;

    AGENTWARE_DECL static std::string waiting_text(const run_config& config);

    // Where the loop starts after the before_agent hooks.
    AGENTWARE_DECL static loop_step start_at(hook_result j, run_result& result);
    // Records a failure; the first one is kept.
    AGENTWARE_DECL static void fail(run_result& result, std::exception_ptr e);

    AGENTWARE_DECL static void notify(const run_config& config, std::string_view node, const runtime& rt,
                                      const std::vector<message>& messages, std::size_t first);

    // False when the round limit is reached (the run ends with that error).
    AGENTWARE_DECL static bool count_round(runtime& rt, const run_config& config, run_result& result);
    // The step the before_model hooks jump to, if any.
    AGENTWARE_DECL static std::optional<loop_step> round_jump(hook_result j, run_result& result);
    // After the model's answer and the after_model hooks: the next step.
    AGENTWARE_DECL static loop_step after_answer(const std::vector<message>& messages, hook_result j,
                                                 run_result& result);
};

} // namespace agentware::detail

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/agent/detail/impl/loop_steps.ipp>
#endif

#endif
