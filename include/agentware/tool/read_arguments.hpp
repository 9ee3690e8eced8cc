#ifndef AGENTWARE_TOOL_READ_ARGUMENTS_HPP
#define AGENTWARE_TOOL_READ_ARGUMENTS_HPP

// Converts a model's tool arguments into a typed tool's arguments struct, by
// the mapping json_schema_of states. Boost.JSON's own conversion of described
// structs (1.81) cannot serve: it requires every member, std::optional ones
// included, and its errors name no argument. Problems are worded as the schema
// validator words them, so the model reads one vocabulary whichever finds them.

#include <agentware/message/detail/text.hpp>
#include <agentware/tool/json_schema.hpp>
#include <agentware/tool/schema_validation.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

namespace detail {

/// Reads values into `T`s, collecting every problem with the path of the
/// argument it concerns ("items[2].name").
class argument_reader {
public:
    template <class T>
    void read(const boost::json::value& v, T& out) {
        if constexpr (std::is_same_v<T, bool>) {
            if (const auto* b = v.if_bool())
                out = *b;
            else
                expected(v, "a boolean");
        } else if constexpr (std::is_integral_v<T>) {
            read_integer(v, out);
        } else if constexpr (std::is_floating_point_v<T>) {
            if (const auto n = as_number(v))
                out = static_cast<T>(n->as_long_double());
            else
                expected(v, "a number");
        } else if constexpr (std::is_same_v<T, std::string>) {
            if (const auto* s = v.if_string())
                out.assign(s->data(), s->size());
            else
                expected(v, "a string");
        } else if constexpr (is_vector<T>::value) {
            read_array(v, out);
        } else if constexpr (is_described_enum<T>) {
            read_enum(v, out);
        } else if constexpr (is_described_struct<T>) {
            read_struct(v, out);
        } else if constexpr (std::is_same_v<T, boost::json::value>) {
            out = v;
        } else if constexpr (std::is_same_v<T, boost::json::object>) {
            if (const auto* o = v.if_object())
                out = *o;
            else
                expected(v, "an object");
        } else {
            static_assert(std::is_same_v<T, boost::json::array>, "agentware::read_arguments: unmapped type");
            if (const auto* a = v.if_array())
                out = *a;
            else
                expected(v, "an array");
        }
    }

    /// The problems found, as one message; nullopt when none.
    std::optional<std::string> problems() const {
        if (total_ == 0) return std::nullopt;
        std::string out;
        for (const auto& problem : problems_) {
            if (!out.empty()) out += "; ";
            out += problem;
        }
        if (total_ > problems_.size())
            out += "; and " + plural(total_ - problems_.size(), "more problem", "more problems");
        return out;
    }

private:
    // Extends the path for the lifetime of the segment.
    class path_segment {
    public:
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

    private:
        std::string& path_;
        std::size_t size_;
    };

    std::string quoted_path() const { return quoted_excerpt(path_, 2 * schema_excerpt_bytes); }
    std::string subject() const {
        return path_.empty() ? std::string("arguments") : "argument " + quoted_path();
    }

    void report(std::string problem) {
        ++total_;
        if (problems_.size() < max_reported_argument_problems) problems_.push_back(std::move(problem));
    }
    void expected(const boost::json::value& v, std::string_view what) {
        report(subject() + " must be " + std::string(what) + " (got " + describe_value(v) + ")");
    }

    template <class T>
    void read_integer(const boost::json::value& v, T& out) {
        if (!is_json_integer(v)) return expected(v, "an integer");
        // Every integral value a JSON number can hold, then the range of T.
        if (const auto* i = v.if_int64(); i && std::in_range<T>(*i)) {
            out = static_cast<T>(*i);
            return;
        }
        if (const auto* u = v.if_uint64(); u && std::in_range<T>(*u)) {
            out = static_cast<T>(*u);
            return;
        }
        if (const auto* d = v.if_double()) {
            constexpr double two_to_63 = 9223372036854775808.0;
            if (*d >= -two_to_63 && *d < two_to_63 && std::in_range<T>(static_cast<std::int64_t>(*d))) {
                out = static_cast<T>(static_cast<std::int64_t>(*d));
                return;
            }
            if (*d >= 0 && *d < 2 * two_to_63 && std::in_range<T>(static_cast<std::uint64_t>(*d))) {
                out = static_cast<T>(static_cast<std::uint64_t>(*d));
                return;
            }
        }
        report(subject() + " must be an integer from " + std::to_string(std::numeric_limits<T>::min()) +
               " to " + std::to_string(std::numeric_limits<T>::max()) + " (got " + format_number(v) + ")");
    }

