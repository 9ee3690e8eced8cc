#ifndef AGENTWARE_MIDDLEWARE_MODEL_FALLBACK_HPP
#define AGENTWARE_MIDDLEWARE_MODEL_FALLBACK_HPP

// model_fallback: when the model call fails, the same request goes to other
// models, in order, until one answers (LangChain's ModelFallbackMiddleware).
// When all fail, the last one's error goes on up the chain.
//
// The fallbacks are called directly with the request as this hook received
// it: the middlewares listed after model_fallback (inner wrap hooks) run for
// the primary model only. List it last to have every other hook apply to all
// models.

#include <agentware/agent/wrap.hpp>
#include <agentware/detail/awaitable.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/middleware/detail/exception_name.hpp>
#include <agentware/model/any_chat_model.hpp>
#include <agentware/model/chat_model.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// The JSON form: names of configured models (resolved by whoever builds the middleware).
struct model_fallback_options {
    std::vector<std::string> models;

    static constexpr std::string_view config_section = "model_fallback";
    friend bool operator==(const model_fallback_options&, const model_fallback_options&) = default;
};

namespace detail {

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

/// What a failed call throws when no fallback answered: the last failure, or,
/// when the configured models were never given, an error that says so.
inline std::exception_ptr fallback_failure(std::exception_ptr last, const std::vector<any_chat_model>& models,
                                           const std::vector<std::string>& names) {
    if (!models.empty()) return last;
    std::string what = describe_exception(last).what, list;
    if (what.empty()) what = "unknown error";
    for (const auto& n : names)
        list += (list.empty() ? "" : ", ") + n;
    return std::make_exception_ptr(std::logic_error("model_fallback: the model call failed (" + what +
                                                    ") and the fallback models named in the configuration (" +
                                                    list + ") were never given (set_models)"));
}

template <class R, class Request, class Next>
R fallback_awaited(Request request, Next next, std::shared_ptr<std::vector<any_chat_model>> models,
                   const std::vector<std::string>* names) {
    std::exception_ptr failure;
    try {
        co_return co_await next(request);
    } catch (...) {
        failure = std::current_exception();
    }
    const chat_request& plain = request;
    for (auto& m : *models) {
        try {
            co_return co_await m.async_invoke(plain);
        } catch (...) {
            failure = std::current_exception();
        }
    }
    std::rethrow_exception(fallback_failure(failure, *models, *names));
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

} // namespace detail

struct model_fallback {
    /// `models` are tried in order after the agent's own model fails; at least one.
    explicit model_fallback(std::vector<any_chat_model> models) { set_models(std::move(models)); }

    /// From configuration: the models are named; whoever builds the middleware
    /// resolves the names and hands the models over with set_models before the
    /// first run. Until then a failing call fails with an error that says so.
    explicit model_fallback(model_fallback_options o) : options_(std::move(o)) {
        if (options_.models.empty())
            throw std::invalid_argument("model_fallback: at least one fallback model is required");
    }

    /// Replaces the fallback models (at least one, none empty).
    void set_models(std::vector<any_chat_model> models) {
        if (models.empty())
            throw std::invalid_argument("model_fallback: at least one fallback model is required");
        for (const auto& m : models)
            if (!m) throw std::invalid_argument("model_fallback: a fallback model is empty");
        models_ = std::make_shared<std::vector<any_chat_model>>(std::move(models));
    }

    const std::vector<any_chat_model>& models() const noexcept { return *models_; }
    /// The configured names (empty when the models were given in code).
    const model_fallback_options& options() const noexcept { return options_; }

    auto wrap_model_call(auto& req, auto&& next) -> decltype(next(req)) {
        using R = decltype(next(req));
        if constexpr (detail::is_awaitable_v<R>) {
            return detail::fallback_awaited<R>(req, next, models_, &options_.models);
        } else {
            std::exception_ptr failure;
            try {
                return next(req);
            } catch (...) {
                failure = std::current_exception();
            }
            const chat_request& plain = req;
            for (auto& m : *models_) {
                try {
                    return m.invoke(plain);
                } catch (...) {
                    failure = std::current_exception();
                }
            }
            std::rethrow_exception(detail::fallback_failure(failure, *models_, options_.models));
        }
    }

private:
    // Shared by copies and in-flight coroutines; empty until set_models when built from names.
    std::shared_ptr<std::vector<any_chat_model>> models_ = std::make_shared<std::vector<any_chat_model>>();
    model_fallback_options options_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const model_fallback_options& o) {
    jv = boost::json::object{{"models", boost::json::value_from(o.models)}};
}
inline model_fallback_options tag_invoke(boost::json::value_to_tag<model_fallback_options>,
                                         const boost::json::value& jv) {
    json_reader r(jv, std::string(model_fallback_options::config_section));
    model_fallback_options o{r.required<std::vector<std::string>>("models")};
    r.reject_unknown_keys();
    if (o.models.empty()) throw json_error(r.path_of("models"), "at least one fallback model is required");
    return o;
}

} // namespace agentware

#endif
