#ifndef AGENTWARE_MODEL_MODEL_REF_HPP
#define AGENTWARE_MODEL_MODEL_REF_HPP

// A reference to a chat model of any type, for code that calls a model it
// does not own: the hooks of a run reach the run's model through it.

#include <agentware/detail/config.hpp>
#include <agentware/model/async_chat_model.hpp>
#include <agentware/model/chat_model.hpp>

#include <agentware/detail/awaitable_fwd.hpp>

#include <memory>
#include <type_traits>

namespace agentware {

/// Refers to a chat model without owning or copying it: a pointer to the
/// model and two plain function pointers (no allocation, no virtual call
/// through a heap object). The model must outlive the reference; the agent's
/// model outlives every run, so a hook may use the run's `rt.model` freely
/// during the run, and must not keep it afterwards.
///
/// `async_invoke` awaits the model's own `async_invoke` when it has one, and
/// otherwise calls its blocking `invoke` inside the coroutine.
class model_ref {
public:
    model_ref() = default;

    template <class M>
        requires chat_model<M> && (!std::is_same_v<std::remove_cvref_t<M>, model_ref>)
    explicit model_ref(M& model) noexcept : self_(std::addressof(model)), invoke_(&invoke_as<M>) {
        if constexpr (async_chat_model<M>) async_invoke_ = &async_invoke_as<M>;
    }

    /// Calls the model; the caller must know `*this` refers to one.
    model_response invoke(const chat_request& request) const { return invoke_(self_, request); }
    /// Calls the model from a coroutine; keep `request` alive until the await completes.
    AGENTWARE_CORO_DECL AGENTWARE_DECL detail::awaitable<model_response>
    async_invoke(const chat_request& request) const;

    /// True when it refers to a model.
    explicit operator bool() const noexcept { return self_ != nullptr; }

private:
    template <class M>
    static model_response invoke_as(void* self, const chat_request& request) {
        return static_cast<M*>(self)->invoke(request);
    }
    // `Response` is model_response, a parameter so that the awaitable's
    // definition is needed only where a model's coroutine is referred to.
    template <class M, class Response = model_response>
    static detail::awaitable<Response> async_invoke_as(void* self, const chat_request& request) {
        return static_cast<M*>(self)->async_invoke(request);
    }
    // A blocking model in a coroutine: one coroutine for every model type,
    // compiled once with AGENTWARE_SEPARATE_COMPILATION, so that making a
    // reference to a blocking model compiles no coroutine.
    AGENTWARE_CORO_DECL AGENTWARE_DECL static detail::awaitable<model_response>
    invoke_in_coroutine(model_ref self, const chat_request& request);

    void* self_ = nullptr;
    model_response (*invoke_)(void*, const chat_request&) = nullptr;
    detail::awaitable<model_response> (*async_invoke_)(void*,
                                                       const chat_request&) = nullptr; // null: blocking
};

static_assert(chat_model<model_ref>);

} // namespace agentware

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/model/impl/model_ref.ipp>
#endif

#endif
