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
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

namespace detail {

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
