#ifndef AGENTWARE_SERVER_DETAIL_RECORD_HPP
#define AGENTWARE_SERVER_DETAIL_RECORD_HPP

// Reading the keys of the server's records (threads, runs, checkpoints: JSON
// objects), shared by the stores, the run manager and the API.

#include <boost/json/object.hpp>

#include <stdexcept>
#include <string>
#include <string_view>

namespace agentware::server::detail {

/// The key's value; null when it is missing or null.
inline const boost::json::value* find(const boost::json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v == nullptr || v->is_null() ? nullptr : v;
}

/// The key's string, or `fallback`.
inline std::string string_or(const boost::json::object& o, std::string_view key, std::string fallback) {
    const auto* v = find(o, key);
    return v && v->is_string() ? std::string(v->get_string()) : std::move(fallback);
}

/// The key a store indexes a record by; std::invalid_argument when the record lacks it.
inline std::string record_key(const boost::json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || !v->is_string())
        throw std::invalid_argument("store record without " + std::string(key));
    return std::string(v->get_string());
}

} // namespace agentware::server::detail

#endif
