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
#include <vector>

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

/// Reads `key` as one of `allowed` (absent: `into` unchanged).
inline void read_exit_behavior(json_reader& r, std::string_view key, exit_behavior& into,
                               std::initializer_list<exit_behavior> allowed) {
    auto s = r.optional<std::string>(key);
    if (!s) return;
    std::vector<json_choice_of<exit_behavior>> choices;
    for (auto a : allowed)
        choices.emplace_back(to_string(a), a);
    into = json_choose(r.path_of(key), *s, choices);
}

} // namespace detail

} // namespace agentware

#endif
