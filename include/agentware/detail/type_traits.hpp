#ifndef AGENTWARE_DETAIL_TYPE_TRAITS_HPP
#define AGENTWARE_DETAIL_TYPE_TRAITS_HPP

// Recognising the standard containers that JSON readers and schema
// generators treat specially.

#include <optional>
#include <type_traits>
#include <vector>

namespace agentware::detail {

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};

} // namespace agentware::detail

#endif
