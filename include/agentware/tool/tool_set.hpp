#ifndef AGENTWARE_TOOL_TOOL_SET_HPP
#define AGENTWARE_TOOL_TOOL_SET_HPP

#include <agentware/detail/blocking_runner.hpp>
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

template <class T>
class tool_adapter final : public tool_interface {
public:
    explicit tool_adapter(T t) : tool_(std::move(t)) {}
    const tool_schema& schema() const override { return tool_.schema(); }
    bool is_async() const noexcept override { return async_tool<T>; }
    tool_output call(const boost::json::object& args, const tool_runtime& rt) override {
        if constexpr (blocking_tool<T>)
            return tool_.call(args, rt);
        else
            return runner_.run(tool_.async_call(args, rt));
    }
    boost::asio::awaitable<tool_output> async_call(const boost::json::object& args,
                                                   const tool_runtime& rt) override {
        if constexpr (async_tool<T>)
            return tool_.async_call(args, rt);
        else
            return tool_interface::async_call(args, rt);
    }

private:
    // How the blocking loop calls an asynchronous tool. Declared first, so
    // that the tool (and any connection it keeps) goes before the contexts.
    [[no_unique_address]] std::conditional_t<async_tool<T>, blocking_runner, std::monostate> runner_;
    T tool_;
};

} // namespace detail

/// Any tool in the type-erased form that tool sets and middlewares hand around.
template <tool T>
std::shared_ptr<tool_interface> share_tool(T t) {
    return std::make_shared<detail::tool_adapter<T>>(std::move(t));
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
    tool_set& add(std::shared_ptr<tool_interface> t) {
        if (!t) throw std::invalid_argument("agentware::tool_set: null tool");
        const std::string& name = t->schema().name;
        if (name.empty()) throw std::invalid_argument("agentware::tool_set: a tool has an empty name");
        if (find(name))
            throw std::invalid_argument("agentware::tool_set: two tools are named \"" + name + "\"");
        schemas_.push_back(t->schema());
        indexes_.emplace_back(t->schema().parameters); // the tool's own schema: it lives as long as the tool
        tools_.push_back(std::move(t));
        return *this;
    }
    /// Removes the tool of that name; false when there is none.
    bool remove(std::string_view name) {
        for (std::size_t i = 0; i < tools_.size(); ++i)
            if (schemas_[i].name == name) {
                tools_.erase(tools_.begin() + static_cast<std::ptrdiff_t>(i));
                schemas_.erase(schemas_.begin() + static_cast<std::ptrdiff_t>(i));
                indexes_.erase(indexes_.begin() + static_cast<std::ptrdiff_t>(i));
                return true;
            }
        return false;
    }

    /// The tool of that name, or nullptr. Linear: agents have tens of tools, not thousands.
    tool_interface* find(std::string_view name) const noexcept {
        for (std::size_t i = 0; i < schemas_.size(); ++i)
            if (schemas_[i].name == name) return tools_[i].get();
        return nullptr;
    }

    const std::vector<tool_schema>& schemas() const noexcept { return schemas_; }

    /// The index of `t`'s argument schema, built when `t` was added; nullptr
    /// for a tool not in this set.
    const detail::schema_index* schema_index_of(const tool_interface* t) const noexcept {
        for (std::size_t i = 0; i < tools_.size(); ++i)
            if (tools_[i].get() == t) return &indexes_[i];
        return nullptr;
    }
    std::size_t size() const noexcept { return tools_.size(); }
    /// The tools, in the order they were added (shared pointers, to add them to another set).
    auto begin() const noexcept { return tools_.begin(); }
    auto end() const noexcept { return tools_.end(); }
    bool empty() const noexcept { return tools_.empty(); }

    /// "a, b, c": for messages that tell the model what exists.
    std::string names() const {
        std::string out;
        for (const auto& s : schemas_) {
            if (!out.empty()) out += ", ";
            out += s.name;
        }
        return out;
    }

private:
    std::vector<std::shared_ptr<tool_interface>> tools_; // shared: copies of an agent share its tools
    std::vector<tool_schema> schemas_;
    std::vector<detail::schema_index> indexes_;
};

} // namespace agentware

#endif
