#ifndef AGENTWARE_MEMORY_MESSAGES_HPP
#define AGENTWARE_MEMORY_MESSAGES_HPP

// What of a conversation the memory subsystem looks at (reference §9.1 steps
// 1 to 4): the user's turns without upload blocks, the final ai answers,
// trivial acknowledgements dropped with their reply; the signals (correction,
// reinforcement, preference, ...) found in the latest user turns; and the
// conversation as the extraction prompt shows it.

#include <agentware/detail/regex.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/message/message.hpp>

#include <boost/json/object.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// The signals detect_memory_signals knows, in the order prompts list them.
inline constexpr std::array<std::string_view, 6> memory_signal_names{
    "correction", "reinforcement", "preference", "identity", "goal", "decision"};

namespace detail {

inline const std::regex& upload_block_regex() {
    static const std::regex re(R"(<(uploaded_files|current_uploads)>[\s\S]*?</\1>\n*)", std::regex::icase);
    return re;
}

/// The text of a message: its text blocks joined by a space (list content).
inline std::string memory_text(const message& m) {
    std::string out;
    bool first = true;
    for (const auto& b : m.content)
        if (b.is_text()) {
            if (!first) out += ' ';
            out += b.text;
            first = false;
        }
    return out;
}

inline std::string strip_upload_blocks(std::string_view text) {
    return detail::regex_replace(text, upload_block_regex(), "");
}

/// A hidden human message kept anyway: a clarification answer (an object
/// `human_input_response` with a string `answer` or `response`).
inline bool well_formed_human_input_response(const message& m) {
    const auto* v = m.metadata.if_contains("human_input_response");
    if (!v || !v->is_object()) return false;
    for (auto key : {"answer", "response", "value"})
        if (const auto* a = v->get_object().if_contains(key); a && a->is_string()) return true;
    return false;
}

inline bool is_trivial_turn(std::string_view text) {
    std::string t(trim(text));
    // Trailing punctuation, ASCII and full-width, goes first. Multi-byte
    // characters are matched as whole sequences (std::regex sees bytes).
    static constexpr std::array<std::string_view, 12> tails{".", "。", ",", "，", "!", "！",
                                                            "?", "？", ";", "；", " ", "\t"};
    for (bool changed = true; changed && !t.empty();) {
        changed = false;
        for (auto tail : tails)
            if (t.ends_with(tail)) {
                t.resize(t.size() - tail.size());
                changed = true;
            }
        while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) {
            t.pop_back();
            changed = true;
        }
    }
    static const std::regex trivial("((?:嗯)+|ok(ay)?|好的(?:呢)?|好(?:的|呀)?|谢谢|感谢|多谢|对|是的|收到|"
                                    "明白|了解|知道了|got it|thanks|thank you|cheers)",
                                    std::regex::icase);
    return !t.empty() && detail::regex_match(t, trivial);
}

} // namespace detail

/// Step 1 and 2: the human turns (upload blocks stripped) and final ai answers
/// worth remembering. A human turn left empty, or trivial, is dropped with the
/// final ai answer that follows it. Tool and system messages never pass.
inline std::vector<message> filter_messages_for_memory(const std::vector<message>& messages) {
    std::vector<message> out;
    bool skip_next_ai = false;
    for (const message& m : messages) {
        if (m.is_human()) {
            if (m.metadata_flag("hide_from_ui") && !detail::well_formed_human_input_response(m)) continue;
            if (m.metadata_flag("dynamic_context_reminder")) continue;
            std::string text = detail::strip_upload_blocks(detail::memory_text(m));
            if (detail::trim(text).empty() || detail::is_trivial_turn(text)) {
                skip_next_ai = true;
                continue;
            }
            message kept = human_message(std::string(detail::trim(text)));
            kept.id = m.id;
            out.push_back(std::move(kept));
            skip_next_ai = false;
        } else if (m.is_ai() && !m.has_tool_calls()) {
            if (skip_next_ai) {
                skip_next_ai = false;
                continue;
            }
            std::string text = detail::memory_text(m);
            if (detail::trim(text).empty()) continue;
            message kept = ai_message(std::move(text));
            kept.id = m.id;
            out.push_back(std::move(kept));
        }
    }
    return out;
}

/// Step 3: at least one human turn and one ai answer.
inline bool worth_remembering(const std::vector<message>& filtered) {
    bool human = false, ai = false;
    for (const auto& m : filtered) {
        human = human || m.is_human();
        ai = ai || m.is_ai();
    }
    return human && ai;
}

