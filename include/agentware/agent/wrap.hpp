#ifndef AGENTWARE_AGENT_WRAP_HPP
#define AGENTWARE_AGENT_WRAP_HPP

// Writing a wrap hook once for both agent loops.
//
// In the blocking loop `next(request)` returns the response itself; in the
// coroutine loop it returns an awaitable of it. A hook that only changes the
// request and forwards returns `next(request)` and works in both as it is.
// Two more shapes need help, and these functions give it:
//   * answering without calling `next` (a guard, a cache): `short_circuit`;
//   * looking at the response, or at what `next` threw: `map_response`, which
//     becomes a coroutine in the coroutine loop and a plain call in the other.

#include <agentware/detail/awaitable.hpp>
#include <agentware/tool/interrupt.hpp>

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace agentware {

namespace detail {

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

// The coroutine form of map_response: request and continuation are copied
// into the frame, because the frame may outlive the caller's.
template <class R, class Request, class Next, class OnResponse, class OnError>
R map_awaited(Request request, Next next, OnResponse on_response, OnError on_error) {
    std::optional<detail::awaited_t<R>> response;
    std::exception_ptr failure;
    try {
        response.emplace(co_await next(request));
    } catch (...) {
        failure = std::current_exception();
    }
    if (failure && is_interrupt(failure)) std::rethrow_exception(failure); // a pause is not a failure
    if (failure) co_return on_error(failure);
    co_return on_response(std::move(*response));
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

} // namespace detail

/// `response` in the form `next(request)` returns: the response itself in the
/// blocking loop, an awaitable that yields it at once in the coroutine loop.
/// For a wrap hook that answers without calling `next`.
template <class Request, class Next, class Response>
auto short_circuit(Request& request, Next& next, Response response) -> decltype(next(request)) {
    using R = decltype(next(request));
    if constexpr (detail::is_awaitable_v<R>)
        return detail::make_ready<R, detail::awaited_t<R>>(detail::awaited_t<R>(std::move(response)));
    else
        return R(std::move(response));
}

/// Calls `next(request)` and returns `on_response(response)`; when the rest of
/// the chain throws, returns `on_error(std::exception_ptr)` instead (except
/// for an agentware::interrupt, which passes through to the agent loop). Both
/// return the response type. In the coroutine loop this is a coroutine that
/// holds copies of the request, `next` and both callables, so capture by value
/// what they need after the hook returns.
template <class Request, class Next, class OnResponse, class OnError>
auto map_response(Request& request, Next& next, OnResponse on_response, OnError on_error)
    -> decltype(next(request)) {
    using R = decltype(next(request));
    if constexpr (detail::is_awaitable_v<R>) {
        return detail::map_awaited<R>(request, next, std::move(on_response), std::move(on_error));
    } else {
        std::optional<R> response;
        try {
            response.emplace(next(request));
        } catch (const interrupt&) {
            throw; // a pause is not a failure: it reaches the agent loop
        } catch (...) {
            return on_error(std::current_exception());
        }
        return on_response(std::move(*response));
    }
}

/// `map_response` for a hook that lets what the chain throws pass through.
template <class Request, class Next, class OnResponse>
auto map_response(Request& request, Next& next, OnResponse on_response) -> decltype(next(request)) {
    using R = decltype(next(request));
    if constexpr (detail::is_awaitable_v<R>) {
        return detail::map_awaited<R>(
            request, next, std::move(on_response),
            [](std::exception_ptr e) -> detail::awaited_t<R> { std::rethrow_exception(e); });
    } else {
        return on_response(next(request));
    }
}

} // namespace agentware

#endif
