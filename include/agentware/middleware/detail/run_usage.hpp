#ifndef AGENTWARE_MIDDLEWARE_DETAIL_RUN_USAGE_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_RUN_USAGE_HPP

// The tokens one model answer cost, for the middlewares that add them up per
// run (token_usage, token_budget): what the provider reported, or else the
// token counter's estimate.

#include <agentware/message/message.hpp>
#include <agentware/message/provider_metadata.hpp>
#include <agentware/model/token_counter.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace agentware::detail {

struct answer_usage {
    token_usage usage;
    bool estimated = false;
};

/// The usage of the ai message `messages[index]`: its provider's figures when
/// it reported any; otherwise an estimate, the messages before it as input
/// (from the last reported usage on, as token_counter::count does) and the
/// answer itself as output.
inline answer_usage usage_of_answer(const std::vector<message>& messages, std::size_t index,
                                    const token_counter& counter = token_counter{}) {
    const message& m = messages[index];
    if (const token_usage reported = m.provider.usage(); !reported.empty()) {
        token_usage u = reported;
        if (u.total_tokens == 0) u.total_tokens = u.input_tokens + u.output_tokens;
        return {u, false};
    }
    token_usage u;
    std::size_t from = 0;
    for (std::size_t i = index; i-- > 0;)
        if (const auto reported = token_counter::reported_tokens(messages[i])) {
            u.input_tokens = *reported;
            from = i + 1;
            break;
        }
    for (std::size_t i = from; i < index; ++i)
        u.input_tokens += counter.estimate(messages[i]);
    u.output_tokens = counter.estimate(m);
    u.total_tokens = u.input_tokens + u.output_tokens;
    return {u, true};
}

/// 1234567 -> "1,234,567" (Python's `{:,}`).
inline std::string group_thousands(std::uint64_t n) {
    std::string digits = std::to_string(n);
    std::string out;
    out.reserve(digits.size() + digits.size() / 3);
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

} // namespace agentware::detail

#endif
