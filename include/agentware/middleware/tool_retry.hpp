#ifndef AGENTWARE_MIDDLEWARE_TOOL_RETRY_HPP
#define AGENTWARE_MIDDLEWARE_TOOL_RETRY_HPP

// tool_retry: runs a tool that threw again, with exponential backoff
// (LangChain's ToolRetryMiddleware), for all tools or those listed. What is
// retried by default: any exception except a model_error that is not
// retryable (a tool that calls a model and is refused). When the retries are
// used up, or the error is not retried:
//   continue: the call is answered with an error tool message naming the
//             tool, the attempts and the exception type;
//   error:    the exception goes on up the chain.
// Unknown tools and arguments that fail the schema are answered before any
// tool runs: they are not exceptions and are not retried.

#include <agentware/agent/requests.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/exception_name.hpp>
#include <agentware/middleware/detail/retry_loop.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

struct tool_retry_options : retry_options {
    std::optional<std::vector<std::string>> tools; ///< none: every tool; else only these names

    static constexpr std::string_view config_section = "tool_retry";
    friend bool operator==(const tool_retry_options& a, const tool_retry_options& b) {
        return static_cast<const retry_options&>(a) == static_cast<const retry_options&>(b) &&
               a.tools == b.tools;
    }
};

struct tool_retry {
    tool_retry() : tool_retry(tool_retry_options{}) {}
    explicit tool_retry(tool_retry_options o) : options_(std::move(o)) { options_.validate(); }

    const tool_retry_options& options() const noexcept { return options_; }

    /// "Tool '{name}' failed after {n} attempt(s) with {type}" (no exception
    /// message: the current Python and JS texts leave it out).
    static std::string failure_text(std::string_view tool, const detail::exception_info& e, int attempts) {
        // Text kept for parity with LangChain (next.md §1.6, Python tool_retry.py).
        return detail::format("Tool '{}' failed after {} with {}", tool, detail::attempts_text(attempts),
                              e.type);
    }

    bool applies_to(std::string_view name) const {
        return !options_.tools ||
               std::find(options_.tools->begin(), options_.tools->end(), name) != options_.tools->end();
    }

    auto wrap_tool_call(auto& req, auto&& next) -> decltype(next(req)) {
        if (!applies_to(req.call->name)) return next(req);
        return detail::with_retries(req, next, options_,
                                    [this, call = req.call](std::exception_ptr e, int attempts) {
                                        return exhausted(*call, e, attempts);
                                    });
    }

    /// What answers a call whose retries are used up (or rethrows, with `error`).
    tool_response exhausted(const tool_call& call, std::exception_ptr e, int attempts) const {
        if (options_.on_failure == exit_behavior::error) std::rethrow_exception(e);
        std::string text;
        if (options_.failure_text) {
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& x) {
                text = options_.failure_text(x);
            } catch (...) {
                text = failure_text(call.name, detail::describe_exception(e), attempts);
            }
        } else {
            text = failure_text(call.name, detail::describe_exception(e), attempts);
        }
        return tool_response{
            tool_message(call.id, call.name, std::move(text), tool_status::error), {}, false};
    }

private:
    tool_retry_options options_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const tool_retry_options& o) {
    boost::json::object obj;
    detail::write_retry_options(obj, o);
    obj["tools"] = o.tools ? boost::json::value_from(*o.tools) : boost::json::value(nullptr);
    jv = std::move(obj);
}

/// Reads LangChain Python's parameter names (those of model_retry, and `tools`).
inline tool_retry_options tag_invoke(boost::json::value_to_tag<tool_retry_options>,
                                     const boost::json::value& jv) {
    json_reader r(jv, std::string(tool_retry_options::config_section));
    tool_retry_options o;
    detail::read_retry_options(r, o);
    r.read("tools", o.tools).reject_unknown_keys();
    r.validate(o);
    return o;
}

} // namespace agentware

#endif
