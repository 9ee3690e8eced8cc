#ifndef AGENTWARE_MIDDLEWARE_DETAIL_JSON_VALUES_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_JSON_VALUES_HPP

// Reading loosely typed JSON the way DeerFlow (Python) reads it: truthiness of
// context flags, str() of scalars, and a canonical serialisation with sorted
// keys (json.dumps(sort_keys=True)) so equal arguments give equal text.

#include <agentware/detail/format.hpp>
#include <agentware/detail/python_repr.hpp>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace agentware::detail {

/// Python truthiness: null, false, 0, "" and empty containers are false.
inline bool truthy(const boost::json::value& v) noexcept {
    switch (v.kind()) {
    case boost::json::kind::null:
        return false;
    case boost::json::kind::bool_:
        return v.get_bool();
    case boost::json::kind::int64:
        return v.get_int64() != 0;
    case boost::json::kind::uint64:
        return v.get_uint64() != 0;
    case boost::json::kind::double_:
        return v.get_double() != 0.0;
    case boost::json::kind::string:
        return !v.get_string().empty();
    case boost::json::kind::array:
        return !v.get_array().empty();
    case boost::json::kind::object:
        return !v.get_object().empty();
    }
    return false;
}

/// Whether `key` is present in `o` and truthy.
inline bool flag(const boost::json::object& o, std::string_view key) noexcept {
    const auto* v = o.if_contains(key);
    return v != nullptr && truthy(*v);
}

/// The string at `key`, or "" when it is missing or not a string.
inline std::string string_at(const boost::json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || !v->is_string()) return {};
    return std::string(v->get_string());
}

/// Python's str() of a JSON value: strings as they are, numbers in their
/// shortest form, true/false/None as Python prints them, containers as JSON.
inline std::string python_str(const boost::json::value& v) {
    switch (v.kind()) {
    case boost::json::kind::null:
        return "None";
    case boost::json::kind::bool_:
        return v.get_bool() ? "True" : "False";
    case boost::json::kind::int64:
        return detail::format("{}", v.get_int64());
    case boost::json::kind::uint64:
        return detail::format("{}", v.get_uint64());
    case boost::json::kind::double_:
        return detail::format("{}", v.get_double());
    case boost::json::kind::string:
        return std::string(v.get_string());
    default:
        return boost::json::serialize(v);
    }
}

/// Python's repr of a JSON value as Python prints the dict it parses to
/// (`{'path': '/a', 'n': 1, 'ok': True}`): what f"{args}" shows.
inline std::string python_repr_json(const boost::json::value& v) {
    switch (v.kind()) {
    case boost::json::kind::string:
        return python_repr(std::string_view(v.get_string()));
    case boost::json::kind::array: {
        std::string out = "[";
        bool first = true;
        for (const auto& e : v.get_array()) {
            if (!first) out += ", ";
            first = false;
            out += python_repr_json(e);
        }
        return out + "]";
    }
    case boost::json::kind::object: {
        std::string out = "{";
        bool first = true;
        for (const auto& kv : v.get_object()) {
            if (!first) out += ", ";
            first = false;
            out += python_repr(std::string_view(kv.key()));
            out += ": ";
            out += python_repr_json(kv.value());
        }
        return out + "}";
    }
    default:
        return python_str(v);
    }
}

inline void write_canonical(std::string& out, const boost::json::value& v) {
    if (const auto* o = v.if_object()) {
        std::vector<const boost::json::key_value_pair*> items;
        items.reserve(o->size());
        for (const auto& kv : *o)
            items.push_back(&kv);
        std::sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->key() < b->key(); });
        out += '{';
        bool first = true;
        for (const auto* kv : items) {
            if (!first) out += ',';
            first = false;
            out += boost::json::serialize(boost::json::value(kv->key()));
            out += ':';
            write_canonical(out, kv->value());
        }
        out += '}';
    } else if (const auto* a = v.if_array()) {
        out += '[';
        bool first = true;
        for (const auto& e : *a) {
            if (!first) out += ',';
            first = false;
            write_canonical(out, e);
        }
        out += ']';
    } else {
        out += boost::json::serialize(v);
    }
}

/// JSON text with every object's keys sorted: one text for equal values.
inline std::string canonical_json(const boost::json::value& v) {
    std::string out;
    write_canonical(out, v);
    return out;
}

} // namespace agentware::detail

#endif
