#ifndef AGENTWARE_MIDDLEWARE_DETAIL_SIDE_MODEL_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_SIDE_MODEL_HPP

// A wrap hook that asks a model of its own (a tool selector, a tool
// emulator), written once for both agent loops: in the blocking loop the
// model's invoke is called, in the coroutine loop its async_invoke is awaited.
// The model is the middleware's own (any_chat_model) or the run's (model_ref,
// valid for the run, which outlives the hook's coroutine).

#include <agentware/detail/awaitable.hpp>
#include <agentware/model/any_chat_model.hpp>
#include <agentware/model/chat_model.hpp>
#include <agentware/model/model_ref.hpp>

#include <boost/asio/awaitable.hpp>

#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace agentware::detail {

/// The side model's answer, or what it threw.
struct side_answer {
    std::optional<model_response> response;
    std::exception_ptr failure;

    /// What the failure says ("unknown error" for a throw that is not a std::exception).
    std::string failure_text() const {
        try {
            std::rethrow_exception(failure);
        } catch (const std::exception& e) {
            return e.what();
        } catch (...) {
        }
        return "unknown error";
    }

    /// The blocking loop's question: the model's answer or what it threw.
    template <class Model>
    static side_answer of(Model& model, const chat_request& question) {
        side_answer a;
        try {
            a.response.emplace(model.invoke(question));
        } catch (...) {
            a.failure = std::current_exception();
        }
        return a;
    }
};

/// Stands in for a model that is missing: every call throws `why`, so the
/// middleware answers as it does when its model fails.
struct missing_model {
    std::string why;
    model_response invoke(const chat_request&) const { throw std::logic_error(why); }
    boost::asio::awaitable<model_response> async_invoke(const chat_request&) const {
        throw std::logic_error(why);
    }
};

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

template <class R, class Request, class Next, class Model, class Adjust>
R ask_then_next_awaited(Request request, Next next, Model model, chat_request question, Adjust adjust) {
    side_answer a;
    try {
        a.response.emplace(co_await model.async_invoke(question));
    } catch (...) {
        a.failure = std::current_exception();
    }
    adjust(request, std::move(a));
    co_return co_await next(request);
}

template <class R, class Model, class Answer>
R ask_instead_awaited(Model model, chat_request question, Answer answer) {
    side_answer a;
    try {
        a.response.emplace(co_await model.async_invoke(question));
    } catch (...) {
        a.failure = std::current_exception();
    }
    co_return answer(std::move(a));
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/// Asks `model` the `question`, lets `adjust(request, side_answer)` change the
/// request, then forwards it to `next`.
template <class Request, class Next, class Model, class Adjust>
auto ask_then_next(Request& request, Next& next, Model model, chat_request question, Adjust adjust)
    -> decltype(next(request)) {
    using R = decltype(next(request));
    if constexpr (is_awaitable_v<R>) {
        return ask_then_next_awaited<R>(request, next, std::move(model), std::move(question),
                                        std::move(adjust));
    } else {
        adjust(request, side_answer::of(model, question));
        return next(request);
    }
}

/// Asks `model` the `question` and answers with `answer(side_answer)`,
/// without calling `next`.
template <class Request, class Next, class Model, class Answer>
auto ask_instead(Request& request, Next& next, Model model, chat_request question, Answer answer)
    -> decltype(next(request)) {
    using R = decltype(next(request));
    if constexpr (is_awaitable_v<R>) {
        return ask_instead_awaited<R, Model>(std::move(model), std::move(question), std::move(answer));
    } else {
        return answer(side_answer::of(model, question));
    }
}

} // namespace agentware::detail

#endif
