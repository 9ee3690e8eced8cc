#ifndef AGENTWARE_MODEL_TOKEN_COUNTER_HPP
#define AGENTWARE_MODEL_TOKEN_COUNTER_HPP

// Counting the tokens of a conversation: the provider's own figures where an
// answer reported them, an estimate for everything else.

#include <agentware/message/message.hpp>

#include <boost/json/serialize.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace agentware {

/// How a text-only estimate is made. Four characters per token is the usual
/// rule of thumb for English with BPE tokenizers; images are priced flat.
struct token_estimate_options {
    double chars_per_token = 4.0;
    std::uint64_t tokens_per_message = 3; ///< role and framing
    std::uint64_t tokens_per_image = 765; ///< OpenAI's price of a 1024x1024 image in high detail
};

class token_counter {
public:
    explicit token_counter(token_estimate_options options = {}) : options_(options) {}

    /// Tokens of a text by the estimate.
    std::uint64_t estimate(std::string_view text) const {
        return static_cast<std::uint64_t>(
            std::ceil(static_cast<double>(text.size()) / options_.chars_per_token));
    }

    /// Tokens of one message by the estimate: its content, tool calls and framing.
    std::uint64_t estimate(const message& m) const {
        std::uint64_t n = options_.tokens_per_message + estimate(m.name);
        for (const content_block& b : m.content)
            n += b.is_image() ? options_.tokens_per_image : estimate(b.text);
        for (const tool_call& c : m.tool_calls)
            n += estimate(c.id) + estimate(c.name) + estimate(boost::json::serialize(c.args));
        for (const invalid_tool_call& c : m.invalid_tool_calls())
            n += estimate(c.name) + estimate(c.raw_args);
        n += estimate(m.tool_call_id());
        return n;
    }

    /// Tokens of a conversation. When an ai message carries the usage its
    /// provider reported (provider.usage(), set by the model clients), its
    /// input plus output tokens stand for everything up to it, and only the
    /// messages after it are estimated.
    std::uint64_t count(const std::vector<message>& messages) const {
        std::size_t from = 0;
        std::uint64_t n = 0;
        for (std::size_t i = messages.size(); i-- > 0;) {
            if (const auto reported = reported_tokens(messages[i])) {
                n = *reported;
                from = i + 1;
                break;
            }
        }
        for (std::size_t i = from; i < messages.size(); ++i)
            n += estimate(messages[i]);
        return n;
    }

    /// The input+output tokens a provider reported for this ai message, if any.
    static std::optional<std::uint64_t> reported_tokens(const message& m) {
        if (!m.is_ai()) return std::nullopt;
        const std::uint64_t total = m.provider.usage().total_tokens;
        if (total == 0) return std::nullopt;
        return total;
    }

private:
    token_estimate_options options_;
};

/// The tokens of `messages` with the default counter.
inline std::uint64_t count_tokens(const std::vector<message>& messages) {
    return token_counter{}.count(messages);
}

} // namespace agentware

#endif
