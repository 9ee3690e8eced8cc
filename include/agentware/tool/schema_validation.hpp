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
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

AGENTWARE_DECL std::optional<json_number> as_number(const boost::json::value& v) noexcept;

/// -1, 0 or 1; exact between integers (any sign), through long double otherwise
/// (exact for 64-bit integers on x86-64 and AArch64).
AGENTWARE_DECL int compare_numbers(const json_number& a, const json_number& b) noexcept;

/// Integers, and doubles with an integral value (3.0), as JSON Schema counts them.
AGENTWARE_DECL bool is_json_integer(const boost::json::value& v) noexcept;

/// A non-negative integer keyword value (minLength: 3), else nullopt.
AGENTWARE_DECL std::optional<std::uint64_t> as_count(const boost::json::value& v) noexcept;

AGENTWARE_DECL std::string format_number(const boost::json::value& v);

/// Counts code points (what JSON Schema calls characters), not bytes.
AGENTWARE_DECL std::size_t utf8_length(std::string_view s) noexcept;

AGENTWARE_DECL std::string plural(std::uint64_t n, std::string_view one, std::string_view many);

/// A value as it would appear in a schema, cut short: "r", 3, true, [1,2].
AGENTWARE_DECL std::string render_value(const boost::json::value& v);

/// What the model sent, for "(got ...)": its kind and a short excerpt.
AGENTWARE_DECL std::string describe_value(const boost::json::value& v);

/// Equality as JSON Schema's enum and const define it: 1 equals 1.0.
AGENTWARE_DECL bool json_equal(const boost::json::value& a, const boost::json::value& b,
                               int depth = 0) noexcept;

/// The JSON Schema type names; `none` for a name that is not one.
enum class schema_type : unsigned char { none, object, array, string, integer, number, boolean, null };

AGENTWARE_DECL schema_type schema_type_named(std::string_view name) noexcept;

/// "a string", "an integer", ...; empty for `none`.
AGENTWARE_DECL std::string_view type_phrase(schema_type t) noexcept;

/// Whether `v` is of type `t` (never of `none`).
AGENTWARE_DECL bool has_type(const boost::json::value& v, schema_type t) noexcept;

/// "a string", "a string or null", "a string, an integer or null".
AGENTWARE_DECL std::string join_alternatives(const std::vector<std::string_view>& phrases,
                                             std::string_view last_sep);

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
    AGENTWARE_DECL explicit schema_keywords(const boost::json::object& schema) noexcept;

private:
    AGENTWARE_DECL const value** find(std::string_view key) noexcept;
};

/// The usual tool schema, `{"type":"object","properties":{"path":{"type":"string"},...},
/// "required":[...]}`, where each property constrains at most its type, in a
/// form that accepts valid arguments in one pass over them. It only ever
/// accepts: arguments it does not accept go through the full check, which
/// gives the verdict and the message, so both paths always agree.
class flat_object_schema {
public:
    /// The flat form of `root`, or nullopt when some keyword needs the full check.
    AGENTWARE_DECL static std::optional<flat_object_schema> of(const schema_keywords& root);

    /// True when `args` certainly pass; false when the full check must decide.
    AGENTWARE_DECL bool accepts(const boost::json::object& args) const noexcept;

private:
    struct property {
        std::string_view name; // the schema's own key: valid while the schema lives
        schema_type type;      // none: any value
        bool required;
    };

    // The type a property schema asks for, when that is all it asks: its one
    // type name (none for `{}` or `true`); nullopt for anything more.
    AGENTWARE_DECL static std::optional<schema_type> property_type(const boost::json::value& schema);

    AGENTWARE_DECL const property* find(std::string_view key) const noexcept;
    property* find(std::string_view key) noexcept {
        return const_cast<property*>(std::as_const(*this).find(key));
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
    AGENTWARE_DECL explicit schema_index(const boost::json::object& root);

    /// True when `args` certainly satisfy `schema` (this index's root), found
    /// without the full check; false when the full check must decide.
    bool quickly_accepts(const boost::json::object& schema, const boost::json::object& args) const noexcept {
        return flat_ && root_ == &schema && flat_->accepts(args);
    }

    /// The keywords of `schema`, or nullptr when it is not a node of the indexed schema.
    AGENTWARE_DECL const schema_keywords* find(const boost::json::object& schema) const noexcept;
    std::size_t size() const noexcept { return nodes_.size(); }

private:
    struct node {
        const boost::json::object* schema;
        schema_keywords keywords;
    };

    // Follows every place the validator descends into a subschema.
    AGENTWARE_DECL void add(const boost::json::object& schema, int depth);

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
