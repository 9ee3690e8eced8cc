#ifndef AGENTWARE_JSON_READER_HPP
#define AGENTWARE_JSON_READER_HPP

// Reading an object of settings (a configuration section, a scenario, a
// middleware's options) key by key, each value with its C++ type. A value of
// the wrong type, a missing required key and a key nobody reads are errors
// that name their path: `loop_detection.warn_threshold: expected an integer,
// got "x"`, `sandbox.bash_timout: unknown key (known: ...)`.
//
// Public because a user's middleware writes its options' tag_invoke with it
// too, and then reads and fails like the built-in ones.

#include <agentware/detail/format.hpp>
#include <agentware/detail/type_traits.hpp>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <chrono>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace agentware {

/// JSON that does not have the shape a reader expects. what() is
/// "<path>: <problem>" (just the problem when the path is empty).
class json_error : public std::invalid_argument {
public:
    json_error(std::string path, std::string problem)
        : std::invalid_argument(path.empty() ? problem : path + ": " + problem), path_(std::move(path)),
          problem_(std::move(problem)) {}

    const std::string& path() const noexcept { return path_; }
    const std::string& problem() const noexcept { return problem_; }

    /// The same error seen from the enclosing value at `parent` (e.g.
    /// "features").
    json_error within(std::string_view parent) const;

private:
    std::string path_;
    std::string problem_;
};

namespace detail {

/// `parent.child`, or `parent[3]` when child is an index ("[3]").
inline std::string json_path(std::string_view parent, std::string_view child) {
    if (parent.empty()) return std::string(child);
    if (child.empty()) return std::string(parent);
    std::string out(parent);
    if (!child.starts_with('[')) out += '.';
    out += child;
    return out;
}

/// The offending value as the message shows it: its JSON text, cut short.
inline std::string json_shown(const boost::json::value& v) {
    constexpr std::size_t max_chars = 60;
    // Boost.JSON writes 2.5 as 2.5E0; people write it as 2.5.
    std::string text = v.is_double() ? detail::format("{}", v.get_double()) : boost::json::serialize(v);
    if (text.size() > max_chars) {
        text.resize(max_chars);
        text += "...";
    }
    return text;
}

[[noreturn]] inline void json_type_error(std::string_view path, std::string_view expected,
                                         const boost::json::value& got) {
    throw json_error(std::string(path), detail::format("expected {}, got {}", expected, json_shown(got)));
}

template <class T>
struct is_string_map : std::false_type {};
template <class T, class C, class A>
struct is_string_map<std::map<std::string, T, C, A>> : std::true_type {};

template <class T>
struct is_duration : std::false_type {};
template <class R, class P>
struct is_duration<std::chrono::duration<R, P>> : std::true_type {};

} // namespace detail

inline json_error json_error::within(std::string_view parent) const {
    return json_error(detail::json_path(parent, path_), problem_);
}

