#ifndef AGENTWARE_MODEL_HTTP_CHAT_CLIENT_HPP
#define AGENTWARE_MODEL_HTTP_CHAT_CLIENT_HPP

// What the HTTP model clients (OpenAI-compatible, Anthropic) share: their
// common configuration and their calls — blocking and asynchronous, with
// retries, backoff, streaming and cancellation. A client adds its wire format
// (a detail::chat_protocol) and its own configuration keys.

#include <agentware/detail/config.hpp>
#include <agentware/model/chat_model.hpp>
#include <agentware/model/http_transport.hpp>
#include <agentware/model/retry.hpp>

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

namespace agentware {

/// The configuration every HTTP model client has; each client's config
/// derives from it and sets the provider's defaults.
struct http_client_config {
    std::string provider; ///< names the server in error messages
    std::string base_url;
    std::string model; ///< the provider's model id
    /// The environment variable holding the API key; empty for servers that need none.
    std::string api_key_env;
    std::vector<std::pair<std::string, std::string>> headers; ///< extra headers
    model_settings defaults;                                  ///< under every request's own settings
    http_options http;
    retry_policy retry;
};

namespace detail {
class client_core;
}

/// A chat model over HTTP. Copies share one connection pool and cancel()
/// reaches the calls of all of them. Streams when the request's stream
/// handler has a callback set.
class http_chat_client {
public:
    /// Blocks the calling thread until the answer is complete.
    AGENTWARE_DECL model_response invoke(const chat_request& request);

    /// Like invoke; `stop` requested from another thread cancels the call.
    AGENTWARE_DECL model_response invoke(const chat_request& request, std::stop_token stop);

    /// Runs on the awaiting coroutine's executor; many calls may share one io_context.
    AGENTWARE_DECL boost::asio::awaitable<model_response> async_invoke(const chat_request& request);

    /// Cancels every call in flight (from any thread); they throw model_error (cancelled).
    AGENTWARE_DECL void cancel();

    /// Drops kept-alive connections (do it before destroying an io_context the model was used on).
    AGENTWARE_DECL void close_idle_connections();

protected:
    http_chat_client() = default;
    std::shared_ptr<detail::client_core> core_;
};

} // namespace agentware

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/model/impl/http_chat_client.ipp>
#endif

#endif
