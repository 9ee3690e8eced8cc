#ifndef AGENTWARE_CORE_FIELDS_HPP
#define AGENTWARE_CORE_FIELDS_HPP

// State fields that middlewares declare. A field is a type with
//   static constexpr std::string_view name;   // its key in the serialised state
//   using value_type = ...;                    // what it holds
// and optionally
//   static void merge(value_type& current, value_type&& update);
// the rule that folds an update into the current value (without one, the
// update replaces the value). A middleware lists its fields as
//   using state_fields = agentware::fields<artifacts, viewed_images>;
// and the pipeline unites the lists of all its middlewares.

#include <agentware/core/type_list.hpp>

#include <concepts>
#include <string_view>
#include <type_traits>
#include <utility>

namespace agentware {

template <class F>
concept state_field = requires {
    { F::name } -> std::convertible_to<std::string_view>;
    typename F::value_type;
};

template <class F>
concept field_with_merge =
    state_field<F> && requires(typename F::value_type& v) { F::merge(v, std::move(v)); };

/// The list of fields a middleware adds to the agent state.
template <state_field... Fs>
using fields = type_list<Fs...>;

/// Folds `update` into `current` by the field's rule (replacement by default).
template <state_field F>
void merge_field(typename F::value_type& current, typename F::value_type&& update) {
    if constexpr (field_with_merge<F>)
        F::merge(current, std::move(update));
    else
        current = std::move(update);
}

namespace detail {

// One address per field type: identifies a field across type erasure.
template <class F>
inline constexpr char field_tag = 0;

template <class M>
struct declared_fields {
    using type = type_list<>;
};
template <class M>
    requires requires { typename M::state_fields; }
struct declared_fields<M> {
    using type = typename M::state_fields;
};

template <class T>
inline constexpr bool is_field_list = false;
template <class... Fs>
inline constexpr bool is_field_list<type_list<Fs...>> = true;

// The spelling of earlier versions, `using state = fields<...>`, shadowed the
// `state` parameter of every hook; it is refused with a message rather than
// silently ignored.
template <class M>
concept declares_fields_as_state = requires { typename M::state; } && is_field_list<typename M::state>;

template <class List>
struct fields_have_distinct_names;
template <class... Fs>
struct fields_have_distinct_names<type_list<Fs...>> {
    static constexpr bool value = [] {
        constexpr std::string_view names[] = {std::string_view{}, std::string_view{Fs::name}...};
        for (std::size_t i = 1; i < sizeof...(Fs) + 1; ++i)
            for (std::size_t j = i + 1; j < sizeof...(Fs) + 1; ++j)
                if (names[i] == names[j]) return false;
        return true;
    }();
};

} // namespace detail

/// The fields a middleware type declares (`using state_fields = fields<...>`), or none.
template <class M>
using declared_fields_t = typename detail::declared_fields<M>::type;

} // namespace agentware

#endif
