#ifndef AGENTWARE_TOOL_SCHEMA_VALIDATION_HPP
#define AGENTWARE_TOOL_SCHEMA_VALIDATION_HPP

// Checks a model's tool arguments against the tool's JSON Schema before the
// tool runs, so a malformed call becomes one error message the model can read
// and fix, instead of an exception deep inside the tool.
//
// Supported: type (one name or a list), nullable (OpenAPI), properties,
// required, additionalProperties (false or a schema), items (a schema or, as in
// draft 4, a list), prefixItems, enum, const, minimum, maximum,
// exclusiveMinimum, exclusiveMaximum (number, or draft-4 boolean), minLength,
// maxLength (in code points), minItems, maxItems, allOf, anyOf and oneOf (both
// satisfied by any one branch), and boolean schemas. Everything else (pattern,
// format, $ref, description, default, ...) is ignored, and so is any keyword
// whose value is malformed: a bad schema constrains less, it never fails.

#include <agentware/detail/config.hpp>
#include <agentware/message/detail/text.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace agentware {

namespace detail {

/// Problems listed in full; the rest are counted ("and 3 more problems").
inline constexpr std::size_t max_reported_argument_problems = 10;
/// Deeper schemas are not followed (a guard against runaway recursion).
inline constexpr int max_schema_depth = 64;
/// Schema nodes visited per call, across all anyOf branches: bounds the work
/// a pathological schema (nested anyOf) or huge arguments can cause. Real tool
/// calls use a few hundred; past the budget, what is left goes unchecked.
inline constexpr std::size_t schema_visit_budget = 200'000;
/// Longest excerpt of a value or name quoted in a message, in bytes.
inline constexpr std::size_t schema_excerpt_bytes = 40;

/// A JSON number, kept exact: integers as integers, the rest as double.
struct json_number {
    enum class kind { int64, uint64, real } k;
    std::int64_t i = 0;
    std::uint64_t u = 0;
    double d = 0;

    long double as_long_double() const noexcept {
        switch (k) {
        case kind::int64:
            return static_cast<long double>(i);
        case kind::uint64:
            return static_cast<long double>(u);
        case kind::real:
            break;
        }
        return static_cast<long double>(d);
    }
};

inline std::optional<json_number> as_number(const boost::json::value& v) noexcept {
    if (const auto* p = v.if_int64()) return json_number{json_number::kind::int64, *p, 0, 0};
    if (const auto* p = v.if_uint64()) return json_number{json_number::kind::uint64, 0, *p, 0};
    if (const auto* p = v.if_double()) return json_number{json_number::kind::real, 0, 0, *p};
    return std::nullopt;
}

/// -1, 0 or 1; exact between integers (any sign), through long double otherwise
/// (exact for 64-bit integers on x86-64 and AArch64).
inline int compare_numbers(const json_number& a, const json_number& b) noexcept {
    using kind = json_number::kind;
    if (a.k != kind::real && b.k != kind::real) {
        const bool a_neg = a.k == kind::int64 && a.i < 0;
        const bool b_neg = b.k == kind::int64 && b.i < 0;
        if (a_neg != b_neg) return a_neg ? -1 : 1;
        if (a_neg) return a.i < b.i ? -1 : (a.i > b.i ? 1 : 0);
        const std::uint64_t x = a.k == kind::int64 ? static_cast<std::uint64_t>(a.i) : a.u;
        const std::uint64_t y = b.k == kind::int64 ? static_cast<std::uint64_t>(b.i) : b.u;
        return x < y ? -1 : (x > y ? 1 : 0);
    }
    const long double x = a.as_long_double();
    const long double y = b.as_long_double();
    return x < y ? -1 : (x > y ? 1 : 0);
}

/// Integers, and doubles with an integral value (3.0), as JSON Schema counts them.
inline bool is_json_integer(const boost::json::value& v) noexcept {
    if (v.is_int64() || v.is_uint64()) return true;
    if (const auto* d = v.if_double()) return std::isfinite(*d) && std::trunc(*d) == *d;
    return false;
}

/// A non-negative integer keyword value (minLength: 3), else nullopt.
inline std::optional<std::uint64_t> as_count(const boost::json::value& v) noexcept {
    if (const auto* p = v.if_int64())
        return *p >= 0 ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*p)) : std::nullopt;
    if (const auto* p = v.if_uint64()) return *p;
    if (const auto* p = v.if_double())
        if (std::isfinite(*p) && *p >= 0 && *p < 1.8e19 && std::trunc(*p) == *p)
            return static_cast<std::uint64_t>(*p);
    return std::nullopt;
}

