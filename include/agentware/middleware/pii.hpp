#ifndef AGENTWARE_MIDDLEWARE_PII_HPP
#define AGENTWARE_MIDDLEWARE_PII_HPP

// pii: finds personal data in the conversation and blocks, redacts, masks or
// hashes it (LangChain's PIIMiddleware). Built-in types: email, credit_card
// (Luhn-checked), ip (each octet 0-255), mac_address, url; any other type
// needs its own detector, a regular expression or a function.
//   before_model: the last human message (apply_to_input) and the tool
//                 results after the last ai message (apply_to_tool_results);
//   after_model:  the last ai message (apply_to_output): its text and, beyond
//                 LangChain, the string values of its tool calls' arguments.
// The stored messages are changed, as LangChain's state update does. One
// middleware holds several rules (LangChain stacks one middleware per type).

#include <agentware/agent/runtime.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/detail/hash.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// One piece of personal data found in a text: [start, end) and the value.
struct pii_match {
    std::string type;
    std::string value;
    std::size_t start = 0;
    std::size_t end = 0;
    friend bool operator==(const pii_match&, const pii_match&) = default;
};

enum class pii_strategy { block, redact, mask, hash };

constexpr std::string_view to_string(pii_strategy s) noexcept {
    switch (s) {
    case pii_strategy::block:
        return "block";
    case pii_strategy::redact:
        return "redact";
    case pii_strategy::mask:
        return "mask";
    case pii_strategy::hash:
        return "hash";
    }
    return "?";
}

/// Finds matches of one type in a text.
using pii_detector = std::function<std::vector<pii_match>(std::string_view)>;

/// One type of personal data and what to do with it (LangChain's PIIMiddleware parameters).
struct pii_rule {
    std::string type; ///< email, credit_card, ip, mac_address, url, or your own
    pii_strategy strategy = pii_strategy::redact;
    std::optional<std::string> pattern; ///< a regular expression (ECMAScript) as the detector
    pii_detector detector;              ///< a function as the detector (code only; wins over pattern)
    bool apply_to_input = true;
    bool apply_to_output = false;
    bool apply_to_tool_results = false;

    friend bool operator==(const pii_rule& a, const pii_rule& b) {
        return a.type == b.type && a.strategy == b.strategy && a.pattern == b.pattern &&
               a.apply_to_input == b.apply_to_input && a.apply_to_output == b.apply_to_output &&
               a.apply_to_tool_results == b.apply_to_tool_results && !a.detector == !b.detector;
    }
};

struct pii_options {
    std::vector<pii_rule> rules;

    static constexpr std::string_view config_section = "pii";
    friend bool operator==(const pii_options&, const pii_options&) = default;
};

/// Thrown by the `block` strategy.
class pii_detected : public std::runtime_error {
public:
    pii_detected(std::string type, std::vector<pii_match> matches)
        : std::runtime_error(
              // Text kept for parity with LangChain (next.md §1.7).
              detail::format("PII detected: {} found {} occurrence(s)", type, matches.size())),
          type(std::move(type)), matches(std::move(matches)) {}
    std::string type;
    std::vector<pii_match> matches;
};

