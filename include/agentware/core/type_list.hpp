#ifndef AGENTWARE_CORE_TYPE_LIST_HPP
#define AGENTWARE_CORE_TYPE_LIST_HPP

#include <cstddef>
#include <type_traits>
#include <utility>

namespace agentware {

/// A plain list of types. Used where only types matter (state fields,
/// ordering rules), so that no tuple machinery is instantiated for them.
template <class... Ts>
struct type_list {
    static constexpr std::size_t size = sizeof...(Ts);
};

namespace detail {

template <class...>
inline constexpr bool always_false = false;

// list_at finds the I-th type in one step, as the base class that a call
// deduces, not by I nested instantiations: a pipeline of 44 slots asks for
// every position, which took a thousand instantiations.
template <std::size_t I, class T>
struct indexed_type {
    using type = T;
};
template <class Indices, class... Ts>
struct indexed_types;
template <std::size_t... Is, class... Ts>
struct indexed_types<std::index_sequence<Is...>, Ts...> : indexed_type<Is, Ts>... {};
template <std::size_t I, class T>
indexed_type<I, T> select_indexed(const indexed_type<I, T>&);

template <std::size_t I, class List>
struct list_at;
template <std::size_t I, class... Ts>
struct list_at<I, type_list<Ts...>>
    : decltype(select_indexed<I>(
          std::declval<const indexed_types<std::index_sequence_for<Ts...>, Ts...>&>())) {};

// Position of T in Ms..., or sizeof...(Ms) when absent.
template <class T, class... Ms>
consteval std::size_t index_in() {
    constexpr bool hits[] = {std::is_same_v<T, Ms>..., true};
    std::size_t i = 0;
    while (!hits[i])
        ++i;
    return i;
}

template <class T, class List>
struct list_contains;
template <class T, class... Ts>
struct list_contains<T, type_list<Ts...>> : std::bool_constant<(std::is_same_v<T, Ts> || ...)> {};

template <class... Lists>
struct list_concat;
template <>
struct list_concat<> {
    using type = type_list<>;
};
template <class... As>
struct list_concat<type_list<As...>> {
    using type = type_list<As...>;
};
template <class... As, class... Bs, class... Rest>
struct list_concat<type_list<As...>, type_list<Bs...>, Rest...>
    : list_concat<type_list<As..., Bs...>, Rest...> {};

// Keeps the first occurrence of each type, in order.
template <class Done, class Todo>
struct list_unique_impl;
template <class Done>
struct list_unique_impl<Done, type_list<>> {
    using type = Done;
};
template <class... Done, class T, class... Todo>
struct list_unique_impl<type_list<Done...>, type_list<T, Todo...>>
    : list_unique_impl<
          std::conditional_t<(std::is_same_v<T, Done> || ...), type_list<Done...>, type_list<Done..., T>>,
          type_list<Todo...>> {};

template <class List>
using list_unique_t = typename list_unique_impl<type_list<>, List>::type;

template <class... Lists>
using list_concat_t = typename list_concat<Lists...>::type;

} // namespace detail
} // namespace agentware

#endif
