#ifndef AGENTWARE_MIDDLEWARE_GUARDRAIL_HPP
#define AGENTWARE_MIDDLEWARE_GUARDRAIL_HPP

// guardrail: asks a policy provider before every tool call whether it may run
// (DeerFlow's GuardrailMiddleware, OAP-style). A denied call does not run; the
// model gets an error tool message with the provider's reason and is told to
// choose another approach. A provider that fails denies the call unless the
// middleware is configured fail-open: a broken policy must not open the door.

#include <agentware/agent/requests.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/json_values.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <concepts>
#include <ctime>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// Why a provider decided as it did: a machine code (`oap.tool_not_allowed`) and a sentence.
struct guardrail_reason {
    std::string code;
    std::string message;

    friend bool operator==(const guardrail_reason&, const guardrail_reason&) = default;
};

/// A provider's answer.
struct guardrail_decision {
    bool allow = true;
    std::vector<guardrail_reason> reasons; ///< the first one is shown to the model on a denial
    std::string policy_id;                 ///< empty when the provider has none
    boost::json::object metadata;

    static guardrail_decision allowed(std::string code = "oap.allowed", std::string message = {}) {
        return guardrail_decision{true, {guardrail_reason{std::move(code), std::move(message)}}, {}, {}};
    }
    static guardrail_decision denied(std::string code, std::string message) {
        return guardrail_decision{false, {guardrail_reason{std::move(code), std::move(message)}}, {}, {}};
    }
};

/// What a provider is asked: the call, and who makes it (from the run's context).
struct guardrail_request {
    std::string tool_name;
    boost::json::object tool_input;
    std::string agent_id; ///< the middleware's passport
    std::string thread_id;
    bool is_subagent = false;
    std::string timestamp; ///< UTC, ISO 8601
    std::string user_id;
    std::string user_role;
    std::string oauth_provider;
    std::string oauth_id;
    std::string run_id;
    std::string tool_call_id;
    std::string channel_user_id;
    bool is_internal = false;
    boost::json::object authz_attributes;
};

/// A policy: `evaluate(const guardrail_request&) -> guardrail_decision`. It may
/// throw; the middleware then applies its fail-closed / fail-open rule.
template <class P>
concept guardrail_provider = requires(P& p, const guardrail_request& r) {
    { p.evaluate(r) } -> std::convertible_to<guardrail_decision>;
};

/// The built-in provider: an optional allowlist and a denylist of tool names.
/// With an allowlist, only its tools run (an empty allowlist denies everything);
/// a denied name never runs.
struct allowlist_provider {
    static constexpr std::string_view name = "allowlist";

    std::optional<std::vector<std::string>> allowed_tools; ///< nullopt: every tool not denied
    std::vector<std::string> denied_tools;

    friend bool operator==(const allowlist_provider&, const allowlist_provider&) = default;

    guardrail_decision evaluate(const guardrail_request& r) const {
        auto listed = [&](const std::vector<std::string>& names) {
            return std::find(names.begin(), names.end(), r.tool_name) != names.end();
        };
        if (allowed_tools && !listed(*allowed_tools))
            return guardrail_decision::denied("oap.tool_not_allowed",
                                              detail::format("tool '{}' not in allowlist", r.tool_name));
        if (listed(denied_tools))
            return guardrail_decision::denied("oap.tool_not_allowed",
                                              detail::format("tool '{}' is denied", r.tool_name));
        return guardrail_decision::allowed();
    }
};

struct guardrail_options {
    bool fail_closed = true; ///< a provider that throws denies the call
    std::string passport;    ///< this agent's id for the provider (`agent_id`)

    /// DeerFlow's `guardrails:` section; its `enabled` and `provider` keys are
    /// the preset's (which provider, and the provider's own `config`).
    static constexpr std::string_view config_section = "guardrails";
    friend bool operator==(const guardrail_options&, const guardrail_options&) = default;
};

/// The allowlist's JSON form is DeerFlow's `guardrails.provider.config`.
inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const allowlist_provider& p) {
    boost::json::object o;
    if (p.allowed_tools) o["allowed_tools"] = boost::json::value_from(*p.allowed_tools);
    o["denied_tools"] = boost::json::value_from(p.denied_tools);
    jv = std::move(o);
}
inline allowlist_provider tag_invoke(boost::json::value_to_tag<allowlist_provider>,
                                     const boost::json::value& jv) {
    json_reader r(jv);
    allowlist_provider p;
    r.read("allowed_tools", p.allowed_tools).read("denied_tools", p.denied_tools).reject_unknown_keys();
    return p;
}

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const guardrail_options& o) {
    jv = boost::json::object{{"fail_closed", o.fail_closed}, {"passport", o.passport}};
}
inline guardrail_options tag_invoke(boost::json::value_to_tag<guardrail_options>,
                                    const boost::json::value& jv) {
    json_reader r(jv, std::string(guardrail_options::config_section));
    guardrail_options o;
    r.read("fail_closed", o.fail_closed).read("passport", o.passport).reject_unknown_keys();
    return o;
}

