#ifndef AGENTWARE_TOOL_TOOL_SET_HPP
#define AGENTWARE_TOOL_TOOL_SET_HPP

#include <agentware/detail/blocking_runner.hpp>
#include <agentware/detail/config.hpp>
#include <agentware/tool/schema_validation.hpp>
#include <agentware/tool/tool.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace agentware {

namespace detail {

/// A blocking tool as the agent stores it (its `async_call` is
/// tool_interface's: `call` on the awaiting thread).
template <class T>
class tool_adapter final : public tool_interface {
public:
    explicit tool_adapter(T t) : tool_(std::move(t)) {}
    const tool_schema& schema() const override { return tool_.schema(); }
    tool_output call(const boost::json::object& args, const tool_runtime& rt) override {
        return tool_.call(args, rt);
    }

private:
    T tool_;
};

/// An asynchronous tool as the agent stores it. A class of its own, so that a
/// program with blocking tools only never compiles a coroutine's awaitable.
template <class T>
class async_tool_adapter final : public tool_interface {
public:
    explicit async_tool_adapter(T t) : tool_(std::move(t)) {}
    const tool_schema& schema() const override { return tool_.schema(); }
    bool is_async() const noexcept override { return true; }
    tool_output call(const boost::json::object& args, const tool_runtime& rt) override {
        if constexpr (blocking_tool<T>)
            return tool_.call(args, rt);
        else
            return runner_.run(tool_.async_call(args, rt));
    }
    detail::awaitable_in<tool_output, T> async_call(const boost::json::object& args,
                                                    const tool_runtime& rt) override {
        return tool_.async_call(args, rt);
    }

private:
    // How the blocking loop calls an asynchronous tool. Declared first, so
    // that the tool (and any connection it keeps) goes before the contexts.
    [[no_unique_address]] std::conditional_t<blocking_tool<T>, std::monostate, blocking_runner> runner_;
    T tool_;
};

} // namespace detail

/// Any tool in the type-erased form that tool sets and middlewares hand around.
template <tool T>
std::shared_ptr<tool_interface> share_tool(T t) {
    using adapter = std::conditional_t<async_tool<T>, detail::async_tool_adapter<T>, detail::tool_adapter<T>>;
    return std::make_shared<adapter>(std::move(t));
}

/// The tools an agent offers the model, by unique name.
class tool_set {
public:
    tool_set() = default;
    template <tool... Ts>
    explicit tool_set(Ts... ts) {
        (add(std::move(ts)), ...);
    }

    template <tool T>
    tool_set& add(T t) {
        return add(share_tool(std::move(t)));
    }
    AGENTWARE_DECL tool_set& add(std::shared_ptr<tool_interface> t);
    /// Removes the tool of that name; false when there is none.
    AGENTWARE_DECL bool remove(std::string_view name);

    /// The tool of that name, or nullptr. Linear: agents have tens of tools, not thousands.
    AGENTWARE_DECL tool_interface* find(std::string_view name) const noexcept;

    const std::vector<tool_schema>& schemas() const noexcept { return schemas_; }

    /// The index of `t`'s argument schema, built when `t` was added; nullptr
    /// for a tool not in this set.
    AGENTWARE_DECL const detail::schema_index* schema_index_of(const tool_interface* t) const noexcept;
    std::size_t size() const noexcept { return tools_.size(); }
    /// The tools, in the order they were added (shared pointers, to add them to another set).
    auto begin() const noexcept { return tools_.begin(); }
    auto end() const noexcept { return tools_.end(); }
    bool empty() const noexcept { return tools_.empty(); }

    /// "a, b, c": for messages that tell the model what exists.
    AGENTWARE_DECL std::string names() const;

private:
    std::vector<std::shared_ptr<tool_interface>> tools_; // shared: copies of an agent share its tools
    std::vector<tool_schema> schemas_;
    std::vector<detail::schema_index> indexes_;
};

} // namespace agentware

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/tool/impl/tool_set.ipp>
#endif

#endif
