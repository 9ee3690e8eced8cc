#ifndef AGENTWARE_TOOL_IMPL_SCHEMA_VALIDATION_IPP
#define AGENTWARE_TOOL_IMPL_SCHEMA_VALIDATION_IPP

// The validator itself: in every translation unit that includes
// schema_validation.hpp (header-only), or once in <agentware/src.hpp>
// (AGENTWARE_SEPARATE_COMPILATION).

#include <agentware/tool/schema_validation.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

namespace detail {

// Reading schemas and values: shared by the validator, the schema index and
// typed tools' argument readers.

std::optional<json_number> as_number(const boost::json::value& v) noexcept {
    if (const auto* p = v.if_int64()) return json_number{json_number::kind::int64, *p, 0, 0};
    if (const auto* p = v.if_uint64()) return json_number{json_number::kind::uint64, 0, *p, 0};
    if (const auto* p = v.if_double()) return json_number{json_number::kind::real, 0, 0, *p};
    return std::nullopt;
}

int compare_numbers(const json_number& a, const json_number& b) noexcept {
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

bool is_json_integer(const boost::json::value& v) noexcept {
    if (v.is_int64() || v.is_uint64()) return true;
    if (const auto* d = v.if_double()) return std::isfinite(*d) && std::trunc(*d) == *d;
    return false;
}

std::optional<std::uint64_t> as_count(const boost::json::value& v) noexcept {
    if (const auto* p = v.if_int64())
        return *p >= 0 ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*p)) : std::nullopt;
    if (const auto* p = v.if_uint64()) return *p;
    if (const auto* p = v.if_double())
        if (std::isfinite(*p) && *p >= 0 && *p < 1.8e19 && std::trunc(*p) == *p)
            return static_cast<std::uint64_t>(*p);
    return std::nullopt;
}

std::string format_number(const boost::json::value& v) {
    if (const auto* p = v.if_int64()) return std::to_string(*p);
    if (const auto* p = v.if_uint64()) return std::to_string(*p);
    if (const auto* p = v.if_double()) {
        char buf[64];
        const auto res = std::to_chars(buf, buf + sizeof buf, *p);
        if (res.ec == std::errc()) return std::string(buf, res.ptr);
    }
    return "?";
}

std::size_t utf8_length(std::string_view s) noexcept {
    std::size_t n = 0;
    for (char c : s)
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
    return n;
}

std::string plural(std::uint64_t n, std::string_view one, std::string_view many) {
    std::string out = std::to_string(n);
    out += ' ';
    out += n == 1 ? one : many;
    return out;
}

std::string render_value(const boost::json::value& v) {
    if (const auto* s = v.if_string()) return quoted_excerpt(*s, schema_excerpt_bytes);
    if (v.is_number()) return format_number(v);
    if (const auto* b = v.if_bool()) return *b ? "true" : "false";
    if (v.is_null()) return "null";
    return excerpt(boost::json::serialize(v), schema_excerpt_bytes);
}

