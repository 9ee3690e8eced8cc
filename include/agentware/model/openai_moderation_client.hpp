#ifndef AGENTWARE_MODEL_OPENAI_MODERATION_CLIENT_HPP
#define AGENTWARE_MODEL_OPENAI_MODERATION_CLIENT_HPP

// A client for the moderation endpoint of OpenAI and of the servers that copy
// it (POST {base_url}/moderations): the check the moderation middleware
// calls. It runs on the model clients' HTTP transport, with their retries,
// backoff, timeouts and error kinds; the API key comes from the environment
// only and never appears in an error.

#include <agentware/detail/config.hpp>
#include <agentware/model/http_transport.hpp>
#include <agentware/model/openai_moderation_format.hpp>
#include <agentware/model/retry.hpp>

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace agentware {

struct openai_moderation_config {
    std::string provider = "openai";                    ///< names the server in error messages
    std::string base_url = "https://api.openai.com/v1"; ///< "/moderations" is appended
    /// The environment variable holding the API key; empty for a server that needs none.
    std::string api_key_env = "OPENAI_API_KEY";
    std::vector<std::pair<std::string, std::string>> headers; ///< extra headers
    http_options http;
    retry_policy retry;
};

namespace detail {
class client_core;
}

/// Calls a moderation endpoint. Copies share one connection pool. Usable
/// directly as `moderation_options::check`.
class openai_moderation_client {
public:
    /// Reads the API key from `config.api_key_env`; throws model_error
    /// (configuration) when it is unset or the base URL is not http(s).
    AGENTWARE_DECL explicit openai_moderation_client(openai_moderation_config config = {});

    /// What the endpoint says about `text`, asking moderation model `model`
    /// (blocks). Throws model_error: HTTP errors, transport failures, and an
    /// answer without a result (invalid_response).
    AGENTWARE_DECL moderation_result check(const std::string& text, const std::string& model) const;

    /// The same on the awaiting coroutine's executor.
    AGENTWARE_DECL boost::asio::awaitable<moderation_result> async_check(std::string text,
                                                                         std::string model) const;

    moderation_result operator()(const std::string& text, const std::string& model) const {
        return check(text, model);
    }

    /// Cancels every check in flight (from any thread); they throw model_error (cancelled).
    AGENTWARE_DECL void cancel();

private:
    std::shared_ptr<detail::client_core> core_;
};

} // namespace agentware

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/model/impl/openai_moderation_client.ipp>
#endif

#endif