    template <class T>
    void read_array(const boost::json::value& v, T& out) {
        const auto* items = v.if_array();
        if (!items) return expected(v, "an array");
        out.clear();
        out.reserve(items->size());
        for (std::size_t i = 0; i < items->size(); ++i) {
            path_segment seg(path_, i);
            typename T::value_type item{}; // not emplace_back: std::vector<bool> has no bool& to read into
            read((*items)[i], item);
            out.push_back(std::move(item));
        }
    }

    template <class T>
    void read_enum(const boost::json::value& v, T& out) {
        bool found = false;
        if (const auto* s = v.if_string())
            boost::mp11::mp_for_each<boost::describe::describe_enumerators<T>>([&](auto e) {
                if (!found && *s == e.name) {
                    out = e.value;
                    found = true;
                }
            });
        if (found) return;
        std::string names;
        boost::mp11::mp_for_each<boost::describe::describe_enumerators<T>>([&](auto e) {
            if (!names.empty()) names += ", ";
            names += quoted_excerpt(e.name, schema_excerpt_bytes);
        });
        report(subject() + " must be one of " + names + " (got " + describe_value(v) + ")");
    }

    template <class T>
    void read_struct(const boost::json::value& v, T& out) {
        if (const auto* args = v.if_object())
            read_object(*args, out);
        else
            expected(v, "an object");
    }

public:
    /// A described struct from an object (the arguments are one, read in place).
    template <class T>
    void read_object(const boost::json::object& args, T& out) {
        boost::mp11::mp_for_each<argument_members<T>>([&](auto d) {
            using member = member_type_t<T, decltype(d)>;
            if constexpr (check_argument_member<T, member>()) {
                auto& target = out.*d.pointer;
                const boost::json::value* arg = args.if_contains(d.name);
                path_segment seg(path_, d.name);
                if constexpr (is_optional<member>::value) {
                    // Null is read as absent: what a model that fills every key sends for "none".
                    if (!arg || arg->is_null())
                        target.reset();
                    else
                        read(*arg, target.emplace());
                } else if (arg) {
                    read(*arg, target);
                } else {
                    report("missing required argument " + quoted_path());
                }
            }
        });
        for (const auto& entry : args) {
            if (is_member_name<T>(entry.key())) continue;
            path_segment seg(path_, entry.key());
            report("unexpected argument " + quoted_path() + expected_names<T>());
        }
    }

private:
    // " (expected "a", "b")", as the validator lists the allowed keys.
    template <class T>
    static std::string expected_names() {
        std::string out;
        boost::mp11::mp_for_each<argument_members<T>>([&](auto d) {
            out += out.empty() ? " (expected " : ", ";
            out += quoted_excerpt(d.name, schema_excerpt_bytes);
        });
        if (!out.empty()) out += ')';
        return out;
    }

    std::string path_;
    std::size_t total_ = 0;
    std::vector<std::string> problems_;
};

} // namespace detail

/// Reads a model's tool arguments into `out`, as `json_schema_of<T>()`
/// describes them. Returns nullopt on success, else one message listing every
/// problem (up to ten), e.g. `argument "limit" must be an integer (got string
/// "ten")`; `out` is then partly written. Never throws but std::bad_alloc.
template <arguments_struct T>
std::optional<std::string> read_arguments(const boost::json::object& args, T& out) {
    detail::argument_reader reader;
    reader.read_object(args, out);
    return reader.problems();
}

} // namespace agentware

#endif
