#ifndef AGENTWARE_CORE_HOOKS_HPP
#define AGENTWARE_CORE_HOOKS_HPP

// The hook kinds, how a middleware is seen to take part in each, and the
// compile-time diagnostics for a hook the pipeline cannot call.
//
// Detection has two halves:
//  * "declares": the type has a member with the hook's name, of any kind or
//    signature (found by a name-lookup ambiguity, so templates count too);
//  * "callable": that member can be called the way the pipeline calls it.
// A type that declares a hook it cannot be called with is an error, never a
// silently skipped hook: a misspelt parameter list would otherwise vanish.

#include <agentware/core/jump.hpp>
#include <agentware/core/type_list.hpp>

#include <concepts>
#include <string_view>
#include <type_traits>
#include <utility>

// Declared, not included: a node hook may be a coroutine, and the pipeline
// must recognise one without making every user of core.hpp compile Asio.
// Asio's own declaration adds the default executor.
namespace boost::asio {
template <typename T, typename Executor>
class awaitable;
} // namespace boost::asio

namespace agentware {
namespace detail {

// What a node hook's value may be: nothing, an unconditional jump, or an optional jump.
template <class R>
concept node_hook_value = std::is_void_v<R> || std::same_as<std::remove_cvref_t<R>, jump_to> ||
                          std::same_as<std::remove_cvref_t<R>, hook_result>;

template <class R>
struct node_coroutine {
    static constexpr bool value = false;
    using type = R;
};
template <class T, class Executor>
struct node_coroutine<boost::asio::awaitable<T, Executor>> {
    static constexpr bool value = true;
    using type = T;
};

/// True when a node hook returned `boost::asio::awaitable<T>`: a coroutine
/// hook, awaited by the loop instead of called.
template <class R>
concept node_hook_coroutine = node_coroutine<std::remove_cvref_t<R>>::value;

/// What a node hook yields: `T` for a coroutine hook, its return type otherwise.
template <class R>
using node_hook_value_t = typename node_coroutine<std::remove_cvref_t<R>>::type;

// A node hook returns a value, or a coroutine that yields one.
template <class R>
concept node_hook_return =
    node_hook_value<R> || (node_hook_coroutine<R> && node_hook_value<node_hook_value_t<R>>);

} // namespace detail

namespace hooks {

/// Node hooks run once per chain pass with `(state&, runtime&)` (or just `(state&)`).
/// Wrap hooks run around the model or tool call with `(request&, next)`.
enum class hook_shape { node, wrap };

} // namespace hooks
} // namespace agentware

// One descriptor per hook kind. A macro, because the member name is the only
// thing that differs and C++ cannot name a member by a compile-time string.
#define AGENTWARE_DETAIL_DEFINE_HOOK(NAME, SHAPE, CALL_TEXT)                                                 \
    namespace agentware {                                                                                    \
    namespace detail {                                                                                       \
    struct NAME##_name_probe {                                                                               \
        int NAME;                                                                                            \
    };                                                                                                       \
    template <class M>                                                                                       \
    struct NAME##_lookup final : M, NAME##_name_probe {};                                                    \
    }                                                                                                        \
    /** True when `M` has a member named NAME, whatever its signature. */                                    \
    template <class M>                                                                                       \
    concept declares_##NAME =                                                                                \
        std::is_class_v<M> && !std::is_final_v<M> && !requires { &detail::NAME##_lookup<M>::NAME; };         \
    namespace hooks {                                                                                        \
    struct NAME##_t {                                                                                        \
        static constexpr std::string_view name = #NAME;                                                      \
        static constexpr hook_shape shape = hook_shape::SHAPE;                                               \
        template <class M>                                                                                   \
        static constexpr bool declared_by = declares_##NAME<M>;                                              \
        template <class M, class... Args>                                                                    \
        static constexpr bool callable_with =                                                                \
            requires(M& m, Args&&... args) { m.NAME(std::forward<Args>(args)...); };                         \
        /* What the call returns, found without instantiating the hook's body (a body */                     \
        /* that cannot compile would add its own error to the pipeline's). */                                \
        template <class M, class... Args>                                                                    \
        using result_of = decltype(std::declval<M&>().NAME(std::declval<Args>()...));                        \
        template <class M, class... Args>                                                                    \
        static constexpr decltype(auto) call(M& m, Args&&... args) {                                         \
            return m.NAME(std::forward<Args>(args)...);                                                      \
        }                                                                                                    \
        /* Instantiated only for a middleware that declares NAME but cannot be called; */                    \
        /* the compiler prints `Middleware` in the instantiation context. */                                 \
        template <class Middleware>                                                                          \
        struct signature_error {                                                                             \
            static_assert(detail::always_false<Middleware>,                                                  \
                          "agentware::pipeline: this middleware declares the hook `" #NAME                   \
                          "`, but the pipeline cannot call it as " CALL_TEXT ". Fix the signature of " #NAME \
                          " in the middleware type named "                                                   \
                          "in the instantiation notes, or rename the member.");                              \
        };                                                                                                   \
        template <class Middleware>                                                                          \
        struct return_type_error {                                                                           \
            static_assert(                                                                                   \
                detail::always_false<Middleware>,                                                            \
                "agentware::pipeline: the hook `" #NAME                                                      \
                "` of the middleware named in the instantiation notes returns a type the pipeline cannot "   \
                "use. Node hooks return void, agentware::jump_to or "                                        \
                "agentware::hook_result; wrap hooks return what `next` returns (in "                         \
                "async_invoke: an awaitable, so a wrap hook that looks at the "                              \
                "response must be a coroutine there).");                                                     \
        };                                                                                                   \
        template <class Middleware>                                                                          \
        struct coroutine_value_error {                                                                       \
            static_assert(detail::always_false<Middleware>,                                                  \
                          "agentware::pipeline: the hook `" #NAME                                            \
                          "` of the middleware named in the instantiation notes is a coroutine whose value " \
                          "the pipeline cannot use: a coroutine node hook returns "                          \
                          "boost::asio::awaitable<void>, awaitable<agentware::jump_to> or "                  \
                          "awaitable<agentware::hook_result>.");                                             \
        };                                                                                                   \
        template <class Middleware>                                                                          \
        struct coroutine_without_runner {                                                                    \
            static_assert(detail::always_false<Middleware>,                                                  \
                          "agentware::pipeline: the hook `" #NAME                                            \
                          "` of the middleware named in the instantiation notes is a coroutine, and this "   \
                          "call gives the pipeline no way to await it: pass a runner as the third argument " \
                          "(the agent does, in both loops).");                                               \
        };                                                                                                   \
    };                                                                                                       \
    inline constexpr NAME##_t NAME{};                                                                        \
    }                                                                                                        \
    }

