#ifndef AGENTWARE_DETAIL_PROMPT_TEXT_HPP
#define AGENTWARE_DETAIL_PROMPT_TEXT_HPP

// Text helpers of the middlewares that build prompts from conversation text
// and read model answers (summarization, durable_context, title).

#include <cstddef>
#include <string>
#include <string_view>

namespace agentware::detail {

// `<`, `>` and `&` as entities (Python's html.escape with quote=False).
inline std::string escape_html(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        if (c == '<')
            out += "&lt;";
        else if (c == '>')
            out += "&gt;";
        else if (c == '&')
            out += "&amp;";
        else
            out += c;
    }
    return out;
}

// Removes <think>...</think> blocks (an unclosed one to the end).
inline std::string strip_think(std::string_view s) {
    std::string out;
    std::size_t at = 0;
    while (at < s.size()) {
        std::size_t open = s.find("<think>", at);
        if (open == std::string_view::npos) {
            out += s.substr(at);
            break;
        }
        out += s.substr(at, open - at);
        std::size_t close = s.find("</think>", open);
        if (close == std::string_view::npos) break;
        at = close + 8;
    }
    return out;
}

} // namespace agentware::detail

#endif
