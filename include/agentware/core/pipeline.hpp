#ifndef AGENTWARE_CORE_PIPELINE_HPP
#define AGENTWARE_CORE_PIPELINE_HPP

#include <agentware/core/fields.hpp>
#include <agentware/core/hooks.hpp>
#include <agentware/core/jump.hpp>
#include <agentware/core/ordering.hpp>
#include <agentware/core/slot.hpp>
#include <agentware/core/type_list.hpp>

#include <boost/hana/at.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

namespace agentware {

template <class Middleware>
struct pipeline_slot_is_not_a_middleware {
    static_assert(
        detail::always_false<Middleware>,
        "agentware::pipeline: the type in this error's template argument declares none of the hooks "
        "before_agent, before_model, after_model, after_agent, wrap_model_call, "
        "wrap_tool_call, tools (a middleware must declare at least one, and must not be final)");
};

template <class Middleware>
struct middleware_names_its_fields_state {
    static_assert(
        detail::always_false<Middleware>,
        "agentware::pipeline: the middleware in this error's template argument declares its state "
        "fields as `using state = fields<...>`; name the alias `state_fields` (a member named `state` "
        "shadows the `state` parameter of its hooks)");
};

namespace detail {

template <class Slot>
consteval bool check_slot() {
    if constexpr (!middleware<slot_middleware_t<Slot>>)
        (void)sizeof(pipeline_slot_is_not_a_middleware<slot_middleware_t<Slot>>);
    if constexpr (declares_fields_as_state<slot_middleware_t<Slot>>)
        (void)sizeof(middleware_names_its_fields_state<slot_middleware_t<Slot>>);
    return true;
}

template <class M, class... Ms>
inline constexpr std::size_t count_of = (std::size_t{std::is_same_v<M, Ms>} + ... + 0);

template <std::size_t... Is>
constexpr auto reversed(std::index_sequence<Is...>) {
    return std::index_sequence<(sizeof...(Is) - 1 - Is)...>{};
}

/// The runner a pipeline entry point gets when its caller passes none: a
/// chain with a coroutine hook cannot be run with it (a compile-time error
/// naming the middleware and the hook).
struct no_node_runner {};

// Records what a node hook yielded. Returns true when it asked for a jump
// (stored in `out`), which stops the chain.
template <class V>
constexpr bool record_node_value(V&& v, hook_result& out) {
    if constexpr (std::is_same_v<std::remove_cvref_t<V>, jump_to>) {
        out = v;
        return true;
    } else {
        out = std::forward<V>(v);
        return out.has_value();
    }
}

// Interprets what a node hook returned. Returns true when the hook asked for a
// jump (stored in `out`), which stops the chain. For a hook that returns void
// the result is a constant false, so the fold in `pipeline` leaves no branch.
// A coroutine hook is handed to `runner`, which runs it to its end and
// returns what it yielded (the blocking loop's way of awaiting it).
template <class Hook, class M, class Call, class Runner>
constexpr bool node_hook_outcome(Call&& call, hook_result& out, Runner& runner) {
    using R = decltype(call());
    if constexpr (!node_hook_return<R>) {
        if constexpr (node_hook_coroutine<R>)
            (void)sizeof(typename Hook::template coroutine_value_error<M>);
        else
            (void)sizeof(typename Hook::template return_type_error<M>);
        return false;
    } else if constexpr (node_hook_coroutine<R>) {
        if constexpr (std::is_same_v<std::remove_cvref_t<Runner>, no_node_runner>) {
            (void)sizeof(typename Hook::template coroutine_without_runner<M>);
            return false;
        } else if constexpr (std::is_void_v<node_hook_value_t<R>>) {
            runner(call());
            return false;
        } else {
            return record_node_value(runner(call()), out);
        }
    } else if constexpr (std::is_void_v<R>) {
        call();
        return false;
    } else {
        return record_node_value(call(), out);
    }
}

// What calling `M`'s node hook returns (void when it cannot be called).
template <class Hook, class M, class State, class Runtime>
constexpr auto node_hook_result_probe() {
    if constexpr (Hook::template callable_with<M, State&, Runtime&>)
        return std::type_identity<typename Hook::template result_of<M, State&, Runtime&>>{};
    else if constexpr (Hook::template callable_with<M, State&>)
        return std::type_identity<typename Hook::template result_of<M, State&>>{};
    else
        return std::type_identity<void>{};
}
template <class Hook, class M, class State, class Runtime>
using node_hook_result_t = typename decltype(node_hook_result_probe<Hook, M, State, Runtime>())::type;

/// True when `M` declares the node hook `Hook` as a coroutine.
template <class Hook, class M, class State, class Runtime>
inline constexpr bool node_hook_awaits =
    Hook::template declared_by<M> && node_hook_coroutine<node_hook_result_t<Hook, M, State, Runtime>>;

// Calls one node hook of one middleware, with or without the runtime.
template <class Hook, class M, class State, class Runtime, class Runner>
constexpr bool call_node_hook(M& m, State& state, Runtime& rt, hook_result& out, Runner& runner) {
    if constexpr (Hook::template callable_with<M, State&, Runtime&>) {
        return node_hook_outcome<Hook, M>([&]() -> decltype(auto) { return Hook::call(m, state, rt); }, out,
                                          runner);
    } else if constexpr (Hook::template callable_with<M, State&>) {
        return node_hook_outcome<Hook, M>([&]() -> decltype(auto) { return Hook::call(m, state); }, out,
                                          runner);
    } else {
        (void)sizeof(typename Hook::template signature_error<M>);
        return false;
    }
}

// Starts one coroutine node hook: returns the awaitable, not yet awaited.
template <class Hook, class M, class State, class Runtime>
auto start_node_hook(M& m, State& state, Runtime& rt) {
    if constexpr (Hook::template callable_with<M, State&, Runtime&>)
        return Hook::call(m, state, rt);
    else
        return Hook::call(m, state);
}

} // namespace detail

/// A compile-time list of middlewares and the hook chains it generates.
///
/// Each `Slots` element is a middleware type, or `std::optional<M>` for a
/// middleware that run-time configuration may switch off. For every hook kind
/// the pipeline has an entry point of the same name that calls exactly the
/// middlewares that declare that hook: `before_*` in list order, `after_*` in
/// reverse list order, `wrap_*` nested with the first-listed outermost.
template <class... Slots>
class pipeline {
    static_assert((detail::check_slot<Slots>() && ...));
    static_assert(((detail::count_of<slot_middleware_t<Slots>, slot_middleware_t<Slots>...> == 1) && ...),
                  "agentware::pipeline: a middleware type is listed twice; a pipeline holds each "
                  "middleware type once (wrap a second instance in a distinct type)");
    static_assert(detail::placement_rules_hold<slot_middleware_t<Slots>...>);

public:
    /// Number of slots, optional ones included.
    static constexpr std::size_t size = sizeof...(Slots);

