#ifndef AGENTWARE_MEMORY_INJECTION_HPP
#define AGENTWARE_MEMORY_INJECTION_HPP

// The memory text dynamic_context shows the model (reference §9.3): the
// user's summaries, then facts chosen greedily within a token budget, with
// room kept for the guaranteed categories (corrections) first.

#include <agentware/detail/format.hpp>
#include <agentware/detail/utf8.hpp>
#include <agentware/memory/messages.hpp>
#include <agentware/memory/storage.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace agentware {

struct memory_injection_options {
    std::size_t max_tokens = 2000;
    std::vector<std::string> guaranteed_categories{"correction"};
    std::size_t guaranteed_token_budget = 500;
    bool include_facts = true; ///< false in DeerFlow's `mode: tool`
};

/// DeerFlow's character estimate: (characters - CJK) / 4 + CJK / 2, in code points.
inline std::size_t memory_token_estimate(std::string_view s) {
    std::size_t chars = 0, cjk = 0;
    for (std::size_t i = 0; i < s.size();) {
        const auto [cp, len] = detail::utf8_at(s, i);
        ++chars;
        if ((cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3040 && cp <= 0x30FF) ||
            (cp >= 0xAC00 && cp <= 0xD7A3))
            ++cjk;
        i += len;
    }
    return (chars - cjk) / 4 + cjk / 2;
}

namespace detail {

inline double coerce_confidence(double c) {
    if (!std::isfinite(c)) return 0;
    return std::clamp(c, 0.0, 1.0);
}

inline std::string fact_line(const memory_fact& f) {
    std::string line = detail::format("- [{} | {:.2f}] {}", html_escape(f.category),
                                      coerce_confidence(f.confidence), html_escape(trim(f.content)));
    if (f.category == "correction" && !trim(f.source_error).empty())
        line += detail::format(" (avoid: {})", html_escape(trim(f.source_error)));
    return line;
}

} // namespace detail

/// The body of the `<memory>` block; empty when there is nothing to show.
inline std::string format_memory_for_injection(const user_memory& m, const memory_injection_options& o = {}) {
    std::vector<std::string> sections;
    auto section = [&](std::string_view title, const std::array<memory_summary, 3>& s,
                       const std::array<std::string_view, 3>& labels) {
        std::string out;
        for (std::size_t i = 0; i < 3; ++i)
            if (!detail::trim(s[i].summary).empty())
                out +=
                    detail::format("\n- {}: {}", labels[i], detail::html_escape(detail::trim(s[i].summary)));
        if (!out.empty()) sections.push_back(std::string(title) + out);
    };
    section("User Context:", m.user, {"Work", "Personal", "Current Focus"});
    section("History:", m.history, {"Recent", "Earlier", "Background"});
    std::string prefix;
    for (const auto& s : sections)
        prefix += (prefix.empty() ? "" : "\n\n") + s;

    std::vector<std::string> lines;
    std::size_t guaranteed_tokens = 0;
    if (o.include_facts) {
        std::vector<const memory_fact*> guaranteed, rest;
        for (const auto& f : m.facts) {
            if (detail::trim(f.content).empty()) continue;
            const bool g = std::find(o.guaranteed_categories.begin(), o.guaranteed_categories.end(),
                                     f.category) != o.guaranteed_categories.end();
            (g ? guaranteed : rest).push_back(&f);
        }
        auto by_confidence = [](const memory_fact* a, const memory_fact* b) {
            return detail::coerce_confidence(a->confidence) > detail::coerce_confidence(b->confidence);
        };
        std::stable_sort(guaranteed.begin(), guaranteed.end(), by_confidence);
        std::size_t g = 0;
        for (; g < guaranteed.size(); ++g) {
            std::string line = detail::fact_line(*guaranteed[g]);
            const std::size_t cost = memory_token_estimate("\n" + line);
            if (guaranteed_tokens + cost > o.guaranteed_token_budget) break;
            guaranteed_tokens += cost;
            lines.push_back(std::move(line));
        }
        for (; g < guaranteed.size(); ++g)
            rest.push_back(guaranteed[g]); // those that did not fit compete with the rest
        std::stable_sort(rest.begin(), rest.end(), by_confidence);
        const std::size_t fixed = memory_token_estimate(prefix) + memory_token_estimate("Facts:\n") +
                                  guaranteed_tokens + memory_token_estimate("\n");
        std::size_t budget = o.max_tokens > fixed ? o.max_tokens - fixed : 0, used = 0;
        for (const auto* f : rest) {
            std::string line = detail::fact_line(*f);
            const std::size_t cost = memory_token_estimate("\n" + line);
            if (used + cost > budget) break; // greedy: stop at the first that does not fit
            used += cost;
            lines.push_back(std::move(line));
        }
    }
    std::string facts;
    if (!lines.empty()) {
        facts = "Facts:";
        for (const auto& l : lines)
            facts += "\n" + l;
    }
    auto join = [](const std::string& a, const std::string& b) {
        return a.empty() ? b : b.empty() ? a : a + "\n\n" + b;
    };
    std::string out = join(prefix, facts);
    if (memory_token_estimate(out) > o.max_tokens + guaranteed_tokens && !prefix.empty()) {
        const std::size_t keep = static_cast<std::size_t>(double(o.max_tokens) * 4 * 0.95);
        std::string clipped(detail::first_code_points(prefix, keep));
        while (!clipped.empty() && detail::is_space(clipped.back()))
            clipped.pop_back();
        out = join(clipped + "\n...", facts);
    }
    return out;
}

/// The block as dynamic_context injects it: "<memory>\n{body}\n</memory>", or "" for an empty body.
inline std::string memory_block(std::string_view body) {
    if (detail::trim(body).empty()) return {};
    return detail::format("<memory>\n{}\n</memory>", body);
}

} // namespace agentware

#endif
