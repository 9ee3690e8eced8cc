#ifndef AGENTWARE_MIDDLEWARE_PROMPT_CACHING_HPP
#define AGENTWARE_MIDDLEWARE_PROMPT_CACHING_HPP

// prompt_caching: asks the provider to cache the prompt's stable prefix
// (langchain_anthropic's AnthropicPromptCachingMiddleware, Python defaults).
//   anthropic: once the request holds `min_messages_to_cache` messages (the
//              system prompt counts as one), a `cache_control` breakpoint
//              {type, ttl} that our Anthropic client puts on the last block
//              of the last message;
//   openai:    OpenAI caches long prompts by itself; this adds the
//              `prompt_cache_key` (the thread id unless one is given, so a
//              thread's calls reach the same cache) and, when set,
//              `prompt_cache_retention`.
// Another provider gets nothing, and `unsupported_model_behavior` says
// whether that is ignored, noted in the run's context (`events`, once per
// run: "warn"), or an error ("raise").
//
// The middleware cannot see which model the agent calls, so `provider` names
// it (the `provider` of the model's configuration).

#include <agentware/agent/run_events.hpp>
#include <agentware/agent/runtime.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/model/chat_model.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace agentware {

struct prompt_caching_options {
    std::string provider = "anthropic";              ///< the provider of the agent's model
    std::string type = "ephemeral";                  ///< Anthropic's cache type
    std::string ttl = "5m";                          ///< "5m" or "1h"
    std::size_t min_messages_to_cache = 0;           ///< Python's default (JS: 3)
    std::string unsupported_model_behavior = "warn"; ///< "ignore", "warn" or "raise"
    std::string openai_cache_key;                    ///< "": the thread id
    std::string openai_cache_retention;              ///< "", "in_memory" or "24h"

    void validate() const {
        if (ttl != "5m" && ttl != "1h") throw std::invalid_argument("ttl must be \"5m\" or \"1h\"");
        if (unsupported_model_behavior != "ignore" && unsupported_model_behavior != "warn" &&
            unsupported_model_behavior != "raise")
            throw std::invalid_argument(
                "unsupported_model_behavior must be \"ignore\", \"warn\" or \"raise\"");
        if (!openai_cache_retention.empty() && openai_cache_retention != "in_memory" &&
            openai_cache_retention != "24h")
            throw std::invalid_argument("openai_cache_retention must be \"in_memory\" or \"24h\"");
    }

    static constexpr std::string_view config_section = "prompt_caching";
    friend bool operator==(const prompt_caching_options&, const prompt_caching_options&) = default;
};

struct prompt_caching {
    static constexpr std::string_view event_name = "prompt_caching_unsupported";

    prompt_caching() = default;
    explicit prompt_caching(prompt_caching_options o) : options_(std::move(o)) { options_.validate(); }

    const prompt_caching_options& options() const noexcept { return options_; }

    bool supported() const noexcept {
        return options_.provider == "anthropic" || options_.provider == "openai";
    }

    auto wrap_model_call(auto& req, auto&& next) {
        apply(req, req.rt);
        return next(req);
    }

    /// Adds the provider's caching settings to `req` (what wrap_model_call does before forwarding).
    void apply(chat_request& req, runtime* rt) const {
        if (options_.provider == "anthropic") {
            const std::size_t count = req.messages.size() + (req.system_prompt.empty() ? 0 : 1);
            if (count < options_.min_messages_to_cache) return;
            req.settings.extra_body["cache_control"] =
                boost::json::object{{"type", options_.type}, {"ttl", options_.ttl}};
        } else if (options_.provider == "openai") {
            std::string key = options_.openai_cache_key;
            if (key.empty() && rt) key = rt->thread_id;
            if (!key.empty()) req.settings.extra_body["prompt_cache_key"] = key;
            if (!options_.openai_cache_retention.empty())
                req.settings.extra_body["prompt_cache_retention"] = options_.openai_cache_retention;
        } else {
            const std::string msg = detail::format(
                "prompt_caching supports Anthropic and OpenAI models, not provider '{}'", options_.provider);
            if (options_.unsupported_model_behavior == "raise") throw std::invalid_argument(msg);
            if (options_.unsupported_model_behavior == "warn" && rt && !has_event(*rt, event_name))
                record_event(rt, "prompt_caching", event_name, msg);
        }
    }

private:
    prompt_caching_options options_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const prompt_caching_options& o) {
    jv = boost::json::object{{"provider", o.provider},
                             {"type", o.type},
                             {"ttl", o.ttl},
                             {"min_messages_to_cache", o.min_messages_to_cache},
                             {"unsupported_model_behavior", o.unsupported_model_behavior},
                             {"openai_cache_key", o.openai_cache_key},
                             {"openai_cache_retention", o.openai_cache_retention}};
}
/// Reads langchain_anthropic's names (`type`, `ttl`, `min_messages_to_cache`,
/// `unsupported_model_behavior`) and ours (`provider`, `openai_cache_key`, `openai_cache_retention`).
inline prompt_caching_options tag_invoke(boost::json::value_to_tag<prompt_caching_options>,
                                         const boost::json::value& jv) {
    json_reader r(jv, std::string(prompt_caching_options::config_section));
    prompt_caching_options o;
    r.read("provider", o.provider)
        .read("type", o.type)
        .read("ttl", o.ttl)
        .read("min_messages_to_cache", o.min_messages_to_cache)
        .read("unsupported_model_behavior", o.unsupported_model_behavior)
        .read("openai_cache_key", o.openai_cache_key)
        .read("openai_cache_retention", o.openai_cache_retention)
        .reject_unknown_keys();
    r.validate(o);
    return o;
}

} // namespace agentware

#endif