    /// The middleware types, without their optional wrappers.
    using middleware_types = type_list<slot_middleware_t<Slots>...>;

    /// The state fields all middlewares declare, each once, in first-declared order.
    using state_fields =
        detail::list_unique_t<detail::list_concat_t<declared_fields_t<slot_middleware_t<Slots>>...>>;
    static_assert(detail::fields_have_distinct_names<state_fields>::value,
                  "agentware::pipeline: two different state field types declared by the "
                  "middlewares have the same name");

    pipeline() = default;

    /// Takes the middlewares in list order (an optional slot takes a `std::optional<M>`).
    template <class... Args>
        requires(sizeof...(Args) == sizeof...(Slots) && sizeof...(Args) > 0 &&
                 (std::is_constructible_v<Slots, Args&&> && ...))
    explicit pipeline(Args&&... args) : slots_(Slots(std::forward<Args>(args))...) {}

    /// The slot that holds middleware `M`: an `M&`, or a `std::optional<M>&` for an
    /// optional slot (engage it with `emplace`, switch it off with `reset`).
    template <class M>
    constexpr auto& slot() noexcept {
        return boost::hana::at_c<index_of<M>()>(slots_);
    }
    template <class M>
    constexpr const auto& slot() const noexcept {
        return boost::hana::at_c<index_of<M>()>(slots_);
    }

    /// The middleware `M`, or nullptr when its optional slot is empty.
    template <class M>
    constexpr M* get() noexcept {
        return slot_traits<slot_type<M>>::get(slot<M>());
    }
    template <class M>
    constexpr const M* get() const noexcept {
        return slot_traits<slot_type<M>>::get(slot<M>());
    }

    /// True when `M` is in the list and, for an optional slot, engaged.
    template <class M>
    constexpr bool enabled() const noexcept {
        return get<M>() != nullptr;
    }

