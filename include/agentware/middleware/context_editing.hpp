#ifndef AGENTWARE_MIDDLEWARE_CONTEXT_EDITING_HPP
#define AGENTWARE_MIDDLEWARE_CONTEXT_EDITING_HPP

// context_editing: keeps a long conversation within bounds by editing what
// the model is sent, never what is stored (LangChain's
// ContextEditingMiddleware). Its one edit, `clear_tool_uses`: when the
// request's messages count more than `trigger` tokens, the oldest tool results
// (all but the latest `keep`) are replaced by a placeholder, oldest first,
// skipping excluded tools and results cleared already, until `clear_at_least`
// tokens are freed (0: clear them all). `clear_tool_inputs` also empties the
// arguments of the calls they answer.

#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/model/token_counter.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// LangChain's ClearToolUsesEdit (Python names and defaults).
struct clear_tool_uses_edit {
    std::uint64_t trigger = 100000;   ///< edit when the request counts more tokens than this
    std::uint64_t clear_at_least = 0; ///< stop once this many tokens are freed; 0: clear every candidate
    std::size_t keep = 3;             ///< the latest tool results never cleared
    bool clear_tool_inputs = false;   ///< also empty the arguments of the cleared calls
    std::vector<std::string> exclude_tools;
    std::string placeholder = "[cleared]"; ///< replaces a cleared result's content

    friend bool operator==(const clear_tool_uses_edit&, const clear_tool_uses_edit&) = default;
};

struct context_editing_options {
    std::vector<clear_tool_uses_edit> edits{clear_tool_uses_edit{}};
    /// "approximate": every message estimated (4 characters a token); "model":
    /// the usage the provider reported for the last answer, plus estimates after it.
    std::string token_count_method = "approximate";

    static constexpr std::string_view config_section = "context_editing";
    friend bool operator==(const context_editing_options&, const context_editing_options&) = default;
};

struct context_editing {
    static constexpr std::string_view metadata_key = "context_editing";

    context_editing() = default;
    explicit context_editing(context_editing_options o) : options_(std::move(o)) {
        if (options_.token_count_method != "approximate" && options_.token_count_method != "model")
            throw std::invalid_argument(
                "context_editing: token_count_method must be 'approximate' or 'model'");
    }

    const context_editing_options& options() const noexcept { return options_; }

    std::uint64_t count(const std::vector<message>& messages, std::string_view system_prompt) const {
        token_counter counter;
        std::uint64_t n = system_prompt.empty() ? 0 : counter.estimate(system_prompt) + 3;
        if (options_.token_count_method == "model") return n + counter.count(messages);
        for (const auto& m : messages)
            n += counter.estimate(m);
        return n;
    }

    /// Applies the edits to `messages` in place; true when anything changed.
    bool apply(std::vector<message>& messages, std::string_view system_prompt = {}) const {
        bool changed = false;
        for (const auto& e : options_.edits)
            changed = apply(e, messages, system_prompt) || changed;
        return changed;
    }

    auto wrap_model_call(auto& req, auto&& next) {
        const std::string_view prompt = req.system_prompt;
        if (count(req.messages.get(), prompt) > min_trigger()) {
            std::vector<message> edited = req.messages.get();
            if (apply(edited, prompt)) req.messages = std::move(edited);
        }
        return next(req);
    }

private:
    std::uint64_t min_trigger() const {
        std::uint64_t t = UINT64_MAX;
        for (const auto& e : options_.edits)
            t = std::min(t, e.trigger);
        return t;
    }

    static bool cleared(const message& m) {
        const auto* ce = m.metadata.if_contains(metadata_key);
        if (!ce || !ce->is_object()) return false;
        const auto* c = ce->as_object().if_contains("cleared");
        return c && c->is_bool() && c->as_bool();
    }

