#ifndef AGENTWARE_TOOL_JSON_SCHEMA_HPP
#define AGENTWARE_TOOL_JSON_SCHEMA_HPP

// The JSON Schema of a typed tool's arguments, generated from a struct
// described with Boost.Describe, so that the schema the model reads cannot
// drift from the code that reads the arguments.
//
//   bool -> boolean; integers -> integer (unsigned: minimum 0); float, double
//   -> number; std::string -> string; a described enum -> a string enum of its
//   enumerator names; std::vector<T> -> array of T; a described struct ->
//   object (every member required but std::optional ones; no other keys);
//   boost::json::value / object / array -> any value / object / array.

#include <agentware/core/type_list.hpp>

// The macros that describe an arguments struct come with this header.
#include <boost/describe/class.hpp>
#include <boost/describe/enum.hpp>
#include <boost/describe/enumerators.hpp>
#include <boost/describe/members.hpp>
#include <boost/describe/modifiers.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/mp11/algorithm.hpp>

#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace agentware {

/// The text the model reads for one member of an arguments struct. A struct
/// gives them in a `static constexpr member_description descriptions[]`
/// beside its members: the text sits next to what it describes, and a
/// struct without descriptions needs nothing.
struct member_description {
    std::string_view member;
    std::string_view text;
};

namespace detail {

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};

/// What a member holds when it is present: `T` for `std::optional<T>`.
template <class T>
struct present_type {
    using type = T;
};
template <class T>
struct present_type<std::optional<T>> {
    using type = T;
};

template <class T>
inline constexpr bool is_described_enum =
    std::is_enum_v<T> && boost::describe::has_describe_enumerators<T>::value;

template <class T>
inline constexpr bool is_described_struct =
    std::is_class_v<T> && boost::describe::has_describe_members<T>::value;

/// The members a schema lists: the public ones, inherited ones included.
template <class T>
using argument_members =
    boost::describe::describe_members<T, boost::describe::mod_public | boost::describe::mod_inherited>;

template <class T, class Descriptor>
using member_type_t = std::remove_cvref_t<decltype(std::declval<T&>().*Descriptor::pointer)>;

template <class T>
inline constexpr bool is_character =
    std::is_same_v<T, char> || std::is_same_v<T, signed char> || std::is_same_v<T, unsigned char> ||
    std::is_same_v<T, wchar_t> || std::is_same_v<T, char8_t> || std::is_same_v<T, char16_t> ||
    std::is_same_v<T, char32_t>;

/// Whether a value of type `T` has a JSON Schema form (see the top of this header).
/// Characters are refused: as integers they would surprise, as strings they
/// would be cut.
template <class T>
constexpr bool has_json_schema() {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string>)
        return true;
    else if constexpr (is_character<T>)
        return false;
    else if constexpr (std::is_integral_v<T> || std::is_floating_point_v<T>)
        return true;
    else if constexpr (is_vector<T>::value)
        return has_json_schema<typename T::value_type>();
    else if constexpr (is_described_enum<T> || is_described_struct<T>)
        return true;
    else
        return std::is_same_v<T, boost::json::value> || std::is_same_v<T, boost::json::object> ||
               std::is_same_v<T, boost::json::array>;
}

/// True when the member of type `Member` of `Struct` has a schema; fails to
/// compile otherwise, the instantiation naming both types.
template <class Struct, class Member>
constexpr bool check_argument_member() {
    constexpr bool ok = has_json_schema<typename present_type<Member>::type>();
    static_assert(ok,
                  "agentware::make_tool: a member of an arguments struct has a type with no JSON Schema "
                  "form (see `Struct` and `Member` in this instantiation). Use bool, an integer or "
                  "floating-point type, std::string, an enum described with BOOST_DESCRIBE_ENUM, a struct "
                  "described with BOOST_DESCRIBE_STRUCT, boost::json::value, object or array, or a "
                  "std::vector of those, or as a member std::optional of one of those");
    return ok;
}

template <class Target, class T, class... Seen>
constexpr bool holds_type();

/// True when a member of the struct `T` is or holds a `Target`.
template <class Target, class T, class... Seen>
constexpr bool members_hold() {
    bool found = false;
    boost::mp11::mp_for_each<argument_members<T>>(
        [&](auto d) { found = found || holds_type<Target, member_type_t<T, decltype(d)>, T, Seen...>(); });
    return found;
}

