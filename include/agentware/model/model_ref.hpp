#ifndef AGENTWARE_MODEL_MODEL_REF_HPP
#define AGENTWARE_MODEL_MODEL_REF_HPP

// A reference to a chat model of any type, for code that calls a model it
// does not own: the hooks of a run reach the run's model through it.

#include <agentware/model/async_chat_model.hpp>
#include <agentware/model/chat_model.hpp>

#include <boost/asio/awaitable.hpp>

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
    explicit model_ref(M& model) noexcept
        : self_(std::addressof(model)), invoke_(&invoke_as<M>), async_invoke_(&async_invoke_as<M>) {}

    /// Calls the model; the caller must know `*this` refers to one.
    model_response invoke(const chat_request& request) const { return invoke_(self_, request); }
    /// Calls the model from a coroutine; keep `request` alive until the await completes.
    boost::asio::awaitable<model_response> async_invoke(const chat_request& request) const {
        return async_invoke_(self_, request);
    }

    /// True when it refers to a model.
    explicit operator bool() const noexcept { return self_ != nullptr; }

private:
    template <class M>
    static model_response invoke_as(void* self, const chat_request& request) {
        return static_cast<M*>(self)->invoke(request);
    }
    template <class M>
    static boost::asio::awaitable<model_response> async_invoke_as(void* self, const chat_request& request) {
        if constexpr (async_chat_model<M>)
            return static_cast<M*>(self)->async_invoke(request);
        else
            return blocking_as<M>(self, request);
    }
    template <class M>
    static boost::asio::awaitable<model_response> blocking_as(void* self, const chat_request& request) {
        co_return static_cast<M*>(self)->invoke(request);
    }

    void* self_ = nullptr;
    model_response (*invoke_)(void*, const chat_request&) = nullptr;
    boost::asio::awaitable<model_response> (*async_invoke_)(void*, const chat_request&) = nullptr;
};

static_assert(chat_model<model_ref> && async_chat_model<model_ref>);

} // namespace agentware

#endif
