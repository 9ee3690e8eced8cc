#ifndef AGENTWARE_TOOL_DETAIL_TOOL_CALLABLE_HPP
#define AGENTWARE_TOOL_DETAIL_TOOL_CALLABLE_HPP

// How a tool made from a callable calls it and turns what it returns into a
// tool_output: shared by the tools taking JSON arguments and the typed ones.

#include <agentware/core/type_list.hpp>
#include <agentware/detail/awaitable.hpp>
#include <agentware/tool/tool.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace agentware::detail {

/// What a tool's callable may return (or, asynchronous, yield): what the model can read.
template <class R>
concept tool_answer =
    std::is_convertible_v<R&&, tool_output> || std::is_constructible_v<boost::json::value, R&&>;

/// What a tool made from a callable answers, from what the callable returned.
template <tool_answer R>
tool_output to_tool_output(R&& r) {
    if constexpr (std::is_convertible_v<R&&, tool_output>)
        return tool_output(std::forward<R>(r));
    else
        return tool_output(boost::json::serialize(boost::json::value(std::forward<R>(r))));
}

// Over the callable's awaitable only (not the tool's type), so that no
// coroutine frame holds a user's type (GCC warns when it is in an unnamed
// namespace). `keep_alive` holds what the call may refer to (a typed tool's
// converted arguments); it is the first parameter, so the last destroyed.
template <class R, class Output = tool_output> // Output: see model_ref::async_invoke_as
detail::awaitable<Output> await_tool_output([[maybe_unused]] std::shared_ptr<const void> keep_alive,
                                            detail::awaitable<R> call) {
    static_assert(!std::is_void_v<R>,
                  "agentware::make_tool: an asynchronous tool's callable must return an awaitable "
                  "of tool_output, a string or a boost::json::value, not awaitable<void>");
    co_return to_tool_output(co_await std::move(call));
}

/// An answer known before any await (a refused call). A template, so that
/// only the translation units that use it emit the coroutine.
template <class T>
detail::awaitable<T> ready_awaitable(T value) {
    co_return value;
}

/// How a tool calls its callable `F` with its arguments `Arg` (the JSON
/// object, or a typed tool's struct) and, when `F` takes it, the runtime.
template <class F, class Arg>
struct tool_invoker {
    static constexpr bool takes_runtime = std::is_invocable_v<F&, Arg, const tool_runtime&>;
    using result_type =
        typename std::conditional_t<takes_runtime, std::invoke_result<F&, Arg, const tool_runtime&>,
                                    std::invoke_result<F&, Arg>>::type;
    static constexpr bool asynchronous = is_awaitable_v<result_type>;

    static decltype(auto) invoke(F& fn, Arg&& arg, const tool_runtime& rt) {
        if constexpr (takes_runtime)
            return std::invoke(fn, std::forward<Arg>(arg), rt);
        else
            return std::invoke(fn, std::forward<Arg>(arg));
    }
};

/// Checked in the body of each tool type made from a callable, so that the
/// error shows where make_tool names the tool's type, not at its first call.
template <class Invoker>
consteval bool answers_readably() {
    using R = typename Invoker::result_type;
    static_assert(
        tool_answer<std::conditional_t<Invoker::asynchronous, awaited_t<R>, R>>,
        "agentware::make_tool: the callable returns a type the model cannot read; return "
        "tool_output, a string or a boost::json::value (an asynchronous tool: an awaitable of one)");
    return true;
}

} // namespace agentware::detail

#endif