AGENTWARE_DETAIL_DEFINE_HOOK(before_agent, node, "`before_agent(state&, runtime&)` or `before_agent(state&)`")
AGENTWARE_DETAIL_DEFINE_HOOK(before_model, node, "`before_model(state&, runtime&)` or `before_model(state&)`")
AGENTWARE_DETAIL_DEFINE_HOOK(after_model, node, "`after_model(state&, runtime&)` or `after_model(state&)`")
AGENTWARE_DETAIL_DEFINE_HOOK(after_agent, node, "`after_agent(state&, runtime&)` or `after_agent(state&)`")
AGENTWARE_DETAIL_DEFINE_HOOK(wrap_model_call, wrap,
                             "`wrap_model_call(request&, next)` where `next(request&)` returns the response")
AGENTWARE_DETAIL_DEFINE_HOOK(wrap_tool_call, wrap,
                             "`wrap_tool_call(request&, next)` where `next(request&)` returns the result")

#undef AGENTWARE_DETAIL_DEFINE_HOOK

namespace agentware {
namespace detail {
struct tools_name_probe {
    int tools;
};
template <class M>
struct tools_lookup final : M, tools_name_probe {};
} // namespace detail

/// True when `M` has a member named `tools`: the seventh hook, through which a
/// middleware offers tools to the model while its slot is engaged. The agent
/// (which knows what a tool is) checks that it can be called as `tools()`.
template <class M>
concept declares_tools =
    std::is_class_v<M> && !std::is_final_v<M> && !requires { &detail::tools_lookup<M>::tools; };

/// A middleware is a class that declares at least one of the seven hooks.
template <class M>
concept middleware =
    declares_before_agent<M> || declares_before_model<M> || declares_after_model<M> ||
    declares_after_agent<M> || declares_wrap_model_call<M> || declares_wrap_tool_call<M> || declares_tools<M>;

/// True when `M`'s node hook `Hook` can be called with this state and runtime.
template <class M, class Hook, class State, class Runtime>
concept has_node_hook =
    Hook::shape == hooks::hook_shape::node &&
    (Hook::template callable_with<M, State&, Runtime&> || Hook::template callable_with<M, State&>);

template <class M, class State, class Runtime>
concept has_before_agent = has_node_hook<M, hooks::before_agent_t, State, Runtime>;
template <class M, class State, class Runtime>
concept has_before_model = has_node_hook<M, hooks::before_model_t, State, Runtime>;
template <class M, class State, class Runtime>
concept has_after_model = has_node_hook<M, hooks::after_model_t, State, Runtime>;
template <class M, class State, class Runtime>
concept has_after_agent = has_node_hook<M, hooks::after_agent_t, State, Runtime>;

/// True when `M`'s wrap hook can be called with this request and continuation.
template <class M, class Request, class Next>
concept has_wrap_model_call = hooks::wrap_model_call_t::callable_with<M, Request&, Next&>;
template <class M, class Request, class Next>
concept has_wrap_tool_call = hooks::wrap_tool_call_t::callable_with<M, Request&, Next&>;

} // namespace agentware

#endif