/// `v` as a T, or a json_error naming `path`. Booleans, integers (range
/// checked), floating point, strings, durations (seconds, whole or not),
/// optionals (null is empty), vectors (arrays), maps by string (objects),
/// Boost.JSON values and objects are read here; any other T through its
/// value_to, whose json_error gets `path` in front.
template <class T>
T json_read_as(const boost::json::value& v, std::string_view path) {
    if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_bool()) detail::json_type_error(path, "true or false", v);
        return v.get_bool();
    } else if constexpr (std::is_integral_v<T>) {
        if (!v.is_number()) detail::json_type_error(path, "an integer", v);
        boost::system::error_code ec;
        const T n = v.to_number<T>(ec);
        if (!ec) return n;
        const bool negative = (v.is_int64() && v.get_int64() < 0) || (v.is_double() && v.get_double() < 0);
        if (std::is_unsigned_v<T> && negative) detail::json_type_error(path, "a non-negative integer", v);
        if (v.is_double() && v.get_double() != std::trunc(v.get_double()))
            detail::json_type_error(path, "an integer", v);
        detail::json_type_error(path,
                                detail::format("an integer of at most {}", std::numeric_limits<T>::max()), v);
    } else if constexpr (std::is_floating_point_v<T>) {
        if (!v.is_number()) detail::json_type_error(path, "a number", v);
        return v.to_number<T>();
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (!v.is_string()) detail::json_type_error(path, "a string", v);
        return std::string(v.get_string());
    } else if constexpr (std::is_same_v<T, boost::json::value>) {
        return v;
    } else if constexpr (std::is_same_v<T, boost::json::object>) {
        if (!v.is_object()) detail::json_type_error(path, "an object", v);
        return v.get_object();
    } else if constexpr (detail::is_duration<T>::value) {
        if (!v.is_number() || v.to_number<double>() < 0)
            detail::json_type_error(path, "a non-negative number of seconds", v);
        return std::chrono::duration_cast<T>(std::chrono::duration<double>(v.to_number<double>()));
    } else if constexpr (detail::is_optional<T>::value) {
        if (v.is_null()) return T{};
        return T(json_read_as<typename T::value_type>(v, path));
    } else if constexpr (detail::is_vector<T>::value) {
        const auto* a = v.if_array();
        if (!a) detail::json_type_error(path, "an array", v);
        T out;
        out.reserve(a->size());
        for (std::size_t i = 0; i < a->size(); ++i)
            out.push_back(json_read_as<typename T::value_type>(
                (*a)[i], detail::json_path(path, detail::format("[{}]", i))));
        return out;
    } else if constexpr (detail::is_string_map<T>::value) {
        const auto* o = v.if_object();
        if (!o) detail::json_type_error(path, "an object", v);
        T out;
        for (const auto& kv : *o)
            out.emplace(std::string(kv.key()),
                        json_read_as<typename T::mapped_type>(kv.value(), detail::json_path(path, kv.key())));
        return out;
    } else {
        try {
            return boost::json::value_to<T>(v);
        } catch (const json_error& e) {
            throw e.within(path);
        } catch (const std::exception& e) {
            throw json_error(std::string(path), e.what());
        }
    }
}

/// One of a setting's accepted names and what it means (e.g. `{"deny", mode::deny}`).
template <class T>
using json_choice_of = std::pair<std::string_view, T>;

