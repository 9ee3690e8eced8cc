#ifndef AGENTWARE_THREAD_ID_HPP
#define AGENTWARE_THREAD_ID_HPP

// Thread ids name conversation threads. They end up in file names (one
// checkpoint file, one data directory per thread), so they are restricted to a
// set that is safe as a single path component on every file system: no '/',
// no "..", no NUL, no spaces, no case-folding surprises beyond letters.

#include <agentware/message/detail/text.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace agentware {

/// The longest accepted thread id, in bytes (a UUID has 36).
inline constexpr std::size_t max_thread_id_length = 64;

/// True when `id` has 1 to 64 characters, each from A-Z, a-z, 0-9, '_' and '-'.
constexpr bool is_valid_thread_id(std::string_view id) noexcept {
    if (id.empty() || id.size() > max_thread_id_length) return false;
    for (char c : id) {
        // Spelled out rather than <cctype>: isalnum depends on the C locale.
        const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                        c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

/// Throws std::invalid_argument unless `id` is a valid thread id. The message
/// quotes the id with control characters escaped and long ids cut, e.g.
/// `invalid thread id "../x": use 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'`.
inline void validate_thread_id(std::string_view id) {
    if (is_valid_thread_id(id)) return;
    std::string what = "invalid thread id ";
    what += detail::quoted_excerpt(id, max_thread_id_length);
    if (id.empty()) {
        what += " (empty)";
    } else if (id.size() > max_thread_id_length) {
        what += " (";
        what += std::to_string(id.size());
        what += " bytes long)";
    }
    what += ": use 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'";
    throw std::invalid_argument(what);
}

} // namespace agentware

#endif
