#ifndef AGENTWARE_MIDDLEWARE_DETAIL_CALL_LIMITS_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_CALL_LIMITS_HPP

// What LangChain's limit and retry middlewares share: the exit behaviour
// named by a string in configuration ("end", "error", "continue"), read with
// a path-named error when it is not one the middleware accepts.

#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>

#include <boost/json/value.hpp>

#include <fmt/core.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace agentware {

/// What a limit or retry middleware does when it gives up.
enum class exit_behavior {
    end,      ///< append an ai message and leave the loop
    error,    ///< throw
    continue_ ///< answer with an error message the model reads, and go on
};

constexpr std::string_view to_string(exit_behavior b) noexcept {
    switch (b) {
    case exit_behavior::end:
        return "end";
    case exit_behavior::error:
        return "error";
    case exit_behavior::continue_:
        return "continue";
    }
    return "?";
}

namespace detail {

inline std::optional<exit_behavior> exit_behavior_from(std::string_view s) noexcept {
    if (s == "end") return exit_behavior::end;
    if (s == "error") return exit_behavior::error;
    if (s == "continue") return exit_behavior::continue_;
    return std::nullopt;
}

/// Reads `key` as one of `allowed` (absent: `into` unchanged).
inline void read_exit_behavior(json_reader& r, std::string_view key, exit_behavior& into,
                               std::initializer_list<exit_behavior> allowed) {
    auto s = r.optional<std::string>(key);
    if (!s) return;
    auto b = exit_behavior_from(*s);
    bool ok = false;
    std::string names;
    for (auto a : allowed) {
        ok = ok || (b && *b == a);
        names += detail::format("{}\"{}\"", names.empty() ? "" : ", ", to_string(a));
    }
    if (!ok) throw json_error(r.path_of(key), detail::format("expected one of {}, got \"{}\"", names, *s));
    into = *b;
}

} // namespace detail

} // namespace agentware

#endif