std::string describe_value(const boost::json::value& v) {
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

bool json_equal(const boost::json::value& a, const boost::json::value& b, int depth) noexcept {
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

schema_type schema_type_named(std::string_view name) noexcept {
    if (name == "object") return schema_type::object;
    if (name == "array") return schema_type::array;
    if (name == "string") return schema_type::string;
    if (name == "integer") return schema_type::integer;
    if (name == "number") return schema_type::number;
    if (name == "boolean") return schema_type::boolean;
    if (name == "null") return schema_type::null;
    return schema_type::none;
}

std::string_view type_phrase(schema_type t) noexcept {
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

bool has_type(const boost::json::value& v, schema_type t) noexcept {
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

std::string join_alternatives(const std::vector<std::string_view>& phrases, std::string_view last_sep) {
    std::string out;
    for (std::size_t i = 0; i < phrases.size(); ++i) {
        if (i > 0) out += i + 1 == phrases.size() ? last_sep : std::string_view(", ");
        out += phrases[i];
    }
    return out;
}

schema_keywords::schema_keywords(const boost::json::object& schema) noexcept {
    for (const auto& entry : schema)
        if (const value** slot = find(entry.key())) *slot = &entry.value();
    if (const auto* name = type ? type->if_string() : nullptr) one_type = schema_type_named(*name);
}

auto schema_keywords::find(std::string_view key) noexcept -> const value** {
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

std::optional<flat_object_schema> flat_object_schema::of(const schema_keywords& root) {
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

bool flat_object_schema::accepts(const boost::json::object& args) const noexcept {
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

std::optional<schema_type> flat_object_schema::property_type(const boost::json::value& schema) {
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

auto flat_object_schema::find(std::string_view key) const noexcept -> const property* {
    for (const property& p : properties_)
        if (p.name == key) return &p;
    return nullptr;
}

schema_index::schema_index(const boost::json::object& root) : root_(&root) {
    add(root, 0);
    flat_ = flat_object_schema::of(nodes_.front().keywords);
    std::sort(nodes_.begin(), nodes_.end(),
              [](const node& a, const node& b) { return std::less<>()(a.schema, b.schema); });
}

const schema_keywords* schema_index::find(const boost::json::object& schema) const noexcept {
    auto it = std::lower_bound(nodes_.begin(), nodes_.end(), &schema,
                               [](const node& n, const auto* p) { return std::less<>()(n.schema, p); });
    return it != nodes_.end() && it->schema == &schema ? &it->keywords : nullptr;
}

void schema_index::add(const boost::json::object& schema, int depth) {
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

/// Walks a schema and a value side by side, collecting readable problems.
class argument_validator {
public:
    argument_validator(std::size_t& budget, std::size_t max_listed,
                       const schema_index* index = nullptr) noexcept
        : budget_(budget), max_listed_(max_listed), index_(index) {}

    /// `path` is the dotted location of `v` ("" for the arguments themselves);
    /// it is extended and restored while descending.
    void validate(const boost::json::value& schema, const boost::json::value& v, std::string& path,
                  int depth) {
        if (const auto* s = schema.if_object()) {
            validate(*s, v, path, depth);
        } else if (const auto* b = schema.if_bool(); b && !*b && depth <= max_schema_depth) {
            report(path.empty() ? std::string("no arguments are accepted")
                                : subject(path) + " is not allowed");
        }
        // Anything else is malformed: no constraint.
    }

    /// `validate` for arguments that are already an object, read in place
    /// (no `json::value` copy of them). Returns false, having checked nothing,
    /// when the root schema has constraints only the general walk applies
    /// (a type other than "object", enum, const or a combinator).
    bool validate_object(const boost::json::object& schema, const boost::json::object& args,
                         std::string& path) {
        return with_keywords(schema,
                             [&](const schema_keywords& kw) { return validate_object_node(kw, args, path); });
    }

    void validate(const boost::json::object& schema, const boost::json::value& v, std::string& path,
                  int depth) {
        if (depth > max_schema_depth || budget_ == 0) return;
        --budget_;
        with_keywords(schema, [&](const schema_keywords& kw) { validate_node(kw, v, path, depth); });
    }

    std::size_t total() const noexcept { return total_; }
    const std::vector<std::string>& problems() const noexcept { return problems_; }
    /// Set when the check failed on `type` at the node where validation began:
    /// the phrases of the types that were expected there.
    const std::vector<std::string_view>& root_type_expected() const noexcept { return root_type_expected_; }

private:
    // Calls `f` with the keywords of `schema`: the index's when it has the node, else read now.
    template <class F>
    std::invoke_result_t<F&, const schema_keywords&> with_keywords(const boost::json::object& schema,
                                                                   F&& f) const {
        if (const schema_keywords* known = index_ ? index_->find(schema) : nullptr) return f(*known);
        return f(schema_keywords(schema));
    }

    bool validate_object_node(const schema_keywords& kw, const boost::json::object& args, std::string& path) {
        if (kw.type && kw.one_type != schema_type::object) return false;
        if (kw.enum_values || kw.const_value || kw.all_of || kw.any_of || kw.one_of) return false;
        if (budget_ == 0) return true;
        --budget_;
        check_object(kw, args, path, 0);
        return true;
    }

    void validate_node(const schema_keywords& kw, const boost::json::value& v, std::string& path, int depth) {
        if (!check_type(kw, v, path, depth)) return; // the rest would only add noise

        if (kw.enum_values) check_enum(*kw.enum_values, v, path);
        if (const auto* c = kw.const_value) {
            if (!json_equal(*c, v))
                report(subject(path) + " must be " + render_value(*c) + " (got " + describe_value(v) + ")");
        }
        if (v.is_number()) check_number(kw, v, path);
        if (const auto* str = v.if_string()) check_string(kw, *str, path);
        if (const auto* arr = v.if_array()) check_array(kw, *arr, path, depth);
        if (const auto* obj = v.if_object()) check_object(kw, *obj, path, depth);

        if (const auto* all = kw.all_of) {
            if (const auto* branches = all->if_array())
                for (const auto& branch : *branches)
                    validate(branch, v, path, depth + 1);
        }
        if (kw.any_of) check_any_of(*kw.any_of, v, path, depth);
        if (kw.one_of) check_any_of(*kw.one_of, v, path, depth);
    }

    static std::string subject(const std::string& path) {
        if (path.empty()) return "arguments";
        return "argument " + quoted_excerpt(path, 2 * schema_excerpt_bytes);
    }

    void report(std::string problem) {
        ++total_;
        if (problems_.size() < max_listed_) problems_.push_back(std::move(problem));
    }

    /// Appends `.name` or `[index]` to path for the lifetime of the object.
    struct path_segment {
        path_segment(std::string& path, std::string_view name) : path_(path), size_(path.size()) {
            if (!path_.empty()) path_ += '.';
            path_ += name;
        }
        path_segment(std::string& path, std::size_t index) : path_(path), size_(path.size()) {
            path_ += '[';
            path_ += std::to_string(index);
            path_ += ']';
        }
        path_segment(const path_segment&) = delete;
        path_segment& operator=(const path_segment&) = delete;
        ~path_segment() { path_.resize(size_); }
        std::string& path_;
        std::size_t size_;
    };

    bool check_type(const schema_keywords& kw, const boost::json::value& v, const std::string& path,
                    int depth) {
        const auto* type = kw.type;
        if (!type) return true;
        // The common case, one type that matches, allocates nothing.
        if (has_type(v, kw.one_type)) return true;
        std::vector<std::string_view> names;
        if (const auto* one = type->if_string()) {
            names.push_back(*one);
        } else if (const auto* list = type->if_array()) {
            for (const auto& item : *list) {
                const auto* name = item.if_string();
                if (!name) return true; // malformed list: no constraint
                names.push_back(*name);
            }
        } else {
            return true;
        }
        if (names.empty()) return true;
        std::vector<std::string_view> phrases;
        bool matched = false;
        for (std::string_view name : names) {
            const schema_type t = schema_type_named(name);
            if (t == schema_type::none) return true; // unknown type name: no constraint
            matched = matched || has_type(v, t);
            const std::string_view phrase = type_phrase(t);
            phrases.push_back(phrase);
        }
        if (const auto* nullable = kw.nullable; nullable && nullable->is_bool() && nullable->get_bool()) {
            matched = matched || v.is_null();
            phrases.push_back("null");
        }
        if (matched) return true;
        report(subject(path) + " must be " + join_alternatives(phrases, " or ") + " (got " +
               describe_value(v) + ")");
        if (depth == root_depth_) root_type_expected_ = std::move(phrases);
        return false;
    }

    void check_enum(const boost::json::value& e, const boost::json::value& v, const std::string& path) {
        const auto* allowed = e.if_array();
        if (!allowed || allowed->empty()) return; // an empty enum would reject everything: treat as malformed
        for (const auto& candidate : *allowed)
            if (json_equal(candidate, v)) return;
        constexpr std::size_t max_shown = 10;
        std::string list;
        for (std::size_t i = 0; i < allowed->size() && i < max_shown; ++i) {
            if (i > 0) list += ", ";
            list += render_value((*allowed)[i]);
        }
        if (allowed->size() > max_shown) list += ", ...";
        report(subject(path) + " must be one of " + list + " (got " + describe_value(v) + ")");
    }

    void check_number(const schema_keywords& kw, const boost::json::value& v, const std::string& path) {
        const json_number n = *as_number(v);
        // Draft 4 spells exclusive bounds as booleans next to minimum/maximum.
        const auto flag = [](const boost::json::value* f) { return f && f->is_bool() && f->get_bool(); };
        const auto bound = [&](const boost::json::value* b, bool lower, bool exclusive) {
            if (!b) return;
            const auto limit = as_number(*b);
            if (!limit) return;
            const int c = compare_numbers(n, *limit);
            const bool ok = lower ? (exclusive ? c > 0 : c >= 0) : (exclusive ? c < 0 : c <= 0);
            if (ok) return;
            const char* op = lower ? (exclusive ? " > " : " >= ") : (exclusive ? " < " : " <= ");
            report(subject(path) + " must be" + op + format_number(*b) + " (got " + format_number(v) + ")");
        };
        bound(kw.minimum, true, flag(kw.exclusive_minimum));
        bound(kw.maximum, false, flag(kw.exclusive_maximum));
        bound(kw.exclusive_minimum, true, true);
        bound(kw.exclusive_maximum, false, true);
    }

    void check_string(const schema_keywords& kw, const boost::json::string& str, const std::string& path) {
        if (!kw.min_length && !kw.max_length) return;
        const std::size_t length = utf8_length(str);
        if (const auto* min = kw.min_length) {
            if (const auto n = as_count(*min); n && length < *n)
                report(subject(path) + " must be at least " + plural(*n, "character", "characters") +
                       " long (got " + std::to_string(length) + ")");
        }
        if (const auto* max = kw.max_length) {
            if (const auto n = as_count(*max); n && length > *n)
                report(subject(path) + " must be at most " + plural(*n, "character", "characters") +
                       " long (got " + std::to_string(length) + ")");
        }
    }

    void check_array(const schema_keywords& kw, const boost::json::array& arr, std::string& path, int depth) {
        if (const auto* min = kw.min_items) {
            if (const auto n = as_count(*min); n && arr.size() < *n)
                report(subject(path) + " must have at least " + plural(*n, "item", "items") + " (got " +
                       std::to_string(arr.size()) + ")");
        }
        if (const auto* max = kw.max_items) {
            if (const auto n = as_count(*max); n && arr.size() > *n)
                report(subject(path) + " must have at most " + plural(*n, "item", "items") + " (got " +
                       std::to_string(arr.size()) + ")");
        }
        std::size_t first_unchecked = 0;
        const auto positional = [&](const boost::json::array& schemas) {
            for (std::size_t i = 0; i < schemas.size() && i < arr.size(); ++i) {
                path_segment seg(path, i);
                validate(schemas[i], arr[i], path, depth + 1);
            }
            first_unchecked = schemas.size();
        };
        if (const auto* prefix = kw.prefix_items; prefix && prefix->is_array())
            positional(prefix->get_array());
        if (const auto* items = kw.items) {
            if (const auto* tuple = items->if_array()) {
                positional(*tuple);
            } else if (items->is_object() || items->is_bool()) {
                for (std::size_t i = first_unchecked; i < arr.size() && budget_ > 0; ++i) {
                    path_segment seg(path, i);
                    validate(*items, arr[i], path, depth + 1);
                }
            }
        }
    }

    void check_object(const schema_keywords& kw, const boost::json::object& obj, std::string& path,
                      int depth) {
        const auto* props_value = kw.properties;
        const boost::json::object* props = props_value ? props_value->if_object() : nullptr;

        if (const auto* req = kw.required; req && req->is_array()) {
            for (const auto& name : req->get_array()) {
                const auto* key = name.if_string();
                if (!key || obj.contains(*key)) continue;
                path_segment seg(path, *key);
                report("missing required argument " + quoted_excerpt(path, 2 * schema_excerpt_bytes));
            }
        }
        if (props) {
            for (const auto& entry : *props) {
                const auto* arg = obj.if_contains(entry.key());
                if (!arg) continue;
                path_segment seg(path, entry.key());
                validate(entry.value(), *arg, path, depth + 1);
            }
        }
        // With patternProperties (unsupported), "additional" cannot be told apart.
        const auto* extra = kw.additional_properties;
        if (!extra || kw.pattern_properties) return;
        if (extra->is_bool() && !extra->get_bool()) {
            std::string allowed;
            if (props && !props->empty()) {
                constexpr std::size_t max_shown = 12;
                std::size_t shown = 0;
                for (const auto& entry : *props) {
                    if (shown == max_shown) {
                        allowed += ", ...";
                        break;
                    }
                    allowed += shown++ == 0 ? " (expected " : ", ";
                    allowed += quoted_excerpt(entry.key(), schema_excerpt_bytes);
                }
                allowed += ')';
            }
            for (const auto& entry : obj) {
                if (props && props->contains(entry.key())) continue;
                path_segment seg(path, entry.key());
                report("unexpected argument " + quoted_excerpt(path, 2 * schema_excerpt_bytes) + allowed);
            }
        } else if (extra->is_object()) {
            for (const auto& entry : obj) {
                if (props && props->contains(entry.key())) continue;
                path_segment seg(path, entry.key());
                validate(*extra, entry.value(), path, depth + 1);
            }
        }
    }

    void check_any_of(const boost::json::value& list, const boost::json::value& v, std::string& path,
                      int depth) {
        const auto* branches = list.if_array();
        if (!branches || branches->empty()) return;
        struct failure {
            std::vector<std::string> problems;
            std::size_t total;
            std::vector<std::string_view> expected_types;
        };
        std::vector<failure> failures;
        for (const auto& branch : *branches) {
            if (const auto* b = branch.if_bool()) {
                if (*b) return;
                continue; // `false` never matches and has nothing to explain
            }
            if (!branch.is_object()) return; // malformed branch: no constraint
            argument_validator sub(budget_, 3, index_);
            sub.root_depth_ = depth + 1;
            sub.validate(branch, v, path, depth + 1);
            if (sub.total() == 0) return;
            failures.push_back({std::move(sub.problems_), sub.total_, std::move(sub.root_type_expected_)});
        }
        if (failures.empty()) {
            report(path.empty() ? std::string("no arguments are accepted")
                                : subject(path) + " is not allowed");
            return;
        }
        // Branches of the wrong type explain nothing beyond their type; if all
        // are, say which types would do ("a string or null").
        std::vector<const failure*> close;
        std::vector<std::string_view> types;
        for (const auto& f : failures) {
            if (f.expected_types.empty()) {
                close.push_back(&f);
                continue;
            }
            for (std::string_view t : f.expected_types) {
                bool seen = false;
                for (std::string_view u : types)
                    seen = seen || u == t;
                if (!seen) types.push_back(t);
            }
        }
        if (close.empty()) {
            report(subject(path) + " must be " + join_alternatives(types, " or ") + " (got " +
                   describe_value(v) + ")");
            // Nested anyOf: to the enclosing one this is a plain type mismatch.
            if (depth == root_depth_) root_type_expected_ = std::move(types);
            return;
        }
        if (close.size() == 1) {
            // Only one form fits the value's type: its problems are the ones to fix.
            const failure& f = *close.front();
            for (const auto& p : f.problems)
                report(p);
            total_ += f.total - f.problems.size();
            return;
        }
        constexpr std::size_t max_listed_forms = 5;
        std::string text =
            subject(path) + (path.empty() ? " match" : " matches") + " none of the allowed forms (";
        for (std::size_t i = 0; i < close.size(); ++i) {
            if (i > 0) text += ", or ";
            // Cut, so nested anyOf cannot make the message grow exponentially.
            text += "form " + std::to_string(i + 1) + ": " + excerpt(close[i]->problems.front(), 200);
            if (close[i]->total > 1) text += ", ...";
            if (i + 1 == max_listed_forms && close.size() > max_listed_forms) {
                text += ", or " + plural(close.size() - max_listed_forms, "more form", "more forms");
                break;
            }
        }
        text += ')';
        report(std::move(text));
    }

    std::size_t& budget_;
    std::size_t max_listed_;
    const schema_index* index_ = nullptr;
    std::size_t total_ = 0;
    int root_depth_ = 0;
    std::vector<std::string> problems_;
    std::vector<std::string_view> root_type_expected_;
};

/// What the validator found, as one message; nullopt when nothing.
inline std::optional<std::string> problems_text(const argument_validator& validator) {
    if (validator.total() == 0) return std::nullopt;
    std::string out;
    for (const auto& problem : validator.problems()) {
        if (!out.empty()) out += "; ";
        out += problem;
    }
    if (validator.total() > validator.problems().size()) {
        const std::size_t more = validator.total() - validator.problems().size();
        out += "; and " + plural(more, "more problem", "more problems");
    }
    return out;
}

} // namespace detail

std::optional<std::string> validate_arguments(const boost::json::object& schema,
                                              const boost::json::value& args,
                                              const detail::schema_index* index) {
    std::size_t budget = detail::schema_visit_budget;
    detail::argument_validator validator(budget, detail::max_reported_argument_problems, index);
    std::string path;
    validator.validate(schema, args, path, 0);
    return detail::problems_text(validator);
}

std::optional<std::string> validate_arguments(const boost::json::object& schema,
                                              const boost::json::object& args,
                                              const detail::schema_index* index) {
    if (index && index->quickly_accepts(schema, args)) return std::nullopt;
    std::size_t budget = detail::schema_visit_budget;
    detail::argument_validator validator(budget, detail::max_reported_argument_problems, index);
    std::string path;
    if (!validator.validate_object(schema, args, path))
        return validate_arguments(schema, boost::json::value(args), index);
    return detail::problems_text(validator);
}

} // namespace agentware

#endif