inline std::string format_number(const boost::json::value& v) {
    if (const auto* p = v.if_int64()) return std::to_string(*p);
    if (const auto* p = v.if_uint64()) return std::to_string(*p);
    if (const auto* p = v.if_double()) {
        char buf[64];
        const auto res = std::to_chars(buf, buf + sizeof buf, *p);
        if (res.ec == std::errc()) return std::string(buf, res.ptr);
    }
    return "?";
}

/// Counts code points (what JSON Schema calls characters), not bytes.
inline std::size_t utf8_length(std::string_view s) noexcept {
    std::size_t n = 0;
    for (char c : s)
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
    return n;
}

inline std::string plural(std::uint64_t n, std::string_view one, std::string_view many) {
    std::string out = std::to_string(n);
    out += ' ';
    out += n == 1 ? one : many;
    return out;
}

/// A value as it would appear in a schema, cut short: "r", 3, true, [1,2].
inline std::string render_value(const boost::json::value& v) {
    if (const auto* s = v.if_string()) return quoted_excerpt(*s, schema_excerpt_bytes);
    if (v.is_number()) return format_number(v);
    if (const auto* b = v.if_bool()) return *b ? "true" : "false";
    if (v.is_null()) return "null";
    return excerpt(boost::json::serialize(v), schema_excerpt_bytes);
}

/// What the model sent, for "(got ...)": its kind and a short excerpt.
inline std::string describe_value(const boost::json::value& v) {
    if (const auto* s = v.if_string()) return "string " + quoted_excerpt(*s, schema_excerpt_bytes);
    if (is_json_integer(v) && !v.is_double()) return "integer " + format_number(v);
    if (v.is_number()) return "number " + format_number(v);
    if (const auto* b = v.if_bool()) return *b ? "boolean true" : "boolean false";
    if (v.is_null()) return "null";
    if (const auto* a = v.if_array()) return "array of " + plural(a->size(), "item", "items");
    if (const auto* o = v.if_object())
        return o->empty() ? "empty object" : "object with " + plural(o->size(), "key", "keys");
    return "value";
}

/// Equality as JSON Schema's enum and const define it: 1 equals 1.0.
inline bool json_equal(const boost::json::value& a, const boost::json::value& b, int depth = 0) noexcept {
    if (depth > max_schema_depth) return false;
    const auto na = as_number(a);
    const auto nb = as_number(b);
    if (na || nb) return na && nb && compare_numbers(*na, *nb) == 0;
    if (a.kind() != b.kind()) return false;
    if (const auto* s = a.if_string()) return *s == b.get_string();
    if (const auto* x = a.if_bool()) return *x == b.get_bool();
    if (a.is_null()) return true;
    if (const auto* x = a.if_array()) {
        const auto& y = b.get_array();
        if (x->size() != y.size()) return false;
        for (std::size_t i = 0; i < x->size(); ++i)
            if (!json_equal((*x)[i], y[i], depth + 1)) return false;
        return true;
    }
    const auto& x = a.get_object();
    const auto& y = b.get_object();
    if (x.size() != y.size()) return false;
    for (const auto& entry : x) {
        const auto* other = y.if_contains(entry.key());
        if (!other || !json_equal(entry.value(), *other, depth + 1)) return false;
    }
    return true;
}

/// The JSON Schema type names; `none` for a name that is not one.
enum class schema_type : unsigned char { none, object, array, string, integer, number, boolean, null };

