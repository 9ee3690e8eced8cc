#ifndef AGENTWARE_TOOL_MAKE_TOOL_HPP
#define AGENTWARE_TOOL_MAKE_TOOL_HPP

#include <agentware/core/type_list.hpp>
#include <agentware/detail/config.hpp>
#include <agentware/tool/detail/tool_callable.hpp>
#include <agentware/tool/tool.hpp>
#include <agentware/tool/typed_tool.hpp>

#include <boost/json/value.hpp>

#include <concepts>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace agentware {

/// A tool made from a callable. The callable takes `(const boost::json::object& args)`
/// or `(args, const tool_runtime&)` and returns a `tool_output`, a string, or a
/// JSON value (sent to the model as its serialisation) — or, to make an
/// asynchronous tool, a `boost::asio::awaitable` of one of those.
template <class F>
class function_tool {
    using invoker = detail::tool_invoker<F, const boost::json::object&>;

public:
    static constexpr bool asynchronous = invoker::asynchronous;
    static_assert(detail::answers_readably<invoker>());

    function_tool(tool_schema schema, F fn) : schema_(std::move(schema)), fn_(std::move(fn)) {}

    const tool_schema& schema() const noexcept { return schema_; }

    tool_output call(const boost::json::object& args, const tool_runtime& rt)
        requires(!asynchronous)
    {
        return detail::to_tool_output(invoker::invoke(fn_, args, rt));
    }

    // `args` and `rt` outlive the await (see `async_tool`), and so does the
    // tool, which the tool set keeps: the callable's captures stay valid.
    detail::awaitable_in<tool_output, F> async_call(const boost::json::object& args, const tool_runtime& rt)
        requires asynchronous
    {
        return detail::await_tool_output(nullptr, invoker::invoke(fn_, args, rt));
    }

private:
    tool_schema schema_;
    F fn_;
};

namespace detail {
AGENTWARE_DECL boost::json::object parse_parameters(std::string_view json);
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

/// Makes a typed tool: the callable's first parameter is an `arguments_struct`
/// (see `typed_tool`), the schema is generated from it, e.g.
/// `make_tool("add", "Adds two integers.", [](const add_args& a) { return a.a + a.b; })`.
template <class F>
    requires detail::takes_arguments_struct<F>
typed_tool<detail::arguments_of<F>, std::decay_t<F>> make_tool(std::string name, std::string description,
                                                               F&& fn) {
    return {std::move(name), std::move(description), std::forward<F>(fn)};
}

/// The same with the arguments struct named, for a callable whose parameter
/// cannot be read from its type (a generic lambda, an overload set in an object).
template <arguments_struct Args, class F>
    requires std::is_invocable_v<F&, Args&&> || std::is_invocable_v<F&, Args&&, const tool_runtime&>
typed_tool<Args, std::decay_t<F>> make_tool(std::string name, std::string description, F&& fn) {
    return {std::move(name), std::move(description), std::forward<F>(fn)};
}

/// Without a schema, the callable must say what its arguments are.
template <class F>
    requires(!detail::takes_arguments_struct<F>)
void make_tool(std::string, std::string, F&&) {
    static_assert(detail::always_false<F>,
                  "agentware::make_tool: without a JSON Schema, the callable's first parameter must be a "
                  "struct described with BOOST_DESCRIBE_STRUCT (or name it: make_tool<Args>(name, "
                  "description, callable))");
}

} // namespace agentware

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/tool/impl/make_tool.ipp>
#endif

#endif
