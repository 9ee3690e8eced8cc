#ifndef AGENTWARE_MODEL_ERROR_HPP
#define AGENTWARE_MODEL_ERROR_HPP

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace agentware {

/// Why a model call failed. Middleware reacts to the kind (a summarizer to
/// `context_length_exceeded`, a retry policy to `rate_limited`).
enum class model_error_kind {
    connection,              ///< could not connect, or the connection dropped
    timeout,                 ///< connect, first-byte or total timeout
    rate_limited,            ///< HTTP 429
    server,                  ///< HTTP 5xx, 408, 409
    authentication,          ///< HTTP 401, 403
    bad_request,             ///< HTTP 400, 404, 422 and other 4xx
    context_length_exceeded, ///< the prompt does not fit the model's context
    invalid_response,        ///< unparsable JSON, unexpected shape, truncated stream
    cancelled,               ///< stopped by the caller
    configuration,           ///< unknown model name, missing API key, ...
};

constexpr std::string_view to_string(model_error_kind k) noexcept {
    switch (k) {
    case model_error_kind::connection:
        return "connection";
    case model_error_kind::timeout:
        return "timeout";
    case model_error_kind::rate_limited:
        return "rate_limited";
    case model_error_kind::server:
        return "server";
    case model_error_kind::authentication:
        return "authentication";
    case model_error_kind::bad_request:
        return "bad_request";
    case model_error_kind::context_length_exceeded:
        return "context_length_exceeded";
    case model_error_kind::invalid_response:
        return "invalid_response";
    case model_error_kind::cancelled:
        return "cancelled";
    case model_error_kind::configuration:
        return "configuration";
    }
    return "unknown";
}

/// A failed model call: its kind, the HTTP status (0 when there was none) and
/// the provider's own error message when it sent one.
class model_error : public std::runtime_error {
public:
    model_error(model_error_kind kind, std::string what, int http_status = 0,
                std::string provider_message = {})
        : std::runtime_error(std::move(what)), kind_(kind), http_status_(http_status),
          provider_message_(std::move(provider_message)) {}

    model_error_kind kind() const noexcept { return kind_; }
    int http_status() const noexcept { return http_status_; }
    const std::string& provider_message() const noexcept { return provider_message_; }

    /// How long the server asked to wait before a retry (Retry-After), when it said.
    std::optional<std::chrono::milliseconds> retry_after() const noexcept { return retry_after_; }
    void set_retry_after(std::optional<std::chrono::milliseconds> delay) noexcept { retry_after_ = delay; }

    /// Worth trying again (after a delay): connection trouble, timeouts, 408/409/429/5xx.
    bool retryable() const noexcept {
        return kind_ == model_error_kind::connection || kind_ == model_error_kind::timeout ||
               kind_ == model_error_kind::rate_limited || kind_ == model_error_kind::server;
    }

private:
    model_error_kind kind_;
    int http_status_;
    std::string provider_message_;
    std::optional<std::chrono::milliseconds> retry_after_;
};

} // namespace agentware

#endif
