#ifndef AGENTWARE_CORE_COW_STRING_HPP
#define AGENTWARE_CORE_COW_STRING_HPP

#include <agentware/core/cow.hpp>

#include <compare>
#include <concepts>
#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace agentware {

/// A copy-on-write string (see `cow`) that reads and appends like a string.
///
/// A request to the model borrows the agent's system prompt, which real agents
/// make many kilobytes long, so building a request each round does not copy
/// it. A hook that appends to the prompt (`request.system_prompt += "..."`) or
/// assigns it makes the request's own copy, once.
class cow_string : public cow<std::string> {
    using base = cow<std::string>;

public:
    cow_string() = default;
    /// Borrows `s`, which must outlive every copy of this object.
    explicit cow_string(const std::string& s) noexcept : base(s) {}
    /// Owns `s`.
    cow_string(std::string&& s) : base(std::move(s)) {}          // NOLINT: a string is a prompt
    cow_string(const char* s) : base(std::string(s ? s : "")) {} // NOLINT
    explicit cow_string(std::string_view s) : base(std::string(s)) {}

    /// Replaces the text with a copy of `s`, owned (never borrowed).
    cow_string& operator=(std::string s) {
        base::operator=(std::move(s));
        return *this;
    }
    cow_string& operator=(const char* s) { return *this = std::string(s ? s : ""); } // `= {}` clears
    cow_string& operator=(std::string_view s) { return *this = std::string(s); }

    void clear() { *this = std::string(); }

    cow_string& operator+=(std::string_view s) {
        edit() += s;
        return *this;
    }
    cow_string& operator+=(char c) {
        edit() += c;
        return *this;
    }

    const std::string& str() const noexcept { return get(); }
    operator const std::string&() const noexcept { return get(); } // NOLINT: reads as a string
    operator std::string_view() const noexcept { return get(); }   // NOLINT

    bool empty() const noexcept { return get().empty(); }
    std::size_t size() const noexcept { return get().size(); }
    const char* c_str() const noexcept { return get().c_str(); }
    const char* data() const noexcept { return get().data(); }

    friend bool operator==(const cow_string& a, std::string_view b) noexcept { return a.get() == b; }
    friend std::strong_ordering operator<=>(const cow_string& a, std::string_view b) noexcept {
        return a.get().compare(b) <=> 0;
    }
    // Two cow_strings: a template, so that it takes no conversions and a
    // comparison with a string or a literal is not ambiguous.
    template <std::same_as<cow_string> T>
    friend bool operator==(const cow_string& a, const T& b) noexcept {
        return a.get() == b.get();
    }
    template <std::same_as<cow_string> T>
    friend std::strong_ordering operator<=>(const cow_string& a, const T& b) noexcept {
        return a.get().compare(b.get()) <=> 0;
    }

    /// For fmt (10 and later format only what says how) and streams.
    friend std::string_view format_as(const cow_string& s) noexcept { return s.get(); }
    friend std::ostream& operator<<(std::ostream& os, const cow_string& s) { return os << s.get(); }
};

} // namespace agentware

#endif