namespace detail {

inline std::vector<pii_match> regex_matches(const std::regex& re, std::string_view text,
                                            const std::string& type,
                                            const std::function<bool(std::string_view)>& valid = {}) {
    std::vector<pii_match> out;
    using it = std::regex_iterator<std::string_view::const_iterator>;
    for (it i(text.begin(), text.end(), re), end; i != end; ++i) {
        const auto& m = *i;
        const auto start = static_cast<std::size_t>(m.position(0));
        std::string value = m.str(0);
        if (valid && !valid(value)) continue;
        out.push_back(
            pii_match{type, std::move(value), start, start + static_cast<std::size_t>(m.length(0))});
    }
    return out;
}

inline bool luhn_valid(std::string_view number) {
    std::string digits;
    for (char c : number)
        if (c >= '0' && c <= '9') digits += c;
    if (digits.size() < 13 || digits.size() > 19) return false;
    int sum = 0;
    bool twice = false;
    for (auto i = digits.size(); i-- > 0;) {
        int d = digits[i] - '0';
        if (twice) {
            d *= 2;
            if (d > 9) d -= 9;
        }
        sum += d;
        twice = !twice;
    }
    return sum % 10 == 0;
}

inline bool ipv4_valid(std::string_view ip) {
    std::size_t octets = 0;
    while (true) {
        const std::size_t dot = ip.find('.');
        std::string_view o = ip.substr(0, dot);
        if (o.empty() || o.size() > 3 || (o.size() > 1 && o[0] == '0')) return false;
        int v = 0;
        for (char c : o)
            v = v * 10 + (c - '0');
        if (v > 255) return false;
        ++octets;
        if (dot == std::string_view::npos) break;
        ip.remove_prefix(dot + 1);
    }
    return octets == 4;
}

/// The built-in detector of `type`, or an empty function.
inline pii_detector builtin_pii_detector(std::string_view type) {
    // Patterns as LangChain's (next.md §1.7).
    if (type == "email") {
        auto re = std::make_shared<std::regex>(R"(\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b)");
        return [re](std::string_view t) { return regex_matches(*re, t, "email"); };
    }
    if (type == "credit_card") {
        auto re = std::make_shared<std::regex>(R"(\b(?:\d{4}[-\s]?){3}\d{4}\b)");
        return [re](std::string_view t) { return regex_matches(*re, t, "credit_card", luhn_valid); };
    }
    if (type == "ip") {
        auto re = std::make_shared<std::regex>(R"(\b(?:\d{1,3}\.){3}\d{1,3}\b)");
        return [re](std::string_view t) { return regex_matches(*re, t, "ip", ipv4_valid); };
    }
    if (type == "mac_address") {
        auto re = std::make_shared<std::regex>(R"(\b(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}\b)");
        return [re](std::string_view t) { return regex_matches(*re, t, "mac_address"); };
    }
    if (type == "url") {
        auto re = std::make_shared<std::regex>(R"((?:https?://|www\.)[^\s<>"{}|\\^`\[\]]+)");
        return [re](std::string_view t) { return regex_matches(*re, t, "url"); };
    }
    return {};
}

inline std::string upper(std::string s) {
    for (char& c : s)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

/// What replaces one match (Python's _redaction.py).
inline std::string pii_replacement(const pii_match& m, pii_strategy s) {
    switch (s) {
    case pii_strategy::block:
    case pii_strategy::redact:
        return detail::format("[REDACTED_{}]", upper(m.type));
    case pii_strategy::hash:
        return detail::format("<{}_hash:{}>", m.type, sha256_hex(m.value).substr(0, 8));
    case pii_strategy::mask:
        break;
    }
    const std::string& v = m.value;
    auto last = [&](std::size_t n) { return v.size() > n ? v.substr(v.size() - n) : v; };
    if (m.type == "email") {
        const auto at = v.find('@');
        if (at == std::string::npos || v.find('@', at + 1) != std::string::npos) return "****";
        const std::string domain = v.substr(at + 1);
        const auto dot = domain.rfind('.');
        return v.substr(0, at) + "@****" + (dot == std::string::npos ? "" : domain.substr(dot));
    }
    if (m.type == "credit_card") {
        std::string digits;
        for (char c : v)
            if (c >= '0' && c <= '9') digits += c;
        const std::string tail = digits.size() > 4 ? digits.substr(digits.size() - 4) : digits;
        const char* sep = v.find('-') != std::string::npos   ? "-"
                          : v.find(' ') != std::string::npos ? " "
                                                             : "";
        if (*sep) return detail::format("****{0}****{0}****{0}{1}", sep, tail);
        return "************" + tail;
    }
    if (m.type == "ip") {
        const auto dot = v.rfind('.');
        return dot == std::string::npos ? "****" : "*.*.*" + v.substr(dot);
    }
    if (m.type == "mac_address") {
        const char sep = v.find(':') != std::string::npos ? ':' : '-';
        return detail::format("**{0}**{0}**{0}**{0}**{0}{1}", sep, last(2));
    }
    if (m.type == "url") return "[MASKED_URL]";
    return v.size() > 4 ? "****" + last(4) : "****";
}

} // namespace detail

struct pii {
    /// One rule per type; throws std::invalid_argument for an unknown type
    /// without a detector, or a pattern that does not compile.
    explicit pii(pii_options o) : options_(std::move(o)) {
        for (const auto& r : options_.rules)
            detectors_.push_back(make_detector(r));
    }
    explicit pii(pii_rule r) : pii(pii_options{{std::move(r)}}) {}
    pii(std::string type, pii_strategy s) : pii(make_rule(std::move(type), s)) {}

    const pii_options& options() const noexcept { return options_; }

    /// Every match of rule `i` in `text`, in order.
    std::vector<pii_match> detect(std::size_t i, std::string_view text) const {
        auto found = detectors_.at(i)(text);
        for (auto& m : found)
            if (m.type.empty()) m.type = options_.rules[i].type;
        std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
        return found;
    }

    /// Applies rule `i` to `text`; true when it changed. `block` throws pii_detected.
    bool process(std::size_t i, std::string& text) const {
        auto found = detect(i, text);
        if (found.empty()) return false;
        const pii_rule& r = options_.rules[i];
        if (r.strategy == pii_strategy::block) throw pii_detected(r.type, std::move(found));
        std::string out;
        std::size_t pos = 0;
        for (const auto& m : found) {
            if (m.start < pos || m.end > text.size() || m.end < m.start) continue; // overlapping or bad
            out.append(text, pos, m.start - pos);
            out += detail::pii_replacement(m, r.strategy);
            pos = m.end;
        }
        out.append(text, pos);
        text = std::move(out);
        return true;
    }

    template <class State>
    void before_model(State& state, runtime&) {
        auto& ms = state.messages;
        for (std::size_t i = 0; i < options_.rules.size(); ++i) {
            const pii_rule& r = options_.rules[i];
            if (r.apply_to_input)
                for (std::size_t k = ms.size(); k-- > 0;)
                    if (ms[k].is_human()) {
                        process_content(i, ms[k]);
                        break;
                    }
            if (r.apply_to_tool_results) {
                std::size_t ai = ms.size();
                while (ai > 0 && !ms[ai - 1].is_ai())
                    --ai;
                if (ai == 0) continue;
                for (std::size_t k = ai; k < ms.size(); ++k)
                    if (ms[k].is_tool()) process_content(i, ms[k]);
            }
        }
    }

    template <class State>
    void after_model(State& state, runtime&) {
        auto& ms = state.messages;
        std::size_t ai = ms.size();
        while (ai > 0 && !ms[ai - 1].is_ai())
            --ai;
        if (ai == 0) return;
        message& m = ms[ai - 1];
        for (std::size_t i = 0; i < options_.rules.size(); ++i) {
            if (!options_.rules[i].apply_to_output) continue;
            process_content(i, m);
            for (auto& c : m.tool_calls)
                process_json(i, c.args);
        }
    }

private:
    static pii_rule make_rule(std::string type, pii_strategy s) {
        pii_rule r;
        r.type = std::move(type);
        r.strategy = s;
        return r;
    }

    static pii_detector make_detector(const pii_rule& r) {
        if (r.detector) return r.detector;
        if (r.pattern) {
            std::shared_ptr<std::regex> re;
            try {
                re = std::make_shared<std::regex>(*r.pattern);
            } catch (const std::regex_error& e) {
                throw std::invalid_argument(detail::format(
                    "pii: the pattern of type '{}' is not a valid regular expression: {}", r.type, e.what()));
            }
            return [re, type = r.type](std::string_view t) { return detail::regex_matches(*re, t, type); };
        }
        if (auto d = detail::builtin_pii_detector(r.type)) return d;
        throw std::invalid_argument(detail::format(
            "pii: unknown type '{}': give it a detector (built in: email, credit_card, ip, mac_address, url)",
            r.type));
    }

    void process_content(std::size_t i, message& m) const {
        for (auto& b : m.content)
            if (b.is_text()) process(i, b.text);
    }

    void process_json(std::size_t i, boost::json::value& v) const {
        if (v.is_string()) {
            std::string s(v.get_string());
            if (process(i, s)) v = s;
        } else if (v.is_array()) {
            for (auto& e : v.get_array())
                process_json(i, e);
        } else if (v.is_object()) {
            process_json(i, v.get_object());
        }
    }
    void process_json(std::size_t i, boost::json::object& o) const {
        for (auto& kv : o)
            process_json(i, kv.value());
    }

    pii_options options_;
    std::vector<pii_detector> detectors_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const pii_rule& r) {
    boost::json::object o{{"pii_type", r.type},
                          {"strategy", to_string(r.strategy)},
                          {"apply_to_input", r.apply_to_input},
                          {"apply_to_output", r.apply_to_output},
                          {"apply_to_tool_results", r.apply_to_tool_results}};
    if (r.pattern) o["detector"] = *r.pattern;
    jv = std::move(o);
}
/// A rule in LangChain Python's names: `pii_type`, `strategy`, `detector` (a
/// regular expression), `apply_to_input`, `apply_to_output`, `apply_to_tool_results`.
inline pii_rule tag_invoke(boost::json::value_to_tag<pii_rule>, const boost::json::value& jv) {
    json_reader r(jv);
    pii_rule rule;
    rule.type = r.required<std::string>("pii_type");
    r.choice("strategy", rule.strategy,
             {{"block", pii_strategy::block},
              {"redact", pii_strategy::redact},
              {"mask", pii_strategy::mask},
              {"hash", pii_strategy::hash}});
    r.read("detector", rule.pattern)
        .read("apply_to_input", rule.apply_to_input)
        .read("apply_to_output", rule.apply_to_output)
        .read("apply_to_tool_results", rule.apply_to_tool_results)
        .reject_unknown_keys();
    return rule;
}

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const pii_options& o) {
    jv = boost::json::object{{"rules", boost::json::value_from(o.rules)}};
}
/// `{"rules": [rule, ...]}`; each rule is checked (known type or a pattern that compiles).
inline pii_options tag_invoke(boost::json::value_to_tag<pii_options>, const boost::json::value& jv) {
    json_reader r(jv, std::string(pii_options::config_section));
    pii_options o;
    r.read("rules", o.rules).reject_unknown_keys();
    for (std::size_t i = 0; i < o.rules.size(); ++i) {
        try {
            pii{pii_options{{o.rules[i]}}};
        } catch (const std::invalid_argument& e) {
            throw json_error(detail::format("{}[{}]", r.path_of("rules"), i), e.what());
        }
    }
    return o;
}

} // namespace agentware

#endif