    /// True when `M` is one of the listed middleware types.
    template <class M>
    static constexpr bool contains = detail::count_of<M, slot_middleware_t<Slots>...> == 1;

    /// True when some listed middleware declares the hook `Hook` (one of the
    /// `hooks::*_t` descriptors), e.g. to skip work no hook can observe.
    template <class Hook>
    static constexpr bool declares = (Hook::template declared_by<slot_middleware_t<Slots>> || ... || false);

    /// True when some listed middleware's node hook `Hook` is a coroutine
    /// (returns `boost::asio::awaitable<...>`) for this state and runtime.
    /// The asynchronous loop awaits such a chain step by step; a chain without
    /// one is called exactly as before.
    template <class Hook, class State, class Runtime>
    static constexpr bool awaits =
        (detail::node_hook_awaits<Hook, slot_middleware_t<Slots>, State, Runtime> || ... || false);

    /// The slot indices in the order the chain of node hook `Hook` runs them.
    template <class Hook>
    static constexpr auto node_order() {
        if constexpr (std::is_same_v<Hook, hooks::after_model_t> ||
                      std::is_same_v<Hook, hooks::after_agent_t>)
            return detail::reversed(std::index_sequence_for<Slots...>{});
        else
            return std::index_sequence_for<Slots...>{};
    }

    /// True when slot `I`'s node hook `Hook` is a coroutine.
    template <class Hook, std::size_t I, class State, class Runtime>
    static constexpr bool step_awaits = detail::node_hook_awaits<
        Hook, slot_middleware_t<typename detail::list_at<I, type_list<Slots...>>::type>, State, Runtime>;

    /// One step of a node chain, for a driver that awaits coroutine hooks
    /// (agent/async_loop.hpp): slot `I`'s hook `Hook` if it is a plain one
    /// (true when it asked for a jump, stored in `out`).
    template <class Hook, std::size_t I, class State, class Runtime, class Runner = detail::no_node_runner>
    constexpr bool node_step(State& state, Runtime& rt, hook_result& out, Runner&& runner = {}) {
        using slot_t = typename detail::list_at<I, type_list<Slots...>>::type;
        using M = slot_middleware_t<slot_t>;
        if constexpr (!Hook::template declared_by<M>) {
            return false;
        } else if constexpr (is_optional_slot_v<slot_t>) {
            auto& s = boost::hana::at_c<I>(slots_);
            return s && detail::call_node_hook<Hook>(*s, state, rt, out, runner);
        } else {
            return detail::call_node_hook<Hook>(boost::hana::at_c<I>(slots_), state, rt, out, runner);
        }
    }

    /// Slot `I`'s coroutine hook `Hook`, started but not awaited, or nothing
    /// when its optional slot is empty.
    template <class Hook, std::size_t I, class State, class Runtime>
        requires step_awaits<Hook, I, State, Runtime>
    auto start_node_step(State& state, Runtime& rt) {
        using slot_t = typename detail::list_at<I, type_list<Slots...>>::type;
        using M = slot_middleware_t<slot_t>;
        using R = std::remove_cvref_t<detail::node_hook_result_t<Hook, M, State, Runtime>>;
        if constexpr (!detail::node_hook_return<R>)
            (void)sizeof(typename Hook::template coroutine_value_error<M>);
        std::optional<R> started;
        if constexpr (is_optional_slot_v<slot_t>) {
            if (auto& s = boost::hana::at_c<I>(slots_))
                started.emplace(detail::start_node_hook<Hook>(*s, state, rt));
        } else {
            started.emplace(detail::start_node_hook<Hook>(boost::hana::at_c<I>(slots_), state, rt));
        }
        return started;
    }

    /// Calls `f(m)` for each middleware `m` in list order, skipping empty optional slots.
    template <class F>
    constexpr void for_each_enabled(F&& f) {
        boost::hana::for_each(slots_, [&](auto& slot) {
            using slot_t = std::remove_cvref_t<decltype(slot)>;
            if (auto* m = slot_traits<slot_t>::get(slot)) f(*m);
        });
    }

