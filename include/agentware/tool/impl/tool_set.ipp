#ifndef AGENTWARE_TOOL_IMPL_TOOL_SET_IPP
#define AGENTWARE_TOOL_IMPL_TOOL_SET_IPP

// tool_set's members: in every translation unit that includes tool_set.hpp
// (header-only), or once in <agentware/src.hpp> (AGENTWARE_SEPARATE_COMPILATION).

#include <agentware/tool/tool_set.hpp>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace agentware {

tool_set& tool_set::add(std::shared_ptr<tool_interface> t) {
    if (!t) throw std::invalid_argument("agentware::tool_set: null tool");
    const std::string& name = t->schema().name;
    if (name.empty()) throw std::invalid_argument("agentware::tool_set: a tool has an empty name");
    if (find(name)) throw std::invalid_argument("agentware::tool_set: two tools are named \"" + name + "\"");
    schemas_.push_back(t->schema());
    indexes_.emplace_back(t->schema().parameters); // the tool's own schema: it lives as long as the tool
    tools_.push_back(std::move(t));
    return *this;
}

bool tool_set::remove(std::string_view name) {
    for (std::size_t i = 0; i < tools_.size(); ++i)
        if (schemas_[i].name == name) {
            tools_.erase(tools_.begin() + static_cast<std::ptrdiff_t>(i));
            schemas_.erase(schemas_.begin() + static_cast<std::ptrdiff_t>(i));
            indexes_.erase(indexes_.begin() + static_cast<std::ptrdiff_t>(i));
            return true;
        }
    return false;
}

tool_interface* tool_set::find(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < schemas_.size(); ++i)
        if (schemas_[i].name == name) return tools_[i].get();
    return nullptr;
}

const detail::schema_index* tool_set::schema_index_of(const tool_interface* t) const noexcept {
    for (std::size_t i = 0; i < tools_.size(); ++i)
        if (tools_[i].get() == t) return &indexes_[i];
    return nullptr;
}

std::string tool_set::names() const {
    std::string out;
    for (const auto& s : schemas_) {
        if (!out.empty()) out += ", ";
        out += s.name;
    }
    return out;
}

} // namespace agentware

#endif
