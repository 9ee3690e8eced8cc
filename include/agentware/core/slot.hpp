#ifndef AGENTWARE_CORE_SLOT_HPP
#define AGENTWARE_CORE_SLOT_HPP

#include <optional>
#include <type_traits>

namespace agentware {

/// How the pipeline sees one element of its list: either a middleware that is
/// always on, or `std::optional<M>`, a middleware that configuration may switch
/// off at run time.
template <class Slot>
struct slot_traits {
    using middleware_type = Slot;
    static constexpr bool is_optional = false;
    static constexpr Slot* get(Slot& s) noexcept { return &s; }
    static constexpr const Slot* get(const Slot& s) noexcept { return &s; }
};

template <class M>
struct slot_traits<std::optional<M>> {
    using middleware_type = M;
    static constexpr bool is_optional = true;
    static constexpr M* get(std::optional<M>& s) noexcept { return s ? &*s : nullptr; }
    static constexpr const M* get(const std::optional<M>& s) noexcept { return s ? &*s : nullptr; }
};

template <class Slot>
using slot_middleware_t = typename slot_traits<Slot>::middleware_type;

template <class Slot>
inline constexpr bool is_optional_slot_v = slot_traits<Slot>::is_optional;

} // namespace agentware

#endif