    template <class State, class Runtime, class Runner = detail::no_node_runner>
    constexpr hook_result before_agent(State& state, Runtime& rt, Runner&& runner = {}) {
        return run_node<hooks::before_agent_t>(std::index_sequence_for<Slots...>{}, state, rt, runner);
    }
    template <class State, class Runtime, class Runner = detail::no_node_runner>
    constexpr hook_result before_model(State& state, Runtime& rt, Runner&& runner = {}) {
        return run_node<hooks::before_model_t>(std::index_sequence_for<Slots...>{}, state, rt, runner);
    }
    template <class State, class Runtime, class Runner = detail::no_node_runner>
    constexpr hook_result after_model(State& state, Runtime& rt, Runner&& runner = {}) {
        return run_node<hooks::after_model_t>(detail::reversed(std::index_sequence_for<Slots...>{}), state,
                                              rt, runner);
    }
    template <class State, class Runtime, class Runner = detail::no_node_runner>
    constexpr hook_result after_agent(State& state, Runtime& rt, Runner&& runner = {}) {
        return run_node<hooks::after_agent_t>(detail::reversed(std::index_sequence_for<Slots...>{}), state,
                                              rt, runner);
    }

    /// The chain of node hook `Hook` (one of the four `hooks::*_t` node
    /// descriptors), in its order: what the four entry points above run.
    template <class Hook, class State, class Runtime, class Runner = detail::no_node_runner>
    constexpr hook_result node(State& state, Runtime& rt, Runner&& runner = {}) {
        return run_node<Hook>(node_order<Hook>(), state, rt, runner);
    }

    /// Runs `terminal(request)` (the model call) inside every `wrap_model_call`,
    /// the first-listed middleware outermost, and returns what the outermost returns.
    template <class Request, class Terminal>
    constexpr decltype(auto) wrap_model_call(Request&& request, Terminal&& terminal) {
        return run_wrap<hooks::wrap_model_call_t, 0>(request, terminal);
    }
    /// Runs `terminal(request)` (one tool call) inside every `wrap_tool_call`.
    template <class Request, class Terminal>
    constexpr decltype(auto) wrap_tool_call(Request&& request, Terminal&& terminal) {
        return run_wrap<hooks::wrap_tool_call_t, 0>(request, terminal);
    }

private:
    boost::hana::tuple<Slots...> slots_;

    template <class M>
    static consteval std::size_t index_of() {
        static_assert(contains<M>,
                      "agentware::pipeline::slot/get: this middleware type is not in the pipeline");
        return detail::index_in<M, slot_middleware_t<Slots>...>();
    }
    template <class M>
    using slot_type = typename detail::list_at<index_of<M>(), type_list<Slots...>>::type;

    template <class Hook, std::size_t... Is, class State, class Runtime, class Runner>
    constexpr hook_result run_node(std::index_sequence<Is...>, State& state, Runtime& rt, Runner& runner) {
        hook_result out;
        (void)(node_step<Hook, Is>(state, rt, out, runner) || ...);
        return out;
    }

    template <class Hook, std::size_t I, class Request, class Terminal>
    constexpr decltype(auto) run_wrap(Request& request, Terminal& terminal) {
        using result_t = std::invoke_result_t<Terminal&, Request&>;
        if constexpr (I == sizeof...(Slots)) {
            return std::invoke(terminal, request);
        } else {
            using slot_t = typename detail::list_at<I, type_list<Slots...>>::type;
            using M = slot_middleware_t<slot_t>;
            if constexpr (!Hook::template declared_by<M>) {
                return run_wrap<Hook, I + 1>(request, terminal);
            } else {
                // `next` is the rest of the chain; a hook may call it zero, one or many times.
                auto next = [this, &terminal](auto&& req) -> result_t {
                    return this->template run_wrap<Hook, I + 1>(req, terminal);
                };
                using next_t = decltype(next);
                if constexpr (!Hook::template callable_with<M, Request&, next_t&>) {
                    (void)sizeof(typename Hook::template signature_error<M>);
                    return std::invoke(terminal, request);
                } else if constexpr (!std::is_convertible_v<
                                         typename Hook::template result_of<M, Request&, next_t&>, result_t>) {
                    (void)sizeof(typename Hook::template return_type_error<M>);
                    return std::invoke(terminal, request);
                } else if constexpr (is_optional_slot_v<slot_t>) {
                    auto& s = boost::hana::at_c<I>(slots_);
                    if (!s) return result_t(run_wrap<Hook, I + 1>(request, terminal));
                    return result_t(Hook::call(*s, request, next));
                } else {
                    return result_t(Hook::call(boost::hana::at_c<I>(slots_), request, next));
                }
            }
        }
    }
};

} // namespace agentware

#endif
