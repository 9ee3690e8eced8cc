#ifndef AGENTWARE_DETAIL_AWAITABLE_HPP
#define AGENTWARE_DETAIL_AWAITABLE_HPP

// Telling an awaitable from a plain value, for code that serves both loops.

#include <agentware/detail/awaitable_fwd.hpp>

#include <type_traits>

namespace agentware::detail {

template <class R>
struct awaited {
    static constexpr bool is_awaitable = false;
    using type = R;
};
template <class T, class Executor>
struct awaited<boost::asio::awaitable<T, Executor>> {
    static constexpr bool is_awaitable = true;
    using type = T;
};

/// True when `R` is a `boost::asio::awaitable`.
template <class R>
inline constexpr bool is_awaitable_v = awaited<std::remove_cvref_t<R>>::is_awaitable;

/// What `R` yields: `T` for `awaitable<T>`, `R` itself otherwise.
template <class R>
using awaited_t = typename awaited<std::remove_cvref_t<R>>::type;

} // namespace agentware::detail

#endif
