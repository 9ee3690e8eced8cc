#ifndef AGENTWARE_CORE_ORDERING_HPP
#define AGENTWARE_CORE_ORDERING_HPP

// Placement rules a middleware may state about itself, checked when the
// pipeline type is formed:
//   static constexpr bool must_be_last = true;
//       it must be the last middleware of the list (clarification: its
//       wrap_tool_call must be the innermost, so it sees ask_clarification first);
//   using must_come_after = agentware::type_list<thread_data>;
//       when those middlewares are in the list, they stand before this one
//       (sandbox needs the thread directories that thread_data makes);
//   using must_come_before = agentware::type_list<tool_error_handling>;
//       when those middlewares are in the list, they stand after this one
//       (read_before_write's wrap_tool_call must stand outside tool_error_handling's);
//   static constexpr bool must_be_outermost_model_wrapper = true;
//       no middleware before it in the list declares wrap_model_call, so its
//       wrap_model_call is the outermost (input_sanitization: every inner
//       wrapper, retries included, sees the sanitised request).

#include <agentware/core/hooks.hpp>
#include <agentware/core/type_list.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace agentware {

/// The error types below carry the broken rule in their name and the
/// middlewares in their arguments, so the compiler's message reads as the rule.
template <class Middleware>
struct middleware_must_be_last_in_the_pipeline {
    static_assert(
        detail::always_false<Middleware>,
        "agentware::pipeline: ordering rule broken: the middleware in this error's template argument must be "
        "the last of the pipeline (it declares must_be_last)");
};

template <class Middleware, class MustComeBefore>
struct middleware_must_come_after {
    static_assert(
        detail::always_false<Middleware>,
        "agentware::pipeline: ordering rule broken: the first middleware in this error's template arguments "
        "must come after the second one in the pipeline (it lists it in must_come_after)");
};

template <class Middleware, class MustComeAfter>
struct middleware_must_come_before {
    static_assert(
        detail::always_false<Middleware>,
        "agentware::pipeline: ordering rule broken: the first middleware in this error's template arguments "
        "must come before the second one in the pipeline (it lists it in must_come_before)");
};

template <class Middleware, class OuterWrapper>
struct middleware_must_be_the_outermost_wrap_model_call {
    static_assert(
        detail::always_false<Middleware>,
        "agentware::pipeline: ordering rule broken: the first middleware in this error's template arguments "
        "must be the outermost wrap_model_call (it declares must_be_outermost_model_wrapper), but the second "
        "one comes before it and wraps the model call too");
};

namespace detail {

template <class M>
consteval bool wants_outermost_model_wrapper() {
    if constexpr (requires { M::must_be_outermost_model_wrapper; })
        return static_cast<bool>(M::must_be_outermost_model_wrapper);
    else
        return false;
}

template <class M>
struct must_come_before_of {
    using type = type_list<>;
};
template <class M>
    requires requires { typename M::must_come_before; }
struct must_come_before_of<M> {
    using type = typename M::must_come_before;
};

template <std::size_t I, class Self, class... Ms, class... Later>
consteval bool check_comes_before(type_list<Later...>) {
    return ([] {
        constexpr std::size_t j = index_in<Later, Ms...>();
        if constexpr (j != sizeof...(Ms) && j < I) {
            (void)sizeof(middleware_must_come_before<Self, Later>);
            return false;
        } else {
            return true;
        }
    }() && ... &&
            true);
}

// No middleware before position I declares wrap_model_call.
template <std::size_t I, class Self, class... Ms, std::size_t... Js>
consteval bool check_outermost_model_wrapper(std::index_sequence<Js...>) {
    return ([] {
        using other = typename list_at<Js, type_list<Ms...>>::type;
        if constexpr (Js < I && declares_wrap_model_call<other>) {
            (void)sizeof(middleware_must_be_the_outermost_wrap_model_call<Self, other>);
            return false;
        } else {
            return true;
        }
    }() && ... &&
            true);
}

template <class M>
consteval bool wants_to_be_last() {
    if constexpr (requires { M::must_be_last; })
        return static_cast<bool>(M::must_be_last);
    else
        return false;
}

template <class M>
struct must_come_after_of {
    using type = type_list<>;
};
template <class M>
    requires requires { typename M::must_come_after; }
struct must_come_after_of<M> {
    using type = typename M::must_come_after;
};

template <std::size_t I, class Self, class... Ms, class... Earlier>
consteval bool check_comes_after(type_list<Earlier...>) {
    return ([] {
        constexpr std::size_t j = index_in<Earlier, Ms...>();
        if constexpr (j != sizeof...(Ms) && j > I) {
            (void)sizeof(middleware_must_come_after<Self, Earlier>);
            return false;
        } else {
            return true;
        }
    }() && ... &&
            true);
}

template <class... Ms, std::size_t... Is>
consteval bool check_placement(std::index_sequence<Is...>) {
    return ([] {
        using self = typename list_at<Is, type_list<Ms...>>::type;
        bool ok = true;
        if constexpr (wants_to_be_last<self>() && Is + 1 != sizeof...(Ms)) {
            (void)sizeof(middleware_must_be_last_in_the_pipeline<self>);
            ok = false;
        }
        if constexpr (wants_outermost_model_wrapper<self>())
            ok = check_outermost_model_wrapper<Is, self, Ms...>(std::index_sequence_for<Ms...>{}) && ok;
        ok = check_comes_before<Is, self, Ms...>(typename must_come_before_of<self>::type{}) && ok;
        return check_comes_after<Is, self, Ms...>(typename must_come_after_of<self>::type{}) && ok;
    }() && ... &&
            true);
}

/// True when every placement rule of Ms... holds; otherwise a compile error
/// naming the rule.
template <class... Ms>
inline constexpr bool placement_rules_hold = check_placement<Ms...>(std::index_sequence_for<Ms...>{});

} // namespace detail
} // namespace agentware

#endif