template <guardrail_provider Provider = allowlist_provider>
struct guardrail {
    using provider_type = Provider;

    static constexpr std::string_view denial_format =
        "Guardrail denied: tool '{}' was blocked ({}). Reason: {}. Choose an alternative approach.";
    static constexpr std::string_view default_code = "oap.denied";
    static constexpr std::string_view default_message = "blocked by guardrail policy";
    static constexpr std::string_view error_code = "oap.evaluator_error";
    static constexpr std::string_view fail_closed_message = "guardrail provider error (fail-closed)";
    static constexpr std::string_view missing_id = "missing_id";

    Provider provider;
    guardrail_options options;

    guardrail() = default;
    explicit guardrail(Provider p, guardrail_options o = {})
        : provider(std::move(p)), options(std::move(o)) {}

    auto wrap_tool_call(auto& req, auto&& next) -> decltype(next(req)) {
        std::optional<guardrail_decision> decision;
        try {
            decision = guardrail_decision(provider.evaluate(make_request(req)));
        } catch (...) {
            if (!options.fail_closed) return next(req); // fail-open: the call runs
            decision = guardrail_decision::denied(std::string(error_code), std::string(fail_closed_message));
        }
        if (decision->allow) return next(req);
        return short_circuit(req, next, denial(*req.call, *decision));
    }

    /// The provider's question for this call. Throws std::invalid_argument when
    /// the context's `authz_attributes` is not an object (the call is then
    /// treated as if the provider had failed).
    template <class Req>
    guardrail_request make_request(const Req& req) const {
        guardrail_request r;
        r.tool_name = req.call->name;
        r.tool_input = req.call->args;
        r.agent_id = options.passport;
        r.tool_call_id = req.call->id;
        r.timestamp = utc_now();
        if (req.rt) {
            const boost::json::object& ctx = req.rt->context;
            r.thread_id = req.rt->thread_id;
            r.run_id = req.rt->run_id;
            r.is_subagent = detail::flag(ctx, "is_subagent");
            const auto* internal = ctx.if_contains("is_internal");
            r.is_internal = internal && internal->is_bool() && internal->get_bool();
            r.user_id = detail::string_at(ctx, "user_id");
            r.user_role = detail::string_at(ctx, "user_role");
            r.oauth_provider = detail::string_at(ctx, "oauth_provider");
            r.oauth_id = detail::string_at(ctx, "oauth_id");
            r.channel_user_id = detail::string_at(ctx, "channel_user_id");
            if (const auto* authz = ctx.if_contains("authz_attributes"); authz && !authz->is_null()) {
                if (!authz->is_object())
                    throw std::invalid_argument("guardrail: context \"authz_attributes\" must be an object");
                r.authz_attributes = authz->get_object();
            }
        }
        return r;
    }

    /// The tool message a denied call gets.
    static tool_response denial(const tool_call& call, const guardrail_decision& d) {
        std::string code(default_code), why(default_message);
        if (!d.reasons.empty()) {
            if (!d.reasons.front().code.empty()) code = d.reasons.front().code;
            if (!d.reasons.front().message.empty()) why = d.reasons.front().message;
        }
        return tool_response{tool_message(call.id.empty() ? std::string(missing_id) : call.id, call.name,
                                          fmt::format(fmt::runtime(denial_format), call.name, code, why),
                                          tool_status::error),
                             {},
                             false};
    }

private:
    static std::string utc_now() {
        const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
        std::tm tm{};
        gmtime_r(&t, &tm);
        char buf[32];
        std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
        return buf;
    }
};

// JSON forms, so decisions can come from (and go to) remote policy services.
inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const guardrail_reason& r) {
    jv = boost::json::object{{"code", r.code}, {"message", r.message}};
}
inline guardrail_reason tag_invoke(boost::json::value_to_tag<guardrail_reason>,
                                   const boost::json::value& jv) {
    const auto& o = jv.as_object();
    return guardrail_reason{detail::string_at(o, "code"), detail::string_at(o, "message")};
}
inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const guardrail_decision& d) {
    boost::json::object o{{"allow", d.allow}, {"reasons", boost::json::value_from(d.reasons)}};
    if (!d.policy_id.empty()) o["policy_id"] = d.policy_id;
    o["metadata"] = d.metadata;
    jv = std::move(o);
}
inline guardrail_decision tag_invoke(boost::json::value_to_tag<guardrail_decision>,
                                     const boost::json::value& jv) {
    const auto& o = jv.as_object();
    guardrail_decision d;
    d.allow = o.at("allow").as_bool();
    if (const auto* rs = o.if_contains("reasons"))
        d.reasons = boost::json::value_to<std::vector<guardrail_reason>>(*rs);
    d.policy_id = detail::string_at(o, "policy_id");
    if (const auto* md = o.if_contains("metadata"); md && md->is_object()) d.metadata = md->get_object();
    return d;
}

} // namespace agentware

#endif