/// True when `T` is or holds a `Target` at any depth (through members,
/// optionals and vectors). `Seen` are the structs on the way down, so that
/// the search ends on types that hold themselves.
template <class Target, class T, class... Seen>
constexpr bool holds_type() {
    if constexpr (std::is_same_v<T, Target>)
        return true;
    else if constexpr (is_optional<T>::value || is_vector<T>::value)
        return holds_type<Target, typename T::value_type, Seen...>();
    else if constexpr (!is_described_struct<T> || (std::is_same_v<T, Seen> || ...))
        return false;
    else
        return members_hold<Target, T, Seen...>();
}

template <class T>
concept has_member_descriptions = requires {
    { *std::begin(T::descriptions) } -> std::convertible_to<const member_description&>;
};

template <class T>
constexpr bool is_member_name(std::string_view name) {
    bool found = false;
    boost::mp11::mp_for_each<argument_members<T>>([&](auto d) { found = found || name == d.name; });
    return found;
}

/// True when every entry of `T::descriptions` names a member the schema lists.
template <class T>
constexpr bool descriptions_name_members() {
    if constexpr (has_member_descriptions<T>) {
        for (const member_description& d : T::descriptions)
            if (!is_member_name<T>(d.member)) return false;
    }
    return true;
}

template <class T>
constexpr std::string_view description_of(std::string_view member) {
    if constexpr (has_member_descriptions<T>) {
        for (const member_description& d : T::descriptions)
            if (d.member == member) return d.text;
    }
    return {};
}

} // namespace detail

/// A struct whose members Boost.Describe lists (`BOOST_DESCRIBE_STRUCT`): what
/// a typed tool takes as its arguments.
template <class T>
concept arguments_struct = detail::is_described_struct<std::remove_cvref_t<T>>;

/// The JSON Schema of `T` (see the top of this header). Built at run time:
/// a typed tool builds it once, when it is made.
template <class T>
boost::json::object json_schema_of() {
    static_assert(detail::has_json_schema<T>(),
                  "agentware::json_schema_of: this type has no JSON Schema form");
    boost::json::object schema;
    if constexpr (std::is_same_v<T, bool>) {
        schema["type"] = "boolean";
    } else if constexpr (std::is_integral_v<T>) {
        schema["type"] = "integer";
        if constexpr (std::is_unsigned_v<T>) schema["minimum"] = 0;
    } else if constexpr (std::is_floating_point_v<T>) {
        schema["type"] = "number";
    } else if constexpr (std::is_same_v<T, std::string>) {
        schema["type"] = "string";
    } else if constexpr (detail::is_vector<T>::value) {
        schema["type"] = "array";
        schema["items"] = json_schema_of<typename T::value_type>();
    } else if constexpr (detail::is_described_enum<T>) {
        boost::json::array names;
        boost::mp11::mp_for_each<boost::describe::describe_enumerators<T>>(
            [&](auto e) { names.emplace_back(e.name); });
        schema["type"] = "string";
        schema["enum"] = std::move(names);
    } else if constexpr (detail::is_described_struct<T>) {
        static_assert(!detail::members_hold<T, T>(),
                      "agentware::json_schema_of: this arguments struct holds itself (through a member, a "
                      "std::optional or a std::vector): its schema would be infinite; take that member as "
                      "boost::json::value and read it in the tool");
        static_assert(detail::descriptions_name_members<T>(),
                      "agentware::json_schema_of: `descriptions` of an arguments struct names a member that "
                      "its BOOST_DESCRIBE_STRUCT does not list");
        boost::json::object properties;
        boost::json::array required;
        boost::mp11::mp_for_each<detail::argument_members<T>>([&](auto d) {
            using member = detail::member_type_t<T, decltype(d)>;
            if constexpr (detail::check_argument_member<T, member>()) {
                boost::json::object property = json_schema_of<typename detail::present_type<member>::type>();
                if (const std::string_view text = detail::description_of<T>(d.name); !text.empty())
                    property["description"] = text;
                properties[d.name] = std::move(property);
                if constexpr (!detail::is_optional<member>::value) required.emplace_back(d.name);
            }
        });
        schema["type"] = "object";
        schema["properties"] = std::move(properties);
        if (!required.empty()) schema["required"] = std::move(required);
        // A misspelt optional argument is an error the model reads, not a silent default.
        schema["additionalProperties"] = false;
    } else if constexpr (std::is_same_v<T, boost::json::object>) {
        schema["type"] = "object";
    } else if constexpr (std::is_same_v<T, boost::json::array>) {
        schema["type"] = "array";
    }
    // boost::json::value: the empty schema, any value.
    return schema;
}

} // namespace agentware

#endif
