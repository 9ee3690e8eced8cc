#ifndef AGENTWARE_REDIS_REPLY_HPP
#define AGENTWARE_REDIS_REPLY_HPP

// Redis's answers (RESP2): a simple string, an error, an integer, a bulk
// string or nil, an array or a nil array; and the error a client throws.

#include <stdexcept>
#include <string>
#include <vector>

namespace agentware::redis {

/// A connection failed, or the server answered a command with an error.
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct reply {
    enum class kind { simple, error, integer, bulk, nil, array };
    kind type = kind::nil;
    std::string text;         ///< simple, error, bulk
    long long integer = 0;    ///< integer
    std::vector<reply> items; ///< array

    bool nil() const noexcept { return type == kind::nil; }
    bool failed() const noexcept { return type == kind::error; }
    /// The reply, or a redis::error with the server's text when it is an error.
    const reply& ok(const char* command) const {
        if (failed()) throw redis::error(std::string("redis: ") + command + ": " + text);
        return *this;
    }
};

} // namespace agentware::redis

#endif
