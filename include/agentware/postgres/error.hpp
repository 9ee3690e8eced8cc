#ifndef AGENTWARE_POSTGRES_ERROR_HPP
#define AGENTWARE_POSTGRES_ERROR_HPP

// The one exception the PostgreSQL client throws. It says whether the
// statement failed (the connection still serves: a constraint, a timeout) or
// the connection itself is gone (the pool drops it and opens another), and
// carries the server's SQLSTATE so callers can tell a unique violation
// (23505) from a cancelled statement (57014) without parsing text.

#include <stdexcept>
#include <string>
#include <utility>

namespace agentware::postgres {

class error : public std::runtime_error {
public:
    explicit error(const std::string& message, std::string sqlstate = {}, bool connection_lost = false)
        : std::runtime_error(message), sqlstate_(std::move(sqlstate)), connection_lost_(connection_lost) {}

    /// The server's five-character SQLSTATE, empty when the error is the client's.
    const std::string& sqlstate() const noexcept { return sqlstate_; }
    /// True when the connection cannot serve again (closed, reset, not connected).
    bool connection_lost() const noexcept { return connection_lost_; }

private:
    std::string sqlstate_;
    bool connection_lost_;
};

/// SQLSTATEs the server's code tests for.
namespace sqlstate {
inline constexpr const char* unique_violation = "23505";
inline constexpr const char* query_canceled = "57014";
inline constexpr const char* undefined_table = "42P01";
} // namespace sqlstate

} // namespace agentware::postgres

#endif
