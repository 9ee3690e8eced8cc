#ifndef AGENTWARE_DETAIL_PYTHON_REPR_HPP
#define AGENTWARE_DETAIL_PYTHON_REPR_HPP

// Python's repr() of str and of a list of str: the reference implementations
// print values this way inside model-facing texts (a tool's allowed paths, a
// decision's arguments), so the texts keep that form for parity.

#include <agentware/detail/format.hpp>

#include <fmt/core.h>

#include <string>
#include <string_view>
#include <vector>

namespace agentware::detail {

/// Python's repr() of a str, for the list forms the tools print
/// (`['/a.txt', '/src/']`): single quotes unless the text holds a single
/// quote and no double quote, backslash escapes for the quote, backslash
/// and control characters.
inline std::string python_repr(std::string_view s) {
    const bool dq = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos;
    const char q = dq ? '"' : '\'';
    std::string out;
    out.reserve(s.size() + 2);
    out += q;
    for (char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == q || c == '\\') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (u < 0x20 || u == 0x7f) {
            out += detail::format("\\x{:02x}", u);
        } else {
            out += c;
        }
    }
    out += q;
    return out;
}

/// Python's repr() of a list of str: `['a', 'b']`.
inline std::string python_list(const std::vector<std::string>& items) {
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        out += python_repr(items[i]);
    }
    out += ']';
    return out;
}

} // namespace agentware::detail

#endif
