#ifndef AGENTWARE_DETAIL_PYTHON_JSON_HPP
#define AGENTWARE_DETAIL_PYTHON_JSON_HPP

// Python's json.dumps(value, ensure_ascii=False) and its indent=2 form: the
// reference tools answer the model with JSON printed that way, so our
// answers keep its spacing for parity (`{"a": 1, "b": [1, 2]}`, and one item
// a line when indented). Strings, integers, booleans and null print as
// Boost.JSON prints them, which is Python's form for them too (non-ASCII
// kept as UTF-8, control characters escaped).

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <string>

namespace agentware::detail {

inline void python_json_write(std::string& out, const boost::json::value& v, int indent, int depth) {
    const bool pretty = indent > 0;
    auto newline = [&](int level) {
        if (!pretty) return;
        out += '\n';
        out.append(static_cast<std::size_t>(indent * level), ' ');
    };
    const char* separator = pretty ? "," : ", ";
    if (const auto* o = v.if_object()) {
        if (o->empty()) {
            out += "{}";
            return;
        }
        out += '{';
        bool first = true;
        for (const auto& kv : *o) {
            if (!first) out += separator;
            first = false;
            newline(depth + 1);
            out += boost::json::serialize(boost::json::value(kv.key()));
            out += ": ";
            python_json_write(out, kv.value(), indent, depth + 1);
        }
        newline(depth);
        out += '}';
    } else if (const auto* a = v.if_array()) {
        if (a->empty()) {
            out += "[]";
            return;
        }
        out += '[';
        bool first = true;
        for (const auto& e : *a) {
            if (!first) out += separator;
            first = false;
            newline(depth + 1);
            python_json_write(out, e, indent, depth + 1);
        }
        newline(depth);
        out += ']';
    } else {
        out += boost::json::serialize(v);
    }
}

/// json.dumps(v, ensure_ascii=False), or with indent=N when `indent` > 0.
inline std::string python_json_dumps(const boost::json::value& v, int indent = 0) {
    std::string out;
    python_json_write(out, v, indent, 0);
    return out;
}

} // namespace agentware::detail

#endif