namespace detail {

struct memory_signal_patterns {
    std::string_view name;
    std::vector<std::regex> patterns;
};

inline const std::vector<memory_signal_patterns>& memory_signal_table() {
    static const std::vector<memory_signal_patterns> table = [] {
        auto re = [](const char* p) { return std::regex(p, std::regex::icase); };
        std::vector<memory_signal_patterns> t;
        t.push_back({"correction",
                     {re(R"(\bthat('s| is) (wrong|incorrect|not right)\b)"), re(R"(\byou misunderstood\b)"),
                      re(R"(\btry again\b)"), re(R"(\bredo\b)"), re(R"(\bno,? (that'?s )?not what I)"),
                      re(R"(\bactually,? (I|it|we) )"), re("不对"), re("你理解错了"), re("重试"),
                      re("换一种"), re("改用"), re("错了")}});
        t.push_back({"reinforcement",
                     {re(R"(\bperfect([.!?]|$))"), re(R"(\bexactly\s+(right|correct)\b)"),
                      re(R"(\bkeep\s+(doing\s+)?that\b)"),
                      re(R"(\bthat'?s exactly what I (wanted|needed)\b)"), re("完全正确"), re("就是这样")}});
        t.push_back({"preference",
                     {re(R"(\bI (really )?(prefer|like|love|enjoy|favor)\b)"),
                      re(R"(\bI (don't|do not) like\b)"), re(R"(\bplease always\b)"),
                      re(R"(\bplease never\b)"), re("我喜欢"), re("我更喜欢"), re("我偏好")}});
        t.push_back({"identity",
                     {re(R"(\bI am an? \w+)"), re(R"(\bI'm an? \w+)"), re(R"(\bmy name is\b)"),
                      re(R"(\bI work (as|at|for|on)\b)"), re("我是"), re("我叫")}});
        t.push_back({"goal",
                     {re(R"(\bmy goal is\b)"), re(R"(\bI want to\b)"), re(R"(\bI'm trying to\b)"),
                      re(R"(\bI am trying to\b)"), re(R"(\bI plan to\b)"), re("我的目标"), re("我想要"),
                      re("我打算")}});
        t.push_back({"decision",
                     {re(R"(\bwe('ve| have)? decided\b)"), re(R"(\bI('ve| have)? decided\b)"),
                      re(R"(\blet's go with\b)"), re(R"(\bwe'll use\b)"), re("决定"), re("就用")}});
        return t;
    }();
    return table;
}

} // namespace detail

/// Step 4: the signals found in the human messages among the last six
/// filtered messages, in memory_signal_names order, each once.
inline std::vector<std::string> detect_memory_signals(const std::vector<message>& filtered) {
    std::vector<std::string> found;
    const std::size_t start = filtered.size() > 6 ? filtered.size() - 6 : 0;
    for (const auto& group : detail::memory_signal_table()) {
        bool hit = false;
        for (std::size_t i = start; i < filtered.size() && !hit; ++i) {
            if (!filtered[i].is_human()) continue;
            const std::string text = detail::memory_text(filtered[i]);
            for (const auto& p : group.patterns)
                if (detail::regex_search(text, p)) {
                    hit = true;
                    break;
                }
        }
        if (hit) found.emplace_back(group.name);
    }
    return found;
}

namespace detail {

/// `<`, `>` and `&` as entities (quotes untouched).
inline std::string html_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

/// head 500 + marker + tail 500 characters when longer than 1,000.
inline std::string truncate_for_memory(std::string text) {
    if (utf8_chars(text) <= 1000) return text;
    const std::size_t head = utf8_offset(text, 500);
    const std::size_t tail = utf8_offset(text, utf8_chars(text) - 500);
    return text.substr(0, head) + "\n...[truncated]...\n" + text.substr(tail);
}

} // namespace detail

/// The `{conversation}` of the extraction prompt: "User: ..." / "Assistant: ..."
/// blocks joined by a blank line, long texts cut in the middle, HTML-escaped.
inline std::string format_conversation_for_memory(const std::vector<message>& messages) {
    std::string out;
    for (const auto& m : messages) {
        if (!m.is_human() && !m.is_ai()) continue;
        std::string text = detail::memory_text(m);
        if (m.is_human()) text = detail::strip_upload_blocks(text);
        text = std::string(detail::trim(text));
        if (text.empty()) continue;
        if (!out.empty()) out += "\n\n";
        out += m.is_human() ? "User: " : "Assistant: ";
        out += detail::html_escape(detail::truncate_for_memory(std::move(text)));
    }
    return out;
}

} // namespace agentware

#endif
