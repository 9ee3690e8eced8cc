#ifndef AGENTWARE_MODEL_ANY_CHAT_MODEL_HPP
#define AGENTWARE_MODEL_ANY_CHAT_MODEL_HPP

// A chat model whose type is chosen at run time (from configuration).

#include <agentware/model/async_chat_model.hpp>
#include <agentware/model/chat_model.hpp>
#include <agentware/model/model_info.hpp>

#include <boost/asio/awaitable.hpp>

#include <concepts>
#include <memory>
#include <type_traits>
#include <utility>

namespace agentware {

/// Holds any chat_model behind one virtual call. Copies share the model.
/// A model without async_invoke runs its blocking invoke inside the
/// coroutine (blocking the executor's thread for the call).
class any_chat_model {
public:
    any_chat_model() = default;

    template <class M>
        requires chat_model<M> && (!std::same_as<std::remove_cvref_t<M>, any_chat_model>)
    explicit any_chat_model(M model, model_info info = {})
        : self_(std::make_shared<holder<M>>(std::move(model))), info_(std::move(info)) {}

    model_response invoke(const chat_request& request) { return self_->invoke(request); }
    boost::asio::awaitable<model_response> async_invoke(const chat_request& request) {
        return self_->async_invoke(request);
    }
    /// Cancels the calls in flight, when the model supports it.
    void cancel() { self_->cancel(); }
    /// Whether the held model has an async_invoke of its own. The agent's
    /// coroutine loop calls invoke directly when it has not, sparing the
    /// coroutine that async_invoke would wrap it in.
    bool is_async() const noexcept { return self_->is_async(); }

    const model_info& info() const noexcept { return info_; }
    explicit operator bool() const noexcept { return self_ != nullptr; }

    /// The held model, or nullptr when it is not an M.
    template <class M>
    M* target() noexcept {
        auto* h = dynamic_cast<holder<M>*>(self_.get());
        return h ? &h->model : nullptr;
    }

private:
    struct base {
        virtual ~base() = default;
        virtual model_response invoke(const chat_request&) = 0;
        virtual boost::asio::awaitable<model_response> async_invoke(const chat_request&) = 0;
        virtual void cancel() = 0;
        virtual bool is_async() const noexcept = 0;
    };

    template <class M>
    struct holder final : base {
        explicit holder(M m) : model(std::move(m)) {}
        model_response invoke(const chat_request& r) override { return model.invoke(r); }
        boost::asio::awaitable<model_response> async_invoke(const chat_request& r) override {
            if constexpr (async_chat_model<M>)
                return model.async_invoke(r);
            else
                return blocking(r);
        }
        void cancel() override {
            if constexpr (requires { model.cancel(); }) model.cancel();
        }
        bool is_async() const noexcept override { return async_chat_model<M>; }
        boost::asio::awaitable<model_response> blocking(const chat_request& r) { co_return model.invoke(r); }
        M model;
    };

    std::shared_ptr<base> self_;
    model_info info_;
};

static_assert(chat_model<any_chat_model> && async_chat_model<any_chat_model>);

} // namespace agentware

#endif