namespace detail {

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`: the names a choice accepts.
template <class Names, class NameOf>
std::string json_choice_list(const Names& names, NameOf name_of) {
    std::string out;
    std::size_t i = 0;
    const std::size_t n = std::size(names);
    for (const auto& c : names) {
        out += i == 0 ? "\"" : i + 1 == n ? " or \"" : ", \"";
        out += name_of(c);
        out += '"';
        ++i;
    }
    return out;
}

[[noreturn]] inline void throw_not_a_choice(std::string_view path, const std::string& names,
                                            std::string_view text) {
    throw json_error(std::string(path), detail::format("expected {}, got \"{}\"", names, text));
}

template <class Choices>
auto json_choose_from(std::string_view path, std::string_view text, const Choices& choices) {
    for (const auto& [name, value] : choices)
        if (name == text) return value;
    throw_not_a_choice(path, json_choice_list(choices, [](const auto& c) { return c.first; }), text);
}

} // namespace detail

/// What `text`, the string at `path`, names among `choices`; any other text is
/// a json_error listing them: `expected "allow", "ask" or "deny", got "x"`.
template <class T>
T json_choose(std::string_view path, std::string_view text,
              std::initializer_list<json_choice_of<T>> choices) {
    return detail::json_choose_from(path, text, choices);
}
template <class T>
T json_choose(std::string_view path, std::string_view text, const std::vector<json_choice_of<T>>& choices) {
    return detail::json_choose_from(path, text, choices);
}

/// Checks that `text`, the string at `path`, is one of `names` (a setting kept
/// as its name).
inline void json_check_choice(std::string_view path, std::string_view text,
                              std::initializer_list<std::string_view> names) {
    for (std::string_view name : names)
        if (name == text) return;
    detail::throw_not_a_choice(path, detail::json_choice_list(names, [](std::string_view c) { return c; }),
                               text);
}

/// Reads the keys of one JSON object. Every key a member function names
/// counts as known; reject_unknown_keys() then refuses the rest, listing the
/// known ones. A null value counts as absent (YAML's `key: null` = the
/// default).
class json_reader {
public:
    /// Throws json_error when `v` is not an object.
    explicit json_reader(const boost::json::value& v, std::string path = {}) : path_(std::move(path)) {
        object_ = v.if_object();
        if (!object_) detail::json_type_error(path_, "an object", v);
    }
    explicit json_reader(const boost::json::object& o, std::string path = {})
        : object_(&o), path_(std::move(path)) {}

    const std::string& path() const noexcept { return path_; }
    std::string path_of(std::string_view key) const { return detail::json_path(path_, key); }
    const boost::json::object& object() const noexcept { return *object_; }

    /// Runs `options.validate()`, which throws std::invalid_argument for values
    /// that are wrong together, and reports its reason at this reader's path.
    template <class Options>
    void validate(const Options& options) const {
        try {
            options.validate();
        } catch (const std::invalid_argument& e) {
            throw json_error(path_, e.what());
        }
    }

    /// The value at `key`, or nullptr when it is absent or null.
    const boost::json::value* find(std::string_view key) {
        known_.emplace_back(key);
        const auto* v = object_->if_contains(key);
        return v == nullptr || v->is_null() ? nullptr : v;
    }
    bool contains(std::string_view key) { return find(key) != nullptr; }

    /// Sets `into` from `key` when there is a value; otherwise `into` keeps its
    /// default.
    template <class T>
    json_reader& read(std::string_view key, T& into) {
        if (const auto* v = find(key)) into = json_read_as<T>(*v, path_of(key));
        return *this;
    }

    /// The value at `key`, or empty when it is absent or null.
    template <class T>
    std::optional<T> optional(std::string_view key) {
        if (const auto* v = find(key)) return json_read_as<T>(*v, path_of(key));
        return std::nullopt;
    }

    /// The value at `key`; its absence is an error.
    template <class T>
    T required(std::string_view key) {
        if (const auto* v = find(key)) return json_read_as<T>(*v, path_of(key));
        throw json_error(path_of(key), "missing");
    }

    /// Sets `into` from the string at `key`, one of `choices`, when there is a
    /// value; any other string is an error that lists the names.
    template <class T>
    json_reader& choice(std::string_view key, T& into, std::initializer_list<json_choice_of<T>> choices) {
        if (const auto* v = find(key))
            into = json_choose(path_of(key), json_read_as<std::string>(*v, path_of(key)), choices);
        return *this;
    }

    /// A reader of the object at `key` (empty when the key is absent or null).
    std::optional<json_reader> object(std::string_view key) {
        if (const auto* v = find(key)) return json_reader(*v, path_of(key));
        return std::nullopt;
    }

    /// Counts `key` as known without reading it (someone else reads it).
    json_reader& skip(std::string_view key) {
        known_.emplace_back(key);
        return *this;
    }

    /// Throws `<path>.<key>: unknown key (known: ...)` for the first key no
    /// member function named.
    void reject_unknown_keys() const {
        for (const auto& kv : *object_) {
            bool known = false;
            for (const auto& k : known_)
                known = known || k == kv.key();
            if (known) continue;
            std::string list;
            for (std::size_t i = 0; i < known_.size(); ++i) {
                bool listed = false;
                for (std::size_t j = 0; j < i; ++j)
                    listed = listed || known_[j] == known_[i];
                if (!listed) list += (list.empty() ? "" : ", ") + known_[i];
            }
            throw json_error(path_of(kv.key()), detail::format("unknown key (known: {})", list));
        }
    }

private:
    const boost::json::object* object_ = nullptr;
    std::string path_;
    std::vector<std::string> known_;
};

} // namespace agentware

#endif