inline schema_type schema_type_named(std::string_view name) noexcept {
    if (name == "object") return schema_type::object;
    if (name == "array") return schema_type::array;
    if (name == "string") return schema_type::string;
    if (name == "integer") return schema_type::integer;
    if (name == "number") return schema_type::number;
    if (name == "boolean") return schema_type::boolean;
    if (name == "null") return schema_type::null;
    return schema_type::none;
}

/// "a string", "an integer", ...; empty for `none`.
inline std::string_view type_phrase(schema_type t) noexcept {
    switch (t) {
    case schema_type::none:
        return {};
    case schema_type::object:
        return "an object";
    case schema_type::array:
        return "an array";
    case schema_type::string:
        return "a string";
    case schema_type::integer:
        return "an integer";
    case schema_type::number:
        return "a number";
    case schema_type::boolean:
        return "a boolean";
    case schema_type::null:
        return "null";
    }
    return {};
}

/// Whether `v` is of type `t` (never of `none`).
inline bool has_type(const boost::json::value& v, schema_type t) noexcept {
    switch (t) {
    case schema_type::none:
        return false;
    case schema_type::object:
        return v.is_object();
    case schema_type::array:
        return v.is_array();
    case schema_type::string:
        return v.is_string();
    case schema_type::integer:
        return is_json_integer(v);
    case schema_type::number:
        return v.is_number();
    case schema_type::boolean:
        return v.is_bool();
    case schema_type::null:
        return v.is_null();
    }
    return false;
}

/// "a string", "a string or null", "a string, an integer or null".
inline std::string join_alternatives(const std::vector<std::string_view>& phrases,
                                     std::string_view last_sep) {
    std::string out;
    for (std::size_t i = 0; i < phrases.size(); ++i) {
        if (i > 0) out += i + 1 == phrases.size() ? last_sep : std::string_view(", ");
        out += phrases[i];
    }
    return out;
}

/// The keywords of one schema node that the validator applies, found in one
/// pass over the node's keys rather than by one search per keyword: a tool
/// call is checked on every round, so this is on the agent loop's hot path.
struct schema_keywords {
    using value = boost::json::value;
    const value* type = nullptr;
    const value* nullable = nullptr;
    const value* enum_values = nullptr;
    const value* const_value = nullptr;
    const value* minimum = nullptr;
    const value* maximum = nullptr;
    const value* exclusive_minimum = nullptr;
    const value* exclusive_maximum = nullptr;
    const value* min_length = nullptr;
    const value* max_length = nullptr;
    const value* min_items = nullptr;
    const value* max_items = nullptr;
    const value* prefix_items = nullptr;
    const value* items = nullptr;
    const value* properties = nullptr;
    const value* required = nullptr;
    const value* additional_properties = nullptr;
    const value* pattern_properties = nullptr;
    const value* all_of = nullptr;
    const value* any_of = nullptr;
    const value* one_of = nullptr;
    /// `type` when it is one known name ("string"), read once, so the common
    /// type check compares no text; `none` otherwise.
    schema_type one_type = schema_type::none;

