#ifndef AGENTWARE_MODEL_ASYNC_CHAT_MODEL_HPP
#define AGENTWARE_MODEL_ASYNC_CHAT_MODEL_HPP

// The asynchronous form of a chat model, for agents that run on Asio.

#include <agentware/model/chat_model.hpp>

#include <agentware/detail/awaitable_fwd.hpp>

#include <concepts>

namespace agentware {

/// A model whose `async_invoke` is awaited from a coroutine running on the
/// caller's executor. The caller keeps the request alive until the await
/// completes. Failures are thrown as `agentware::model_error`; Asio's
/// per-operation cancellation of the awaiting coroutine cancels the call.
template <class M>
concept async_chat_model = requires(M& m, const chat_request& r) {
    { m.async_invoke(r) } -> std::same_as<detail::awaitable<model_response>>;
};

} // namespace agentware

#endif
