#ifndef AGENTWARE_MODEL_DETAIL_PROVIDER_ERROR_HPP
#define AGENTWARE_MODEL_DETAIL_PROVIDER_ERROR_HPP

// Turning a provider's HTTP error answer into a model_error. Shared by the
// OpenAI-compatible and Anthropic clients: their error bodies differ only in
// the fields around "error.message".

#include <agentware/detail/format.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/model/error.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace agentware::detail {

/// Replaces every occurrence of `secret` in `text` (providers sometimes echo
/// the key they rejected).
inline std::string redact(std::string text, std::string_view secret) {
    if (secret.size() < 4) return text;
    for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at))
        text.replace(at, secret.size(), "[redacted]");
    return text;
}

inline bool contains_nocase(std::string_view haystack, std::string_view needle) {
    return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) ==
                      std::tolower(static_cast<unsigned char>(b));
           }) != haystack.end();
}

/// Providers signal an over-long prompt with a code (OpenAI, vLLM) or only in
/// the text (Anthropic, llama.cpp, Ollama); both are checked.
inline bool is_context_length_error(std::string_view code, std::string_view text) {
    if (code == "context_length_exceeded" || code == "string_above_max_length") return true;
    for (std::string_view phrase : {"context length", "context_length", "context window", "maximum context",
                                    "prompt is too long", "too many tokens", "exceeds the available context",
                                    "input is too long", "reduce the length of the messages"})
        if (contains_nocase(text, phrase)) return true;
    return false;
}

/// The kind an HTTP status means.
inline model_error_kind kind_of_status(int status) noexcept {
    if (status == 429) return model_error_kind::rate_limited;
    if (status == 401 || status == 403) return model_error_kind::authentication;
    if (status == 408 || status == 409 || status >= 500) return model_error_kind::server;
    return model_error_kind::bad_request;
}

/// The provider's message and code from an error body, whatever its shape:
/// {"error":{"message","code"|"type"}}, {"error":"text"}, {"message"}, {"detail"}.
struct provider_message {
    std::string text;
    std::string code;
};

inline provider_message read_provider_message(const boost::json::value& v) {
    provider_message out;
    const auto* o = v.if_object();
    if (o == nullptr) return out;
    auto string_at = [](const boost::json::object& obj, std::string_view key) -> std::string {
        if (const auto* s = obj.if_contains(key); s != nullptr && s->is_string())
            return std::string(s->get_string());
        return {};
    };
    const boost::json::object* source = o;
    if (const auto* e = o->if_contains("error")) {
        if (e->is_string()) {
            out.text = std::string(e->get_string());
            return out;
        }
        if (e->is_object()) source = &e->get_object();
    }
    out.text = string_at(*source, "message");
    if (out.text.empty()) out.text = string_at(*source, "detail");
    out.code = string_at(*source, "code");
    if (out.code.empty()) out.code = string_at(*source, "type");
    return out;
}

inline provider_message read_provider_message(std::string_view body) {
    boost::json::error_code ec;
    const boost::json::value v = boost::json::parse(body, ec);
    if (ec) return {excerpt(body, 300), {}};
    provider_message out = read_provider_message(v);
    if (out.text.empty()) out.text = excerpt(body, 300);
    return out;
}

/// The error for an HTTP answer with status `status` and body `body`.
inline model_error http_error(std::string_view provider, int status, std::string_view body,
                              std::string_view secret) {
    provider_message pm = read_provider_message(body);
    pm.text = redact(excerpt(pm.text, 2000), secret);
    model_error_kind kind = kind_of_status(status);
    if ((status == 400 || status == 413 || status == 422) && is_context_length_error(pm.code, pm.text))
        kind = model_error_kind::context_length_exceeded;
    std::string what = detail::format("{}: HTTP {} ({})", provider, status, to_string(kind));
    if (!pm.text.empty()) what += detail::format(": {}", pm.text);
    return model_error(kind, std::move(what), status, std::move(pm.text));
}

/// The error for an error object a provider sent inside a 200 stream.
inline model_error stream_error(std::string_view provider, const boost::json::value& v,
                                std::string_view secret) {
    provider_message pm = read_provider_message(v);
    pm.text = redact(excerpt(pm.text, 2000), secret);
    model_error_kind kind = model_error_kind::server;
    if (is_context_length_error(pm.code, pm.text))
        kind = model_error_kind::context_length_exceeded;
    else if (pm.code == "rate_limit_error" || pm.code == "rate_limit_exceeded")
        kind = model_error_kind::rate_limited;
    else if (pm.code == "invalid_request_error")
        kind = model_error_kind::bad_request;
    return model_error(kind,
                       detail::format("{}: error in stream ({}): {}", provider, to_string(kind), pm.text), 0,
                       std::move(pm.text));
}

inline model_error invalid_response(std::string_view provider, std::string_view why) {
    return model_error(model_error_kind::invalid_response,
                       detail::format("{}: invalid response: {}", provider, why));
}

} // namespace agentware::detail

#endif