    schema_keywords() = default;
    friend bool operator==(const schema_keywords&, const schema_keywords&) = default;
    explicit schema_keywords(const boost::json::object& schema) noexcept {
        for (const auto& entry : schema)
            if (const value** slot = find(entry.key())) *slot = &entry.value();
        if (const auto* name = type ? type->if_string() : nullptr) one_type = schema_type_named(*name);
    }

private:
    const value** find(std::string_view key) noexcept {
        struct keyword {
            std::string_view name;
            const value* schema_keywords::*slot;
        };
        static constexpr keyword known[] = {
            {"type", &schema_keywords::type},
            {"properties", &schema_keywords::properties},
            {"required", &schema_keywords::required},
            {"additionalProperties", &schema_keywords::additional_properties},
            {"items", &schema_keywords::items},
            {"enum", &schema_keywords::enum_values},
            {"const", &schema_keywords::const_value},
            {"nullable", &schema_keywords::nullable},
            {"minimum", &schema_keywords::minimum},
            {"maximum", &schema_keywords::maximum},
            {"exclusiveMinimum", &schema_keywords::exclusive_minimum},
            {"exclusiveMaximum", &schema_keywords::exclusive_maximum},
            {"minLength", &schema_keywords::min_length},
            {"maxLength", &schema_keywords::max_length},
            {"minItems", &schema_keywords::min_items},
            {"maxItems", &schema_keywords::max_items},
            {"prefixItems", &schema_keywords::prefix_items},
            {"patternProperties", &schema_keywords::pattern_properties},
            {"allOf", &schema_keywords::all_of},
            {"anyOf", &schema_keywords::any_of},
            {"oneOf", &schema_keywords::one_of},
        };
        for (const keyword& k : known)
            if (k.name == key) return &(this->*k.slot);
        return nullptr;
    }
};

/// The usual tool schema, `{"type":"object","properties":{"path":{"type":"string"},...},
/// "required":[...]}`, where each property constrains at most its type, in a
/// form that accepts valid arguments in one pass over them. It only ever
/// accepts: arguments it does not accept go through the full check, which
/// gives the verdict and the message, so both paths always agree.
class flat_object_schema {
public:
    /// The flat form of `root`, or nullopt when some keyword needs the full check.
    static std::optional<flat_object_schema> of(const schema_keywords& root) {
        if (root.type && root.one_type != schema_type::object) return std::nullopt;
        if (root.enum_values || root.const_value || root.all_of || root.any_of || root.one_of ||
            root.pattern_properties)
            return std::nullopt;
        flat_object_schema flat;
        if (const auto* extra = root.additional_properties) {
            if (!extra->is_bool()) return std::nullopt;
            flat.extra_allowed_ = extra->get_bool();
        }
        if (const auto* props_value = root.properties) {
            const auto* props = props_value->if_object();
            if (!props) return std::nullopt;
            for (const auto& entry : *props) {
                auto type = property_type(entry.value());
                if (!type) return std::nullopt;
                flat.properties_.push_back({entry.key(), *type, false});
            }
        }
        if (const auto* req_value = root.required) {
            const auto* req = req_value->if_array();
            if (!req) return std::nullopt;
            for (const auto& name : *req) {
                const auto* key = name.if_string();
                property* p = key ? flat.find(*key) : nullptr;
                if (!p) return std::nullopt; // required but not a property: rare, left to the full check
                if (!p->required) ++flat.required_count_;
                p->required = true;
            }
        }
        return flat;
    }

    /// True when `args` certainly pass; false when the full check must decide.
    bool accepts(const boost::json::object& args) const noexcept {
        std::size_t required_seen = 0;
        for (const auto& entry : args) {
            const property* p = find(entry.key());
            if (!p) {
                if (!extra_allowed_) return false;
                continue;
            }
            if (p->type != schema_type::none && !has_type(entry.value(), p->type)) return false;
            required_seen += p->required ? 1 : 0;
        }
        return required_seen == required_count_;
    }

private:
    struct property {
        std::string_view name; // the schema's own key: valid while the schema lives
        schema_type type;      // none: any value
        bool required;
    };

    // The type a property schema asks for, when that is all it asks: its one
    // type name (none for `{}` or `true`); nullopt for anything more.
    static std::optional<schema_type> property_type(const boost::json::value& schema) {
        if (const auto* b = schema.if_bool()) return *b ? std::optional(schema_type::none) : std::nullopt;
        const auto* node = schema.if_object();
        if (!node) return schema_type::none; // malformed: no constraint
        schema_keywords kw(*node);
        const schema_type type = kw.one_type;
        if (kw.type && type == schema_type::none) return std::nullopt; // a list of types, or an unknown name
        kw.type = nullptr;
        kw.nullable = nullptr; // only ever widens the type, and a mismatch goes to the full check anyway
        kw.one_type = schema_type::none;
        if (!(kw == schema_keywords{})) return std::nullopt;
        return type;
    }

