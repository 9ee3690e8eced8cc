#ifndef AGENTWARE_TOOL_TYPED_TOOL_HPP
#define AGENTWARE_TOOL_TYPED_TOOL_HPP

// A tool whose callable takes an arguments struct instead of JSON: its schema
// is generated from the struct, and the arguments arrive converted.

#include <agentware/tool/detail/tool_callable.hpp>
#include <agentware/tool/invalid_arguments.hpp>
#include <agentware/tool/json_schema.hpp>
#include <agentware/tool/read_arguments.hpp>
#include <agentware/tool/tool.hpp>

#include <boost/json/object.hpp>

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace agentware {

/// A tool made from a callable taking `(Args)` or `(Args, const tool_runtime&)`
/// (`Args` by value or by const reference), where `Args` is an
/// `arguments_struct`. It returns what `make_tool`'s JSON callables return,
/// or an awaitable of it. Arguments that do not convert (a value out of an
/// integer's range, or anything when the agent's schema check is off) are
/// answered with an error tool message the model can read, as a schema
/// failure is; the callable does not run.
template <arguments_struct Args, class F>
class typed_tool {
    static_assert(std::is_default_constructible_v<Args>,
                  "agentware::make_tool: an arguments struct must be default-constructible (the arguments "
                  "are read into a default one)");
    using invoker = detail::tool_invoker<F, Args&&>;

public:
    static constexpr bool asynchronous = invoker::asynchronous;
    static_assert(detail::answers_readably<invoker>());

    typed_tool(std::string name, std::string description, F fn)
        : schema_{std::move(name), std::move(description), json_schema_of<Args>()}, fn_(std::move(fn)) {}

    const tool_schema& schema() const noexcept { return schema_; }

    tool_output call(const boost::json::object& args, const tool_runtime& rt)
        requires(!asynchronous)
    {
        Args converted{};
        if (auto problem = read_arguments(args, converted)) return refusal(*problem);
        return detail::to_tool_output(invoker::invoke(fn_, std::move(converted), rt));
    }

    // The converted arguments live on the heap until the call completes: the
    // callable may take them by reference and keep them across its awaits.
    detail::awaitable_in<tool_output, F> async_call(const boost::json::object& args, const tool_runtime& rt)
        requires asynchronous
    {
        auto converted = std::make_shared<Args>();
        if (auto problem = read_arguments(args, *converted))
            return detail::ready_awaitable<tool_output>(refusal(*problem));
        auto call = invoker::invoke(fn_, std::move(*converted), rt);
        return detail::await_tool_output(std::move(converted), std::move(call));
    }

private:
    tool_output refusal(const std::string& problem) const {
        return tool_output::error(detail::invalid_arguments_message(schema_.name, problem));
    }

    tool_schema schema_;
    F fn_;
};

namespace detail {

/// The first parameter of a callable with one call signature (a function, a
/// function pointer, or a class with one non-template operator()).
template <class F>
struct first_parameter {};
template <class R, class A, class... Rest>
struct first_parameter<R (*)(A, Rest...)> {
    using type = A;
};
template <class R, class A, class... Rest>
struct first_parameter<R (*)(A, Rest...) noexcept> {
    using type = A;
};
template <class R, class C, class A, class... Rest>
struct first_parameter<R (C::*)(A, Rest...)> {
    using type = A;
};
template <class R, class C, class A, class... Rest>
struct first_parameter<R (C::*)(A, Rest...) const> {
    using type = A;
};
template <class R, class C, class A, class... Rest>
struct first_parameter<R (C::*)(A, Rest...) noexcept> {
    using type = A;
};
template <class R, class C, class A, class... Rest>
struct first_parameter<R (C::*)(A, Rest...) const noexcept> {
    using type = A;
};
template <class F>
    requires requires { &F::operator(); }
struct first_parameter<F> : first_parameter<decltype(&F::operator())> {};

/// The arguments struct a callable takes, deduced from its first parameter.
template <class F>
using arguments_of = std::remove_cvref_t<typename first_parameter<std::decay_t<F>>::type>;

template <class F>
concept takes_arguments_struct = requires { typename arguments_of<F>; } && arguments_struct<arguments_of<F>>;

} // namespace detail

} // namespace agentware

#endif
