#ifndef AGENTWARE_MIDDLEWARE_TOKEN_ACCOUNTING_HPP
#define AGENTWARE_MIDDLEWARE_TOKEN_ACCOUNTING_HPP

// token_accounting: adds up what each run's model answers cost (DeerFlow's
// TokenUsageMiddleware, configuration section `token_usage`). After every
// model answer it takes the usage the provider reported on the message, or,
// when the provider reported none, the token counter's estimate, which it
// then records on the message as `metadata.usage_estimate`; the run's total
// is kept in the runtime context as `token_usage` ({input_tokens,
// output_tokens, total_tokens, estimated}), where the caller reads it from
// run_result::context. The sum lives in the run's own context, so concurrent
// runs share nothing.
//
// (Named token_accounting because `agentware::token_usage` is already the
// type of one answer's figures.)

#include <agentware/agent/runtime.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/run_usage.hpp>
#include <agentware/model/token_counter.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace agentware {

struct token_accounting_options {
    token_estimate_options estimate; ///< how answers without reported usage are estimated

    static constexpr std::string_view config_section = "token_usage";
    friend bool operator==(const token_accounting_options& a, const token_accounting_options& b) {
        return a.estimate.chars_per_token == b.estimate.chars_per_token &&
               a.estimate.tokens_per_message == b.estimate.tokens_per_message &&
               a.estimate.tokens_per_image == b.estimate.tokens_per_image;
    }
};

struct token_accounting {
    static constexpr std::string_view context_key = "token_usage";
    static constexpr std::string_view estimate_key = "usage_estimate";

    token_accounting() = default;
    explicit token_accounting(token_accounting_options o) : options_(o), counter_(o.estimate) {}

    const token_accounting_options& options() const noexcept { return options_; }

    template <class State>
    void after_model(State& state, runtime& rt) {
        if (state.messages.empty() || !state.messages.back().is_ai()) return;
        const std::size_t index = state.messages.size() - 1;
        detail::answer_usage a = detail::usage_of_answer(state.messages, index, counter_);
        if (a.estimated)
            state.messages[index].metadata[estimate_key] =
                boost::json::object{{"input_tokens", a.usage.input_tokens},
                                    {"output_tokens", a.usage.output_tokens},
                                    {"total_tokens", a.usage.total_tokens}};
        auto& slot = rt.context[context_key];
        if (!slot.is_object()) slot = boost::json::object{};
        auto& sum = slot.get_object();
        auto add = [&](std::string_view key, std::uint64_t n) {
            std::uint64_t before = 0;
            if (const auto* v = sum.if_contains(key); v && v->is_uint64())
                before = v->get_uint64();
            else if (v && v->is_int64() && v->get_int64() > 0)
                before = static_cast<std::uint64_t>(v->get_int64());
            sum[key] = before + n;
        };
        add("input_tokens", a.usage.input_tokens);
        add("output_tokens", a.usage.output_tokens);
        add("total_tokens", a.usage.total_tokens);
        const bool before =
            sum.contains("estimated") && sum["estimated"].is_bool() && sum["estimated"].get_bool();
        sum["estimated"] = before || a.estimated;
    }

    /// The total a run left in its context (zero when it has none).
    static token_usage total_of(const boost::json::object& context) {
        token_usage u;
        const auto* v = context.if_contains(context_key);
        if (!v || !v->is_object()) return u;
        auto read = [&](std::string_view key) -> std::uint64_t {
            const auto* n = v->get_object().if_contains(key);
            if (!n) return 0;
            if (n->is_uint64()) return n->get_uint64();
            if (n->is_int64() && n->get_int64() > 0) return static_cast<std::uint64_t>(n->get_int64());
            return 0;
        };
        u.input_tokens = read("input_tokens");
        u.output_tokens = read("output_tokens");
        u.total_tokens = read("total_tokens");
        return u;
    }

private:
    token_accounting_options options_;
    token_counter counter_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                       const token_accounting_options& o) {
    jv = boost::json::object{{"chars_per_token", o.estimate.chars_per_token},
                             {"tokens_per_message", o.estimate.tokens_per_message},
                             {"tokens_per_image", o.estimate.tokens_per_image}};
}

/// DeerFlow's `token_usage:` has only `enabled` (the preset reads it); the
/// estimate's settings are ours.
inline token_accounting_options tag_invoke(boost::json::value_to_tag<token_accounting_options>,
                                           const boost::json::value& jv) {
    json_reader r(jv, std::string(token_accounting_options::config_section));
    token_accounting_options o;
    r.read("chars_per_token", o.estimate.chars_per_token)
        .read("tokens_per_message", o.estimate.tokens_per_message)
        .read("tokens_per_image", o.estimate.tokens_per_image)
        .reject_unknown_keys();
    if (!(o.estimate.chars_per_token > 0)) throw json_error(r.path_of("chars_per_token"), "must be > 0");
    return o;
}

} // namespace agentware

#endif