    property* find(std::string_view key) noexcept {
        return const_cast<property*>(std::as_const(*this).find(key));
    }
    const property* find(std::string_view key) const noexcept {
        for (const property& p : properties_)
            if (p.name == key) return &p;
        return nullptr;
    }

    std::vector<property> properties_;
    std::size_t required_count_ = 0;
    bool extra_allowed_ = true;
};

/// The keywords of every node of one schema, found once: a tool set builds
/// one per tool when the tool is added, so checking a call reads no schema key
/// twice. Nodes are known by address, so the index is only valid while the
/// schema it was built from lives unchanged (a tool's schema does).
class schema_index {
public:
    schema_index() = default;
    explicit schema_index(const boost::json::object& root) : root_(&root) {
        add(root, 0);
        flat_ = flat_object_schema::of(nodes_.front().keywords);
        std::sort(nodes_.begin(), nodes_.end(),
                  [](const node& a, const node& b) { return std::less<>()(a.schema, b.schema); });
    }

    /// True when `args` certainly satisfy `schema` (this index's root), found
    /// without the full check; false when the full check must decide.
    bool quickly_accepts(const boost::json::object& schema, const boost::json::object& args) const noexcept {
        return flat_ && root_ == &schema && flat_->accepts(args);
    }

    /// The keywords of `schema`, or nullptr when it is not a node of the indexed schema.
    const schema_keywords* find(const boost::json::object& schema) const noexcept {
        auto it = std::lower_bound(nodes_.begin(), nodes_.end(), &schema,
                                   [](const node& n, const auto* p) { return std::less<>()(n.schema, p); });
        return it != nodes_.end() && it->schema == &schema ? &it->keywords : nullptr;
    }
    std::size_t size() const noexcept { return nodes_.size(); }

private:
    struct node {
        const boost::json::object* schema;
        schema_keywords keywords;
    };

    // Follows every place the validator descends into a subschema.
    void add(const boost::json::object& schema, int depth) {
        if (depth > max_schema_depth) return;
        const schema_keywords kw(schema);
        nodes_.push_back({&schema, kw});
        const auto sub = [&](const boost::json::value* v) {
            if (v && v->is_object()) add(v->get_object(), depth + 1);
        };
        const auto each = [&](const boost::json::value* v) {
            if (const auto* list = v ? v->if_array() : nullptr)
                for (const auto& item : *list)
                    sub(&item);
        };
        if (const auto* props = kw.properties ? kw.properties->if_object() : nullptr)
            for (const auto& entry : *props)
                sub(&entry.value());
        sub(kw.additional_properties);
        sub(kw.items);
        each(kw.items);
        each(kw.prefix_items);
        each(kw.all_of);
        each(kw.any_of);
        each(kw.one_of);
    }

    const boost::json::object* root_ = nullptr;
    std::vector<node> nodes_;
    std::optional<flat_object_schema> flat_;
};

} // namespace detail

/// Checks tool arguments against the tool's JSON Schema (the subset LLM tool
/// schemas use, see the top of this header). Returns nullopt when they are
/// valid, else one message listing every problem found, up to ten, e.g.
/// `missing required argument "path"; argument "limit" must be an integer (got string "ten")`.
/// Never throws for any schema or arguments (only std::bad_alloc can escape).
AGENTWARE_DECL std::optional<std::string> validate_arguments(const boost::json::object& schema,
                                                             const boost::json::value& args,
                                                             const detail::schema_index* index = nullptr);

/// The same for arguments held as an object (as tool calls hold them). The
/// usual root schema, `{"type": "object", ...}`, is checked without copying
/// them. `index`, when given, must have been built from `schema`.
AGENTWARE_DECL std::optional<std::string> validate_arguments(const boost::json::object& schema,
                                                             const boost::json::object& args,
                                                             const detail::schema_index* index = nullptr);

} // namespace agentware

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/tool/impl/schema_validation.ipp>
#endif

#endif
