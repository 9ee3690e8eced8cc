#ifndef AGENTWARE_TESTS_TOOL_TYPED_SUPPORT_HPP
#define AGENTWARE_TESTS_TOOL_TYPED_SUPPORT_HPP

// Described argument structs for the tests of typed tools: their schemas
// (json_schema_test), their reading (read_arguments_test) and the tools
// (typed_tool_test).

#include <agentware/tool/json_schema.hpp>

#include <boost/describe/class.hpp>
#include <boost/describe/enum.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// At namespace scope: BOOST_DESCRIBE_* must follow the type in its own namespace.
namespace typed {

enum class unit { celsius, fahrenheit };
BOOST_DESCRIBE_ENUM(unit, celsius, fahrenheit)

struct point {
    double x = 0;
    double y = 0;
};
BOOST_DESCRIBE_STRUCT(point, (), (x, y))

struct every_kind {
    bool flag;
    int count;
    std::uint16_t small;
    double ratio;
    std::string name;
    std::optional<int> limit;
    std::vector<std::string> tags;
    point origin;
    unit units;
    std::vector<point> path;
    boost::json::value anything;
    boost::json::object extra;
    boost::json::array raw;
};
BOOST_DESCRIBE_STRUCT(every_kind, (),
                      (flag, count, small, ratio, name, limit, tags, origin, units, path, anything, extra,
                       raw))

struct add_args {
    int a = 0;
    int b = 0;
    static constexpr agentware::member_description descriptions[] = {{"a", "The first addend."},
                                                                     {"b", "The second addend."}};
};
BOOST_DESCRIBE_STRUCT(add_args, (), (a, b))

struct all_optional {
    std::optional<std::string> query;
    std::optional<std::vector<unit>> units;
};
BOOST_DESCRIBE_STRUCT(all_optional, (), (query, units))

struct nap_args {
    int ms = 0;
    std::string note;
};
BOOST_DESCRIBE_STRUCT(nap_args, (), (ms, note))

struct base_args {
    std::string id;
};
BOOST_DESCRIBE_STRUCT(base_args, (), (id))
struct derived_args : base_args {
    bool force = false;
};
BOOST_DESCRIBE_STRUCT(derived_args, (base_args), (force))

// Its schema would be infinite: refused at compile time.
struct tree {
    std::string name;
    std::vector<tree> children;
};
BOOST_DESCRIBE_STRUCT(tree, (), (name, children))

} // namespace typed

namespace typed {

inline boost::json::value parse(std::string_view text) { return boost::json::parse(text); }

} // namespace typed

#endif // AGENTWARE_TESTS_TOOL_TYPED_SUPPORT_HPP
