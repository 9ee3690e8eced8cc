#ifndef AGENTWARE_TOOL_MAKE_TOOL_HPP
#define AGENTWARE_TOOL_MAKE_TOOL_HPP

#include <agentware/tool/tool.hpp>

#include <agentware/detail/awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <concepts>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace agentware {

namespace detail {

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
// coroutine frame holds a user's type (GCC warns when it is in an unnamed namespace).
template <class R>
boost::asio::awaitable<tool_output> await_tool_output(boost::asio::awaitable<R> call) {
    static_assert(!std::is_void_v<R>,
                  "agentware::make_tool: an asynchronous tool's callable must return an awaitable "
                  "of tool_output, a string or a boost::json::value, not awaitable<void>");
    co_return to_tool_output(co_await std::move(call));
}

} // namespace detail

/// A tool made from a callable. The callable takes `(const boost::json::object& args)`
/// or `(args, const tool_runtime&)` and returns a `tool_output`, a string, or a
/// JSON value (sent to the model as its serialisation) — or, to make an
/// asynchronous tool, a `boost::asio::awaitable` of one of those.
template <class F>
class function_tool {
    static constexpr bool takes_runtime =
        std::is_invocable_v<F&, const boost::json::object&, const tool_runtime&>;

    decltype(auto) invoke(const boost::json::object& args, const tool_runtime& rt) {
        if constexpr (takes_runtime)
            return std::invoke(fn_, args, rt);
        else
            return std::invoke(fn_, args);
    }
    using result_type =
        typename std::conditional_t<takes_runtime,
                                    std::invoke_result<F&, const boost::json::object&, const tool_runtime&>,
                                    std::invoke_result<F&, const boost::json::object&>>::type;

public:
    static constexpr bool asynchronous = detail::is_awaitable_v<std::remove_cvref_t<result_type>>;
    // Checked here, where make_tool names the tool's type, not when the tool is first called.
    static_assert(
        detail::tool_answer<std::conditional_t<asynchronous, detail::awaited_t<result_type>, result_type>>,
        "agentware::make_tool: the callable returns a type the model cannot read; return "
        "tool_output, a string or a boost::json::value (an asynchronous tool: an awaitable of one)");

    function_tool(tool_schema schema, F fn) : schema_(std::move(schema)), fn_(std::move(fn)) {}

    const tool_schema& schema() const noexcept { return schema_; }

    tool_output call(const boost::json::object& args, const tool_runtime& rt)
        requires(!asynchronous)
    {
        return detail::to_tool_output(invoke(args, rt));
    }

    // `args` and `rt` outlive the await (see `async_tool`), and so does the
    // tool, which the tool set keeps: the callable's captures stay valid.
    boost::asio::awaitable<tool_output> async_call(const boost::json::object& args, const tool_runtime& rt)
        requires asynchronous
    {
        return detail::await_tool_output(invoke(args, rt));
    }

private:
    tool_schema schema_;
    F fn_;
};

namespace detail {
inline boost::json::object parse_parameters(std::string_view json) {
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(json, ec);
    if (ec || !v.is_object())
        throw std::invalid_argument("agentware::make_tool: the parameters must be a JSON Schema object" +
                                    (ec ? ": " + ec.message() : std::string{}));
    return std::move(v.as_object());
}
} // namespace detail

/// Makes a tool from a name, a description, the JSON Schema of its arguments and a callable.
template <class F>
    requires std::is_invocable_v<F&, const boost::json::object&> ||
             std::is_invocable_v<F&, const boost::json::object&, const tool_runtime&>
function_tool<std::decay_t<F>> make_tool(std::string name, std::string description,
                                         boost::json::object parameters, F&& fn) {
    return {tool_schema{std::move(name), std::move(description), std::move(parameters)}, std::forward<F>(fn)};
}

/// The same, with the schema written as JSON text.
template <class F>
    requires std::is_invocable_v<F&, const boost::json::object&> ||
             std::is_invocable_v<F&, const boost::json::object&, const tool_runtime&>
function_tool<std::decay_t<F>> make_tool(std::string name, std::string description,
                                         std::string_view parameters_json, F&& fn) {
    return make_tool(std::move(name), std::move(description), detail::parse_parameters(parameters_json),
                     std::forward<F>(fn));
}

} // namespace agentware

#endif
