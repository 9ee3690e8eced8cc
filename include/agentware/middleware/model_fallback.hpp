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

template <class R, class Request, class Next>
R fallback_awaited(Request request, Next next, std::shared_ptr<std::vector<any_chat_model>> models) {
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
    std::rethrow_exception(failure);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

} // namespace detail

struct model_fallback {
    /// `models` are tried in order after the agent's own model fails; at least one.
    explicit model_fallback(std::vector<any_chat_model> models)
        : models_(std::make_shared<std::vector<any_chat_model>>(std::move(models))) {
        if (models_->empty())
            throw std::invalid_argument("model_fallback: at least one fallback model is required");
        for (const auto& m : *models_)
            if (!m) throw std::invalid_argument("model_fallback: a fallback model is empty");
    }

    const std::vector<any_chat_model>& models() const noexcept { return *models_; }

    auto wrap_model_call(auto& req, auto&& next) -> decltype(next(req)) {
        using R = decltype(next(req));
        if constexpr (detail::is_awaitable_v<R>) {
            return detail::fallback_awaited<R>(req, next, models_);
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
            std::rethrow_exception(failure);
        }
    }

private:
    std::shared_ptr<std::vector<any_chat_model>> models_; // shared by copies and in-flight coroutines
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
