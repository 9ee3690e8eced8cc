#ifndef AGENTWARE_MIDDLEWARE_FROM_FUNCTION_HPP
#define AGENTWARE_MIDDLEWARE_FROM_FUNCTION_HPP

// Middleware from a function: LangChain's decorators (`@before_model`,
// `@wrap_model_call`, `@dynamic_prompt`, ...) in C++. Each function returns a
// middleware type that holds the callable and declares the one hook, so it
// composes in a pipeline like any other and costs what a hand-written struct
// with the same hook costs (the call is inlined; nothing is type-erased).
//
//   auto audit = agentware::before_model([](auto& state, agentware::runtime& rt) { ... });
//   auto prompt = agentware::dynamic_system_prompt(
//       [](const auto& state, const agentware::runtime& rt) { return std::string("..."); });
//
// Node hooks take `(state&, runtime&)` or `(state&)` and return void,
// jump_to or hook_result; wrap hooks take `(request&, next)` and return what
// `next` returns, as a member hook does (docs/hooks.md). The header needs
// nothing but the standard library, like core.hpp.

#include <concepts>
#include <string>
#include <type_traits>
#include <utility>

namespace agentware {

namespace detail {

// Calls a node-hook callable with (state, runtime) or (state), whichever it takes.
template <class F, class State, class Runtime>
decltype(auto) call_node(F& f, State& state, Runtime& rt) {
    if constexpr (std::invocable<F&, State&, Runtime&>)
        return f(state, rt);
    else
        return f(state);
}

template <class F, class State, class Runtime>
concept node_callable = std::invocable<F&, State&, Runtime&> || std::invocable<F&, State&>;

} // namespace detail

// One wrapper per hook. Each is a distinct class template, so two hooks made
// from functions never collide, and the same lambda type twice is refused as
// any middleware listed twice is.

template <class F>
struct before_agent_fn {
    F fn;
    template <class State, class Runtime>
        requires detail::node_callable<F, State, Runtime>
    decltype(auto) before_agent(State& state, Runtime& rt) {
        return detail::call_node(fn, state, rt);
    }
};
template <class F>
struct before_model_fn {
    F fn;
    template <class State, class Runtime>
        requires detail::node_callable<F, State, Runtime>
    decltype(auto) before_model(State& state, Runtime& rt) {
        return detail::call_node(fn, state, rt);
    }
};
template <class F>
struct after_model_fn {
    F fn;
    template <class State, class Runtime>
        requires detail::node_callable<F, State, Runtime>
    decltype(auto) after_model(State& state, Runtime& rt) {
        return detail::call_node(fn, state, rt);
    }
};
template <class F>
struct after_agent_fn {
    F fn;
    template <class State, class Runtime>
        requires detail::node_callable<F, State, Runtime>
    decltype(auto) after_agent(State& state, Runtime& rt) {
        return detail::call_node(fn, state, rt);
    }
};
template <class F>
struct wrap_model_call_fn {
    F fn;
    template <class Request, class Next>
    auto wrap_model_call(Request& request, Next&& next) -> decltype(fn(request, next)) {
        return fn(request, next);
    }
};
template <class F>
struct wrap_tool_call_fn {
    F fn;
    template <class Request, class Next>
    auto wrap_tool_call(Request& request, Next&& next) -> decltype(fn(request, next)) {
        return fn(request, next);
    }
};

/// The system prompt of each model call, computed from the state and the run
/// (LangChain's `@dynamic_prompt`). The agent's own prompt is replaced.
template <class F>
struct dynamic_system_prompt_fn {
    F fn;
    template <class Request, class Next>
    auto wrap_model_call(Request& request, Next&& next) -> decltype(next(request)) {
        static_assert(
            std::is_convertible_v<decltype(fn(std::as_const(*request.state), std::as_const(*request.rt))),
                                  std::string>,
            "agentware::dynamic_system_prompt: the function must take (const state&, const runtime&) "
            "and return a std::string");
        request.system_prompt = std::string(fn(std::as_const(*request.state), std::as_const(*request.rt)));
        return next(request);
    }
};

template <class F>
before_agent_fn<std::decay_t<F>> before_agent(F&& f) {
    return {std::forward<F>(f)};
}
template <class F>
before_model_fn<std::decay_t<F>> before_model(F&& f) {
    return {std::forward<F>(f)};
}
template <class F>
after_model_fn<std::decay_t<F>> after_model(F&& f) {
    return {std::forward<F>(f)};
}
template <class F>
after_agent_fn<std::decay_t<F>> after_agent(F&& f) {
    return {std::forward<F>(f)};
}
template <class F>
wrap_model_call_fn<std::decay_t<F>> wrap_model_call(F&& f) {
    return {std::forward<F>(f)};
}
template <class F>
wrap_tool_call_fn<std::decay_t<F>> wrap_tool_call(F&& f) {
    return {std::forward<F>(f)};
}
template <class F>
dynamic_system_prompt_fn<std::decay_t<F>> dynamic_system_prompt(F&& f) {
    return {std::forward<F>(f)};
}

} // namespace agentware

#endif
