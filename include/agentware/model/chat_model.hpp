#ifndef AGENTWARE_MODEL_CHAT_MODEL_HPP
#define AGENTWARE_MODEL_CHAT_MODEL_HPP

// What a chat model receives and returns, and the concepts a model type meets.

#include <agentware/core/cow_string.hpp>
#include <agentware/core/cow_vector.hpp>
#include <agentware/message/message.hpp>
#include <agentware/message/provider_metadata.hpp> // token_usage
#include <agentware/model/error.hpp>

#include <boost/json/object.hpp>

#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentware {

/// A tool as the model sees it: a name, what it is for, and the JSON schema of its arguments.
struct tool_schema {
    std::string name;
    std::string description;
    boost::json::object parameters;

    friend bool operator==(const tool_schema&, const tool_schema&) = default;
};

/// Sampling and tool-use settings; an unset field means the provider's default.
struct model_settings {
    std::optional<double> temperature;
    std::optional<std::int64_t> max_tokens;
    std::vector<std::string> stop;
    std::string tool_choice; ///< "", "auto", "none", "required" or a tool name
    std::optional<bool> parallel_tool_calls;
    std::string reasoning_effort;   ///< "", "low", "medium", "high"
    bool thinking = false;          ///< extended thinking, where the model supports it
    boost::json::object extra_body; ///< merged into the provider's request body as is

    friend bool operator==(const model_settings&, const model_settings&) = default;
};

/// Receives a streamed answer as it arrives. Either member may be empty.
struct stream_handler {
    std::function<void(std::string_view)> on_text;      ///< answer text deltas
    std::function<void(std::string_view)> on_reasoning; ///< reasoning deltas, kept apart from the answer
    /// Events middlewares report while the call is under way (`{"type": "llm_retry", ...}`):
    /// DeerFlow's custom stream events.
    std::function<void(const boost::json::object&)> on_event;
};

/// One call to a chat model. The messages, the system prompt and the tools are
/// copy-on-write: a request borrows the thread's history and the agent's
/// prompt, so building one each round copies neither.
struct chat_request {
    cow_vector<message> messages;
    cow_string system_prompt; ///< sent before the messages; empty for none
    cow_vector<tool_schema> tools;
    model_settings settings;
    stream_handler stream; ///< when set (and the model streams), deltas go here
    /// Caps the model client's own retries for this call (the HTTP clients'
    /// `retry_policy::max_retries`); unset: the client's policy. A middleware
    /// that retries the call itself sets 0 (llm_error_handling does), so
    /// retries do not multiply.
    std::optional<int> client_max_retries{};
};

/// What a model answers: one ai message and the tokens it cost.
struct model_response {
    message ai;
    token_usage usage;
};

/// A model that answers a request by returning (blocking the calling thread).
/// Failures are thrown as `agentware::model_error`.
template <class M>
concept chat_model = requires(M& m, const chat_request& r) {
    { m.invoke(r) } -> std::convertible_to<model_response>;
};

} // namespace agentware

#endif
