#ifndef AGENTWARE_POSTGRES_CONNINFO_HPP
#define AGENTWARE_POSTGRES_CONNINFO_HPP

// A connection string as a log may show it. libpq takes two forms, keyword
// pairs (`host=/run/pg dbname=app password='s e'`) and URIs
// (`postgresql://user:secret@host/app?password=x`); both can carry a password,
// which never reaches a log or an error message.

#include <string>
#include <string_view>

namespace agentware::postgres {

namespace detail {

// The keys whose values are secrets: the password, and the one that unlocks
// the client's TLS key.
inline bool is_secret_key(std::string_view key) { return key == "password" || key == "sslpassword"; }

inline bool is_uri(std::string_view s) {
    return s.starts_with("postgresql://") || s.starts_with("postgres://");
}

// URI: the password between "user:" and "@" of the authority, and a
// `password=` query parameter.
inline std::string redact_uri(std::string_view s) {
    std::string out;
    const auto scheme_end = s.find("://") + 3;
    const auto authority_end = std::min(s.find_first_of("/?", scheme_end), s.size());
    const auto at = s.rfind('@', authority_end);
    if (at != std::string_view::npos && at >= scheme_end) {
        const auto colon = s.find(':', scheme_end);
        if (colon != std::string_view::npos && colon < at) {
            out.append(s.substr(0, colon + 1)).append("***");
            s.remove_prefix(at);
            out.push_back(s.front());
            s.remove_prefix(1);
        }
    }
    const auto query = s.find('?');
    if (query == std::string_view::npos) return out.append(s);
    out.append(s.substr(0, query + 1));
    s.remove_prefix(query + 1);
    while (!s.empty()) {
        const auto amp = std::min(s.find('&'), s.size());
        const auto pair = s.substr(0, amp);
        const auto key = pair.substr(0, pair.find('='));
        if (is_secret_key(key) && key.size() < pair.size())
            out.append(key).append("=***");
        else
            out.append(pair);
        s.remove_prefix(amp);
        if (!s.empty()) {
            out.push_back('&');
            s.remove_prefix(1);
        }
    }
    return out;
}

// Keyword pairs: `password = value`, the value bare or single-quoted with
// backslash escapes.
inline std::string redact_pairs(std::string_view s) {
    std::string out;
    std::size_t i = 0;
    while (i < s.size()) {
        if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
            out.push_back(s[i++]);
            continue;
        }
        const auto key_start = i;
        while (i < s.size() && s[i] != '=' && s[i] != ' ' && s[i] != '\t')
            ++i;
        const auto key = s.substr(key_start, i - key_start);
        out.append(key);
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
            out.push_back(s[i++]);
        if (i >= s.size() || s[i] != '=') continue;
        out.push_back(s[i++]);
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
            out.push_back(s[i++]);
        const auto value_start = i;
        if (i < s.size() && s[i] == '\'') {
            for (++i; i < s.size() && s[i] != '\''; ++i)
                if (s[i] == '\\') ++i;
            if (i < s.size()) ++i;
        } else {
            while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\n')
                ++i;
        }
        out.append(is_secret_key(key) ? std::string_view("***") : s.substr(value_start, i - value_start));
    }
    return out;
}

} // namespace detail

/// The connection string with every password (`password`, `sslpassword`) replaced by `***`.
inline std::string redact(std::string_view conninfo) {
    return detail::is_uri(conninfo) ? detail::redact_uri(conninfo) : detail::redact_pairs(conninfo);
}

} // namespace agentware::postgres

#endif