    bool apply(const clear_tool_uses_edit& e, std::vector<message>& messages, std::string_view prompt) const {
        const std::uint64_t tokens = count(messages, prompt);
        if (tokens <= e.trigger) return false;
        std::vector<std::size_t> candidates;
        for (std::size_t i = 0; i < messages.size(); ++i)
            if (messages[i].is_tool()) candidates.push_back(i);
        if (e.keep >= candidates.size())
            candidates.clear();
        else
            candidates.resize(candidates.size() - e.keep);
        bool changed = false;
        for (std::size_t idx : candidates) {
            message& tm = messages[idx];
            if (cleared(tm)) continue;
            std::size_t ai = idx;
            while (ai > 0 && !messages[ai - 1].is_ai())
                --ai;
            if (ai == 0) continue;
            message& caller = messages[ai - 1];
            auto call = std::find_if(caller.tool_calls.begin(), caller.tool_calls.end(),
                                     [&](const tool_call& c) { return c.id == tm.tool_call_id(); });
            if (call == caller.tool_calls.end()) continue;
            const std::string& name = tm.name.empty() ? call->name : tm.name;
            if (std::find(e.exclude_tools.begin(), e.exclude_tools.end(), name) != e.exclude_tools.end())
                continue;
            tm.content = {text_block(e.placeholder)};
            tm.metadata[metadata_key] =
                boost::json::object{{"cleared", true}, {"strategy", "clear_tool_uses"}};
            if (e.clear_tool_inputs) {
                call->args = {};
                auto& meta = caller.metadata[metadata_key];
                if (!meta.is_object()) meta = boost::json::object{};
                auto& ids = meta.as_object()["cleared_tool_inputs"];
                if (!ids.is_array()) ids = boost::json::array{};
                ids.as_array().emplace_back(tm.tool_call_id());
            }
            changed = true;
            if (e.clear_at_least > 0) {
                const std::uint64_t now = count(messages, prompt);
                if ((tokens > now ? tokens - now : 0) >= e.clear_at_least) break;
            }
        }
        return changed;
    }

    context_editing_options options_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const clear_tool_uses_edit& e) {
    jv = boost::json::object{{"type", "clear_tool_uses"},
                             {"trigger", e.trigger},
                             {"clear_at_least", e.clear_at_least},
                             {"keep", e.keep},
                             {"clear_tool_inputs", e.clear_tool_inputs},
                             {"exclude_tools", boost::json::value_from(e.exclude_tools)},
                             {"placeholder", e.placeholder}};
}
inline clear_tool_uses_edit tag_invoke(boost::json::value_to_tag<clear_tool_uses_edit>,
                                       const boost::json::value& jv) {
    json_reader r(jv);
    clear_tool_uses_edit e;
    if (auto type = r.optional<std::string>("type"))
        json_check_choice(r.path_of("type"), *type, {"clear_tool_uses"});
    r.read("trigger", e.trigger)
        .read("clear_at_least", e.clear_at_least)
        .read("keep", e.keep)
        .read("clear_tool_inputs", e.clear_tool_inputs)
        .read("exclude_tools", e.exclude_tools)
        .read("placeholder", e.placeholder)
        .reject_unknown_keys();
    return e;
}

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                       const context_editing_options& o) {
    jv = boost::json::object{{"edits", boost::json::value_from(o.edits)},
                             {"token_count_method", o.token_count_method}};
}
/// Reads LangChain Python's names: `edits` (a list of `clear_tool_uses` edits,
/// `"type"` optional) and `token_count_method`.
inline context_editing_options tag_invoke(boost::json::value_to_tag<context_editing_options>,
                                          const boost::json::value& jv) {
    json_reader r(jv, std::string(context_editing_options::config_section));
    context_editing_options o;
    r.read("edits", o.edits).read("token_count_method", o.token_count_method).reject_unknown_keys();
    json_check_choice(r.path_of("token_count_method"), o.token_count_method, {"approximate", "model"});
    return o;
}

} // namespace agentware

#endif
