#ifndef AGENTWARE_REDIS_ADDRESS_HPP
#define AGENTWARE_REDIS_ADDRESS_HPP

// Where a Redis server is, as a URL: redis://[:password@]host[:port][/db]
// or unix:///path/to/redis.sock[?db=N&password=P]. The password is kept out
// of what `text()` shows (logs name the server, never its secret).

#include <agentware/redis/reply.hpp>

#include <charconv>
#include <string>
#include <string_view>

namespace agentware::redis {

struct address {
    std::string host; ///< empty for a Unix socket
    unsigned short port = 6379;
    std::string path; ///< the Unix socket
    std::string password;
    int db = 0;

    /// The URL without its password.
    std::string text() const {
        std::string where = path.empty() ? "redis://" + host + ":" + std::to_string(port) : "unix://" + path;
        if (db != 0) where += (path.empty() ? "/" : "?db=") + std::to_string(db);
        return where;
    }

    static address parse(std::string_view url) {
        // The URL is not shown: it may hold a password.
        auto bad = [&](const char* why) {
            const auto scheme = url.find("://");
            return redis::error("redis: the URL given (" +
                                (scheme == std::string_view::npos
                                     ? std::string("no scheme")
                                     : std::string(url.substr(0, scheme)) + "://...") +
                                ") is not a Redis URL (" + why +
                                "; redis://[:password@]host[:port][/db] or unix:///path[?db=N])");
        };
        auto number = [&](std::string_view s, auto& out) {
            const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
            if (ec != std::errc{} || end != s.data() + s.size()) throw bad("a number is not one");
        };
        address a;
        if (url.starts_with("unix://")) {
            std::string_view rest = url.substr(7);
            std::string_view query;
            if (const auto q = rest.find('?'); q != std::string_view::npos) {
                query = rest.substr(q + 1);
                rest = rest.substr(0, q);
            }
            if (rest.empty()) throw bad("no socket path");
            a.path = std::string(rest);
            while (!query.empty()) {
                const auto amp = query.find('&');
                const std::string_view pair = query.substr(0, amp);
                query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
                const auto eq = pair.find('=');
                const std::string_view key = pair.substr(0, eq);
                const std::string_view value =
                    eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
                if (key == "db")
                    number(value, a.db);
                else if (key == "password")
                    a.password = std::string(value);
                else
                    throw bad("an unknown parameter");
            }
            return a;
        }
        if (!url.starts_with("redis://")) throw bad("no redis:// or unix://");
        std::string_view rest = url.substr(8);
        if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
            std::string_view user_info = rest.substr(0, at);
            if (const auto colon = user_info.find(':'); colon != std::string_view::npos)
                a.password = std::string(user_info.substr(colon + 1));
            rest = rest.substr(at + 1);
        }
        if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
            if (slash + 1 < rest.size()) number(rest.substr(slash + 1), a.db);
            rest = rest.substr(0, slash);
        }
        if (const auto colon = rest.rfind(':'); colon != std::string_view::npos) {
            number(rest.substr(colon + 1), a.port);
            rest = rest.substr(0, colon);
        }
        if (rest.empty()) throw bad("no host");
        a.host = std::string(rest);
        return a;
    }
};

} // namespace agentware::redis

#endif
