#ifndef AGENTWARE_MODEL_IMPL_HTTP_CHAT_CLIENT_IPP
#define AGENTWARE_MODEL_IMPL_HTTP_CHAT_CLIENT_IPP

#include <agentware/model/detail/client_core.hpp>
#include <agentware/model/http_chat_client.hpp>

#include <boost/asio/awaitable.hpp>

namespace agentware {

model_response http_chat_client::invoke(const chat_request& request) {
    return core_->invoke(request, nullptr);
}

model_response http_chat_client::invoke(const chat_request& request, std::stop_token stop) {
    return core_->invoke(request, &stop);
}

boost::asio::awaitable<model_response> http_chat_client::async_invoke(const chat_request& request) {
    return core_->call(request, nullptr);
}

void http_chat_client::cancel() { core_->cancel_all(); }

void http_chat_client::close_idle_connections() { core_->transport().close_idle_connections(); }

} // namespace agentware

#endif
