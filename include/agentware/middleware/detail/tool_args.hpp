#ifndef AGENTWARE_MIDDLEWARE_DETAIL_TOOL_ARGS_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_TOOL_ARGS_HPP

// Reading a tool's JSON arguments without throwing: a missing or mistyped
// argument is the model's mistake, reported back as an "Error: ..." text.
// Shared by the sandbox tools and the filesystem tools.

#include <agentware/detail/format.hpp>

#include <boost/json/object.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace agentware::detail {

// Argument readers: a wrong type is the model's mistake, reported, not thrown.
struct arg_error {
    std::string text;
};

inline std::optional<std::string> string_arg(const boost::json::object& args, std::string_view key,
                                             bool required, std::optional<arg_error>& err) {
    const auto* v = args.if_contains(key);
    if (!v || v->is_null()) {
        if (required && !err)
            err = arg_error{detail::format("Error: the required argument '{}' is missing", key)};
        return std::nullopt;
    }
    if (!v->is_string()) {
        if (!err) err = arg_error{detail::format("Error: argument '{}' must be a string", key)};
        return std::nullopt;
    }
    return std::string(v->get_string());
}

inline std::optional<std::int64_t> int_arg(const boost::json::object& args, std::string_view key,
                                           std::optional<arg_error>& err) {
    const auto* v = args.if_contains(key);
    if (!v || v->is_null()) return std::nullopt;
    if (v->is_int64()) return v->get_int64();
    if (v->is_uint64()) return static_cast<std::int64_t>(std::min<std::uint64_t>(v->get_uint64(), INT64_MAX));
    if (v->is_double() && v->get_double() == static_cast<double>(static_cast<std::int64_t>(v->get_double())))
        return static_cast<std::int64_t>(v->get_double());
    if (v->is_string()) { // models send "5" as often as 5
        const auto& s = v->get_string();
        std::int64_t n = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
        if (ec == std::errc() && p == s.data() + s.size()) return n;
    }
    if (!err) err = arg_error{detail::format("Error: argument '{}' must be an integer", key)};
    return std::nullopt;
}

inline bool bool_arg(const boost::json::object& args, std::string_view key, bool fallback,
                     std::optional<arg_error>& err) {
    const auto* v = args.if_contains(key);
    if (!v || v->is_null()) return fallback;
    if (v->is_bool()) return v->get_bool();
    if (!err) err = arg_error{detail::format("Error: argument '{}' must be a boolean", key)};
    return fallback;
}

/// Runs a tool's body with `args`: an argument error the body records, or
/// anything it throws, becomes an error text for the model. (The result type
/// is the body's, tool_output, named through it so this header stays light.)
template <class Body>
auto call_reading_args(const boost::json::object& args, Body&& body)
    -> decltype(body(args, std::declval<std::optional<arg_error>&>())) {
    using output = decltype(body(args, std::declval<std::optional<arg_error>&>()));
    try {
        std::optional<arg_error> err;
        output out = body(args, err);
        if (err) return output::error(err->text);
        return out;
    } catch (const std::exception& e) {
        return output::error(detail::format("Error: {}", e.what()));
    }
}

} // namespace agentware::detail

#endif
