#ifndef AGENTWARE_MESSAGE_FORMAT_HPP
#define AGENTWARE_MESSAGE_FORMAT_HPP
// One-line, human-readable fmt output for messages, for logs and debugging.
// Text is shortened and escaped; metadata is never printed (it may hold
// provider data nobody asked to log).

#include <agentware/detail/format.hpp>
#include <agentware/message/content.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/message/message.hpp>

#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace agentware::detail {

inline constexpr std::size_t shown_text_bytes = 80;
inline constexpr std::size_t shown_args_bytes = 60;
inline constexpr std::size_t shown_url_bytes = 48;

/// Takes no format spec: anything between the braces is a mistake.
struct plain_formatter {
    constexpr auto parse(fmt::format_parse_context& ctx) -> decltype(ctx.begin()) {
        auto it = ctx.begin();
        if (it != ctx.end() && *it != '}') throw fmt::format_error("agentware types take no format spec");
        return it;
    }
};

inline std::string_view role_name(role r) noexcept {
    switch (r) {
    case role::system:
        return "system";
    case role::human:
        return "human";
    case role::ai:
        return "ai";
    case role::tool:
        return "tool";
    case role::remove:
        return "remove";
    }
    return "?";
}

/// Data URLs are summarised by media type and size instead of being dumped.
inline std::string image_summary(const content_block& block) {
    const std::string_view url = block.image_url;
    std::string out = "image(";
    if (url.substr(0, 5) == "data:") {
        const std::size_t comma = url.find(',');
        const std::string_view header =
            url.substr(5, comma == std::string_view::npos ? url.size() : comma - 5);
        out += detail::format("data {}, {} bytes", header.substr(0, header.find(';')), url.size());
    } else {
        out += excerpt(url, shown_url_bytes);
    }
    if (!block.detail.empty()) out += detail::format(", detail={}", block.detail);
    out += ')';
    return out;
}

inline std::string tool_call_summary(const tool_call& call) {
    return detail::format("{}({})", call.name, excerpt(boost::json::serialize(call.args), shown_args_bytes));
}

inline std::string invalid_tool_call_summary(const invalid_tool_call& call) {
    return detail::format("{}(invalid: {})", call.name, excerpt(call.raw_args, shown_args_bytes));
}

} // namespace agentware::detail

/// "system", "human", "ai", "tool" or "remove".
template <>
struct fmt::formatter<agentware::role> : agentware::detail::plain_formatter {
    template <class FormatContext>
    auto format(agentware::role r, FormatContext& ctx) const -> decltype(ctx.out()) {
        return fmt::format_to(ctx.out(), "{}", agentware::detail::role_name(r));
    }
};

/// "ok" or "error".
template <>
struct fmt::formatter<agentware::tool_status> : agentware::detail::plain_formatter {
    template <class FormatContext>
    auto format(agentware::tool_status s, FormatContext& ctx) const -> decltype(ctx.out()) {
        return fmt::format_to(ctx.out(), "{}", s == agentware::tool_status::error ? "error" : "ok");
    }
};

/// A text block as a quoted excerpt, an image as image(url or data summary).
template <>
struct fmt::formatter<agentware::content_block> : agentware::detail::plain_formatter {
    template <class FormatContext>
    auto format(const agentware::content_block& block, FormatContext& ctx) const -> decltype(ctx.out()) {
        namespace d = agentware::detail;
        if (block.is_text())
            return fmt::format_to(ctx.out(), "{}", d::quoted_excerpt(block.text, d::shown_text_bytes));
        return fmt::format_to(ctx.out(), "{}", d::image_summary(block));
    }
};

/// name({"arg":...}) with the arguments shortened.
template <>
struct fmt::formatter<agentware::tool_call> : agentware::detail::plain_formatter {
    template <class FormatContext>
    auto format(const agentware::tool_call& call, FormatContext& ctx) const -> decltype(ctx.out()) {
        return fmt::format_to(ctx.out(), "{}", agentware::detail::tool_call_summary(call));
    }
};

/// name(invalid: <raw arguments>).
template <>
struct fmt::formatter<agentware::invalid_tool_call> : agentware::detail::plain_formatter {
    template <class FormatContext>
    auto format(const agentware::invalid_tool_call& call, FormatContext& ctx) const -> decltype(ctx.out()) {
        return fmt::format_to(ctx.out(), "{}", agentware::detail::invalid_tool_call_summary(call));
    }
};

/// One line per message, e.g.
///   ai[msg-1f...]: "Let me check" -> search({"q":"x"})
///   tool[msg-2a...] <- search#call_abc error: "timeout"
///   human[msg-3b...]: "what is this?" +1 image
///   remove[msg-1f...]   /   remove[all]
template <>
struct fmt::formatter<agentware::message> : agentware::detail::plain_formatter {
    template <class FormatContext>
    auto format(const agentware::message& m, FormatContext& ctx) const -> decltype(ctx.out()) {
        namespace d = agentware::detail;
        auto out = ctx.out();
        if (m.is_remove()) {
            return fmt::format_to(out, "remove[{}]",
                                  m.is_remove_all() ? std::string_view("all") : std::string_view(m.id));
        }
        out = fmt::format_to(out, "{}", d::role_name(m.type));
        if (!m.id.empty()) out = fmt::format_to(out, "[{}]", m.id);
        if (m.is_tool()) {
            out = fmt::format_to(out, " <- {}#{}", m.name, m.tool_call_id());
            if (m.is_error()) out = fmt::format_to(out, " error");
        }

        std::size_t images = 0;
        for (const auto& block : m.content)
            images += block.is_image() ? 1 : 0;
        const std::string text = m.text();
        const bool any_calls = !m.tool_calls.empty() || !m.invalid_tool_calls().empty();
        if (!text.empty() || (images == 0 && !any_calls))
            out = fmt::format_to(out, ": {}", d::quoted_excerpt(text, d::shown_text_bytes));
        if (images != 0) out = fmt::format_to(out, " +{} image{}", images, images == 1 ? "" : "s");
        if (!m.reasoning().empty()) out = fmt::format_to(out, " (reasoning: {} bytes)", m.reasoning().size());

        std::string_view separator = " -> ";
        for (const auto& call : m.tool_calls) {
            out = fmt::format_to(out, "{}{}", separator, d::tool_call_summary(call));
            separator = ", ";
        }
        for (const auto& call : m.invalid_tool_calls()) {
            out = fmt::format_to(out, "{}{}", separator, d::invalid_tool_call_summary(call));
            separator = ", ";
        }
        return out;
    }
};

#endif
