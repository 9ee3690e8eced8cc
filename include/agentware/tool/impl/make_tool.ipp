#ifndef AGENTWARE_TOOL_IMPL_MAKE_TOOL_IPP
#define AGENTWARE_TOOL_IMPL_MAKE_TOOL_IPP

// The definitions of agentware/tool/make_tool.hpp's non-template code: in every translation unit
// that includes it (header-only), or once in <agentware/src.hpp>
// (AGENTWARE_SEPARATE_COMPILATION).

#include <agentware/tool/make_tool.hpp>

#include <boost/json/parse.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace agentware::detail {

boost::json::object parse_parameters(std::string_view json) {
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(json, ec);
    if (ec || !v.is_object())
        throw std::invalid_argument("agentware::make_tool: the parameters must be a JSON Schema object" +
                                    (ec ? ": " + ec.message() : std::string{}));
    return std::move(v.as_object());
}

} // namespace agentware::detail

#endif
