#ifndef AGENTWARE_MIDDLEWARE_DETAIL_WRAP_FORMS_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_WRAP_FORMS_HPP

// Helpers that let one generic wrap hook serve both agent loops. In the
// blocking loop `next(req)` returns the result itself; in the coroutine loop
// it returns an awaitable of it. A hook that only forwards or short-circuits
// uses `in_form_of`; a hook that must see the result (or what `next` throws)
// uses `forward_and_map`, which becomes a coroutine in the coroutine loop.

#include <boost/asio/awaitable.hpp>

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace agentware::detail::mw {

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

template <class R>
inline constexpr bool is_awaitable_v = awaited<std::remove_cvref_t<R>>::is_awaitable;

template <class R>
using awaited_t = typename awaited<std::remove_cvref_t<R>>::type;

// g++ 12 at -O2 reports a mismatched operator delete for Asio's coroutine
// frames (a false positive: the frame's own operator new/delete pair is used).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

template <class R, class T>
R make_ready(T value) {
    co_return value;
}

/// `value` in the form the rest of the chain returns (`R`): itself, or an
/// awaitable that yields it at once.
template <class R, class T>
R in_form_of(T value) {
    if constexpr (is_awaitable_v<R>)
        return make_ready<R, awaited_t<R>>(awaited_t<R>(std::move(value)));
    else
        return R(std::move(value));
}

// The coroutine form: request and continuation are copied into the frame,
// because the frame may outlive the caller's.
template <class R, class Req, class Next, class OnValue, class OnError>
R map_awaited(Req req, Next next, OnValue on_value, OnError on_error) {
    std::optional<awaited_t<R>> result;
    std::exception_ptr failure;
    try {
        result.emplace(co_await next(req));
    } catch (...) {
        failure = std::current_exception();
    }
    if (failure) co_return on_error(failure);
    co_return on_value(std::move(*result));
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/// Runs the rest of the chain and passes its result through `on_value`, or
/// what it threw through `on_error` (both return the result type).
template <class Req, class Next, class OnValue, class OnError>
auto forward_and_map(Req& req, Next& next, OnValue on_value, OnError on_error) -> decltype(next(req)) {
    using R = decltype(next(req));
    if constexpr (is_awaitable_v<R>) {
        return map_awaited<R>(req, next, std::move(on_value), std::move(on_error));
    } else {
        std::optional<R> result;
        try {
            result.emplace(next(req));
        } catch (...) {
            return on_error(std::current_exception());
        }
        return on_value(std::move(*result));
    }
}

} // namespace agentware::detail::mw

#endif
