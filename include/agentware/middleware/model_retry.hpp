#ifndef AGENTWARE_MIDDLEWARE_MODEL_RETRY_HPP
#define AGENTWARE_MIDDLEWARE_MODEL_RETRY_HPP

// model_retry: tries a failed model call again, with exponential backoff
// (LangChain's ModelRetryMiddleware). Which failures are retried: by default
// the model errors that say so (`model_error::retryable()`: connection,
// timeout, 429, 5xx) and any other exception; a predicate may decide instead.
// The client's own retries are turned off on the calls it wraps
// (chat_request::client_max_retries = 0): one provider call per attempt.
// When the retries are used up, or the error is not retried:
//   continue: the call answers with an ai message that names the failure;
//   error:    the error goes on up the chain.

#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/exception_name.hpp>
#include <agentware/middleware/detail/retry_loop.hpp>
#include <agentware/model/chat_model.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <exception>
#include <string>
#include <string_view>
#include <utility>

namespace agentware {

struct model_retry_options : retry_options {
    static constexpr std::string_view config_section = "model_retry";
};

struct model_retry {
    model_retry() : model_retry(model_retry_options{}) {}
    explicit model_retry(model_retry_options o) : options_(std::move(o)) { options_.validate(); }

    const model_retry_options& options() const noexcept { return options_; }

    /// "Model call failed after {n} attempt(s) with {type}: {message}".
    static std::string failure_text(const detail::exception_info& e, int attempts) {
        // Text kept for parity with LangChain (next.md §1.6, Python model_retry.py).
        return detail::format("Model call failed after {} with {}: {}", detail::attempts_text(attempts),
                              e.type, e.what);
    }

    auto wrap_model_call(auto& req, auto&& next) -> decltype(next(req)) {
        // The retries are ours: the client tries once per attempt, so N
        // attempts are N provider calls (its own retries would multiply them).
        req.client_max_retries = 0;
        return detail::with_retries(req, next, options_, [this](std::exception_ptr e, int attempts) {
            return exhausted(e, attempts);
        });
    }

    /// What answers a call whose retries are used up (or rethrows, with `error`).
    model_response exhausted(std::exception_ptr e, int attempts) const {
        if (options_.on_failure == exit_behavior::error) std::rethrow_exception(e);
        std::string text;
        if (options_.failure_text) {
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& x) {
                text = options_.failure_text(x);
            } catch (...) {
                text = failure_text(detail::describe_exception(e), attempts);
            }
        } else {
            text = failure_text(detail::describe_exception(e), attempts);
        }
        model_response r;
        r.ai = ai_message(std::move(text));
        r.ai.metadata["model_retry"] = boost::json::object{{"failed", true}, {"attempts", attempts}};
        return r;
    }

private:
    model_retry_options options_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const model_retry_options& o) {
    boost::json::object obj;
    detail::write_retry_options(obj, o);
    jv = std::move(obj);
}

/// Reads LangChain Python's parameter names (`max_retries`, `backoff_factor`,
/// `initial_delay`, `max_delay` in seconds, `jitter`, `on_failure`).
inline model_retry_options tag_invoke(boost::json::value_to_tag<model_retry_options>,
                                      const boost::json::value& jv) {
    json_reader r(jv, std::string(model_retry_options::config_section));
    model_retry_options o;
    detail::read_retry_options(r, o);
    r.reject_unknown_keys();
    r.validate(o);
    return o;
}

} // namespace agentware

#endif
