#ifndef AGENTWARE_MIDDLEWARE_PATCH_TOOL_CALLS_HPP
#define AGENTWARE_MIDDLEWARE_PATCH_TOOL_CALLS_HPP

// patch_tool_calls: deepagents' PatchToolCallsMiddleware. Once per run
// (before_agent), a tool call of the stored history that no tool message
// answers gets one right after its ai message: "cancelled" for a call that
// never ran (a new message came in first), "malformed" for a call whose
// arguments could not be parsed. Unlike dangling_tool_call, which repairs
// each model request and leaves the state as it was, this changes the
// stored history, so the answer is there for every later reader.

#include <agentware/message/id.hpp>
#include <agentware/message/message.hpp>

#include <fmt/core.h>

#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace agentware {

struct patch_tool_calls {
    // Text kept for parity with deepagents (reference next.md §2.3).
    static constexpr std::string_view cancelled_format =
        "Tool call {} with id {} was cancelled - another message came in before it could be completed.";
    // Text kept for parity with deepagents (reference next.md §2.3).
    static constexpr std::string_view malformed_format =
        "Tool call {} with id {} could not be executed - arguments were malformed or truncated.";

    /// The history with the missing answers inserted, or nullopt when every call is answered.
    static std::optional<std::vector<message>> patch(const std::vector<message>& messages) {
        std::unordered_set<std::string_view> answered;
        bool any_call = false;
        for (const auto& m : messages) {
            if (m.is_tool()) answered.insert(m.tool_call_id());
            any_call = any_call || (m.is_ai() && (!m.tool_calls.empty() || !m.invalid_tool_calls().empty()));
        }
        if (!any_call) return std::nullopt;
        auto missing = [&](const message& m) {
            for (const auto& c : m.tool_calls)
                if (!answered.count(c.id)) return true;
            for (const auto& c : m.invalid_tool_calls())
                if (!answered.count(c.id)) return true;
            return false;
        };
        bool needed = false;
        for (const auto& m : messages)
            if (m.is_ai() && missing(m)) needed = true;
        if (!needed) return std::nullopt;

        std::vector<message> out;
        out.reserve(messages.size() + 4);
        std::unordered_set<std::string> patched;
        for (const auto& m : messages) {
            out.push_back(m);
            if (!m.is_ai()) continue;
            auto add = [&](const std::string& id, const std::string& name, std::string_view format) {
                if (answered.count(id) || !patched.insert(id).second) return;
                message t = tool_message(id, name, fmt::format(fmt::runtime(format), name, id));
                assign_message_id(t.id);
                out.push_back(std::move(t));
            };
            for (const auto& c : m.tool_calls)
                add(c.id, c.name, cancelled_format);
            for (const auto& c : m.invalid_tool_calls())
                add(c.id, c.name, malformed_format);
        }
        return out;
    }

    void before_agent(auto& state) {
        if (auto p = patch(state.messages)) state.messages = std::move(*p);
    }
};

} // namespace agentware

#endif
