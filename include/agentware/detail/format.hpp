#ifndef AGENTWARE_DETAIL_FORMAT_HPP
#define AGENTWARE_DETAIL_FORMAT_HPP

// agentware formats its own texts with detail::format: fmt::format without
// fmt's compile-time check of the format string. The check is a constant
// evaluation per call site, and the headers have some four hundred of them,
// which every file that includes the headers paid (half a second of g++-12's
// time for <agentware.hpp>). The library's own builds define
// AGENTWARE_CHECK_FORMAT_STRINGS, so that a wrong format string still fails
// at compile time there. Only <fmt/core.h> is needed: the formatting itself
// is compiled in the fmt library (<fmt/format.h> would add 0.3 s per file).

#include <fmt/core.h>

#include <string>

namespace agentware::detail {

#if defined(AGENTWARE_CHECK_FORMAT_STRINGS)
template <class... Args>
std::string format(fmt::format_string<Args...> text, Args&&... args) {
    return fmt::vformat(text, fmt::make_format_args(args...));
}
#else
template <class... Args>
std::string format(fmt::string_view text, Args&&... args) {
    return fmt::vformat(text, fmt::make_format_args(args...));
}
#endif

} // namespace agentware::detail

#endif
