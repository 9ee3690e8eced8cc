#ifndef AGENTWARE_MIDDLEWARE_DETAIL_UNTRUSTED_TEXT_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_UNTRUSTED_TEXT_HPP

// User-derived text placed inside server-made blocks (file names in the
// uploads block) must not be able to open or close the prompt's own tags, or
// forge the user-input boundary. DeerFlow's neutralize_untrusted_tags: the
// blocked tag names are escaped as &lt;...&gt;, the boundary tokens are
// replaced by bracketed look-alikes.

#include <regex>
#include <string>
#include <string_view>

namespace agentware::detail {

inline const std::regex& untrusted_tag_pattern() {
    static const std::regex re(
        R"(<\s*/?\s*(system-reminder|system_reminder|memory|current_date|think|analysis|role|soul|self_update|)"
        R"(thinking_style|clarification_system|critical_reminders|response_style|citations|uploaded_files|)"
        R"(current_uploads|subagent_system|skill_system|skill_index|available_skills|disabled_skills|)"
        R"(memory_tool_system|todo_list_system|durable_context_data|slash_skill_activation|mcp_routing_hints|)"
        R"(available-deferred-tools|goal_continuation|background_task_event|file_editing_workflow|guidelines|)"
        R"(output_format|working_directory|tool_restrictions|system|instruction|important|override|ignore|prompt)\b[^>]*>?)",
        std::regex::ECMAScript | std::regex::icase);
    return re;
}

inline void replace_all(std::string& s, std::string_view from, std::string_view to) {
    for (std::size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
        s.replace(pos, from.size(), to);
}

/// The text with blocked tags escaped and user-input boundary tokens defused.
inline std::string neutralize_untrusted_tags(std::string_view text) {
    std::string out;
    const std::string in(text);
    auto begin = std::sregex_iterator(in.begin(), in.end(), untrusted_tag_pattern());
    std::size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
        const auto& m = *it;
        out.append(in, last, static_cast<std::size_t>(m.position()) - last);
        std::string tag = m.str();
        replace_all(tag, "<", "&lt;");
        replace_all(tag, ">", "&gt;");
        out += tag;
        last = static_cast<std::size_t>(m.position() + m.length());
    }
    out.append(in, last, std::string::npos);
    replace_all(out, "--- BEGIN USER INPUT ---", "[BEGIN USER INPUT]");
    replace_all(out, "--- END USER INPUT ---", "[END USER INPUT]");
    return out;
}

} // namespace agentware::detail

#endif
