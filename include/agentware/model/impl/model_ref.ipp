#ifndef AGENTWARE_MODEL_IMPL_MODEL_REF_IPP
#define AGENTWARE_MODEL_IMPL_MODEL_REF_IPP

#include <agentware/model/model_ref.hpp>

#include <boost/asio/awaitable.hpp>

namespace agentware {

static_assert(async_chat_model<model_ref>);

AGENTWARE_CORO_DEF detail::awaitable<model_response>
model_ref::async_invoke(const chat_request& request) const {
    if (async_invoke_ == nullptr) return invoke_in_coroutine(*this, request);
    return async_invoke_(self_, request);
}

// `self` by value: the reference outlives the caller's copy of it.
AGENTWARE_CORO_DEF detail::awaitable<model_response>
model_ref::invoke_in_coroutine(model_ref self, const chat_request& request) {
    co_return self.invoke(request);
}

} // namespace agentware

#endif
