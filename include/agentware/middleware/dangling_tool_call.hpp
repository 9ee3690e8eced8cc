#ifndef AGENTWARE_MIDDLEWARE_DANGLING_TOOL_CALL_HPP
#define AGENTWARE_MIDDLEWARE_DANGLING_TOOL_CALL_HPP

// dangling_tool_call: before each model call, makes the request's history one
// a strict provider accepts: every tool call of an ai message is answered by a
// tool message right after it. Calls without an answer get a placeholder
// error result; answers to no call are dropped; answers elsewhere are moved
// next to their call; blank call ids and names are repaired. Only the request
// changes (DeerFlow's DanglingToolCallMiddleware): the stored state keeps what
// really happened, and the repair is redone for every request, because a
// placeholder must sit right after its ai message, where an append-only
// before_model update cannot put it.

#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/message/message.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <fmt/core.h>

#include <cstddef>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace agentware {

struct dangling_tool_call_options {
    std::size_t max_error_detail = 500;             ///< parser errors quoted in placeholders
    std::string unknown_tool_name = "unknown_tool"; ///< for calls with a blank name
    std::string synthetic_id_prefix = "deerflow_synthetic_tool_call_"; ///< for calls with a blank id

    static constexpr std::string_view config_section = "dangling_tool_call";
    friend bool operator==(const dangling_tool_call_options&, const dangling_tool_call_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                       const dangling_tool_call_options& o) {
    jv = boost::json::object{{"max_error_detail", o.max_error_detail},
                             {"unknown_tool_name", o.unknown_tool_name},
                             {"synthetic_id_prefix", o.synthetic_id_prefix}};
}
inline dangling_tool_call_options tag_invoke(boost::json::value_to_tag<dangling_tool_call_options>,
                                             const boost::json::value& jv) {
    json_reader r(jv, std::string(dangling_tool_call_options::config_section));
    dangling_tool_call_options o;
    r.read("max_error_detail", o.max_error_detail)
        .read("unknown_tool_name", o.unknown_tool_name)
        .read("synthetic_id_prefix", o.synthetic_id_prefix)
        .reject_unknown_keys();
    return o;
}

struct dangling_tool_call {
    using options_type = dangling_tool_call_options;

    static constexpr std::string_view interrupted_text =
        "[Tool call was interrupted and did not return a result.]";
    static constexpr std::string_view invalid_name_text =
        "[Tool call could not be executed because its name was missing or empty. Use one of the available "
        "tool "
        "names when retrying.]";
    static constexpr std::string_view invalid_args_text =
        "[Tool call could not be executed because its arguments were invalid.]";
    static constexpr std::string_view invalid_args_with_error_format =
        "[Tool call could not be executed because its arguments were invalid: {}]";
    static constexpr std::string_view write_file_invalid_args_text =
        "[write_file failed before execution: the tool-call arguments were not valid JSON, so no file was "
        "written. "
        "This often happens when the model tries to write a very large Markdown file in a single tool call, "
        "especially when `content` contains unescaped quotes, inline JSON, backslashes, or code fences. Do "
        "not retry "
        "the same large `write_file` payload for this artifact; provide the report/content directly as "
        "normal "
        "assistant text in your next response. If a file write is still needed later, split the file into "
        "smaller "
        "sections instead of one large payload.";

    dangling_tool_call_options options;

    dangling_tool_call() = default;
    explicit dangling_tool_call(dangling_tool_call_options o) : options(std::move(o)) {}

    /// Forwards the request, with its messages repaired when they need it.
    auto wrap_model_call(auto& req, auto&& next) {
        if (auto patched = patch(req.messages.get(), options)) req.messages = std::move(*patched);
        return next(req);
    }

    /// The repaired history, or nullopt when `messages` needs no repair.
    static std::optional<std::vector<message>> patch(const std::vector<message>& messages,
                                                     const dangling_tool_call_options& opts = {}) {
        if (well_formed(messages)) return std::nullopt; // the common case: no copy at all
        std::vector<message> msgs = messages;
        normalize_ids(msgs, opts);
        std::vector<message> out = rebuild(msgs, opts);
        if (out == messages) return std::nullopt;
        return out;
    }

private:
    enum class defect { none, invalid_name, invalid_args };

    struct declared_call {
        std::string id;
        std::string name; // normalized
        bool name_was_blank = false;
        defect problem = defect::none;
        std::string error;
    };

    static bool args_are_object(std::string_view raw) {
        boost::system::error_code ec;
        boost::json::value v = boost::json::parse(raw, ec);
        return !ec && v.is_object();
    }

    // True when every ai message's calls (with non-blank ids and names, and
    // invalid calls' raw arguments a JSON object) are answered, in any order, by
    // the tool messages right after it, and no tool message answers nothing.
    static bool well_formed(const std::vector<message>& msgs) {
        std::size_t i = 0;
        std::vector<std::string_view> pending;
        while (i < msgs.size()) {
            const message& m = msgs[i];
            if (m.is_tool()) return false; // answers no call right before it
            ++i;
            if (!m.is_ai()) continue;
            pending.clear();
            for (const auto& c : m.tool_calls) {
                if (detail::trim(c.id).empty() || detail::trim(c.name).empty()) return false;
                pending.push_back(c.id);
            }
            for (const auto& c : m.invalid_tool_calls()) {
                if (detail::trim(c.id).empty() || detail::trim(c.name).empty() ||
                    !args_are_object(c.raw_args))
                    return false;
                pending.push_back(c.id);
            }
            for (; i < msgs.size() && msgs[i].is_tool(); ++i) {
                auto it = pending.begin();
                while (it != pending.end() && *it != msgs[i].tool_call_id())
                    ++it;
                if (it == pending.end()) return false;
                pending.erase(it);
            }
            if (!pending.empty()) return false;
        }
        return true;
    }

    struct open_call {
        std::string original_id;
        std::string synthetic_id;
        std::string name;
    };

    // Step 1: blank call ids get synthetic ones; a following result with a
    // blank id is attributed to such a call only when that is unambiguous.
    static void normalize_ids(std::vector<message>& msgs, const dangling_tool_call_options& opts) {
        std::vector<open_call> open;
        std::size_t malformed_results = 0;
        for (std::size_t i = 0; i < msgs.size(); ++i) {
            message& m = msgs[i];
            if (m.is_ai()) {
                open.clear(); // results never answer an earlier turn
                auto relabel = [&](std::string& id, const std::string& name, std::string_view source,
                                   std::size_t pos) {
                    if (!detail::trim(id).empty()) return;
                    std::string synthetic =
                        detail::format("{}{}_{}_{}", opts.synthetic_id_prefix, i, source, pos);
                    open.push_back(open_call{id, synthetic, name});
                    id = std::move(synthetic);
                };
                for (std::size_t p = 0; p < m.tool_calls.size(); ++p)
                    relabel(m.tool_calls[p].id, m.tool_calls[p].name, "call", p);
                if (!m.invalid_tool_calls().empty()) {
                    auto& invalid = m.edit_invalid_tool_calls();
                    for (std::size_t p = 0; p < invalid.size(); ++p)
                        relabel(invalid[p].id, invalid[p].name, "invalid", p);
                }
                malformed_results = 0;
                for (std::size_t j = i + 1; j < msgs.size() && !msgs[j].is_ai(); ++j)
                    if (msgs[j].is_tool() && detail::trim(msgs[j].tool_call_id()).empty())
                        ++malformed_results;
                continue;
            }
            if (!m.is_tool() || !detail::trim(m.tool_call_id()).empty() || open.empty()) continue;
            const std::size_t malformed_calls = open.size();
            std::vector<std::size_t> candidates;
            for (std::size_t k = 0; k < open.size(); ++k) {
                const bool contradicts = !detail::trim(m.name).empty() &&
                                         !detail::trim(open[k].name).empty() && m.name != open[k].name;
                if (open[k].original_id == m.tool_call_id() && !contradicts) candidates.push_back(k);
            }
            std::optional<std::size_t> claim;
            if (candidates.size() == 1)
                claim = candidates.front();
            else if (candidates.size() > 1 && malformed_results == malformed_calls)
                claim = candidates.front();
            if (claim) {
                m.set_tool_call_id(open[*claim].synthetic_id);
                open.erase(open.begin() + static_cast<std::ptrdiff_t>(*claim));
            }
        }
    }

    static std::vector<declared_call> declared_of(const message& ai, const dangling_tool_call_options& opts) {
        std::vector<declared_call> out;
        for (const auto& c : ai.tool_calls) {
            declared_call d{c.id, c.name, detail::trim(c.name).empty(), defect::none, {}};
            if (d.name_was_blank) {
                d.name = opts.unknown_tool_name;
                d.problem = defect::invalid_name;
            }
            out.push_back(std::move(d));
        }
        for (const auto& c : ai.invalid_tool_calls()) {
            declared_call d{c.id, c.name, detail::trim(c.name).empty(), defect::invalid_args, c.error};
            if (d.name_was_blank) {
                d.name = opts.unknown_tool_name;
                d.problem = defect::invalid_name;
            }
            out.push_back(std::move(d));
        }
        return out;
    }

    static std::string placeholder_text(const declared_call& d, const dangling_tool_call_options& opts) {
        switch (d.problem) {
        case defect::invalid_name:
            return std::string(invalid_name_text);
        case defect::invalid_args: {
            const bool has_error = !d.error.empty();
            std::string err = detail::cap_with_ellipsis(d.error, opts.max_error_detail);
            if (d.name == "write_file")
                return std::string(write_file_invalid_args_text) +
                       (has_error ? " Parser error: " + err : "") + "]";
            if (has_error) return fmt::format(fmt::runtime(invalid_args_with_error_format), err);
            return std::string(invalid_args_text);
        }
        case defect::none:
            break;
        }
        return std::string(interrupted_text);
    }

    static message sanitized_ai(message m, const dangling_tool_call_options& opts) {
        for (auto& c : m.tool_calls)
            if (detail::trim(c.name).empty()) c.name = opts.unknown_tool_name;
        if (!m.invalid_tool_calls().empty())
            for (auto& c : m.edit_invalid_tool_calls()) {
                if (detail::trim(c.name).empty()) c.name = opts.unknown_tool_name;
                // Providers reject a call whose arguments are not a JSON object text.
                if (!args_are_object(c.raw_args)) c.raw_args = "{}";
            }
        return m;
    }

    // Steps 2 and 3: every declared call is followed by its first queued
    // result, or by a placeholder; results of no declared call are dropped.
    static std::vector<message> rebuild(const std::vector<message>& msgs,
                                        const dangling_tool_call_options& opts) {
        std::set<std::string, std::less<>> declared_ids;
        for (const auto& m : msgs)
            if (m.is_ai()) {
                for (const auto& c : m.tool_calls)
                    declared_ids.insert(c.id);
                for (const auto& c : m.invalid_tool_calls())
                    declared_ids.insert(c.id);
            }
        std::unordered_map<std::string, std::deque<std::size_t>> results;
        for (std::size_t i = 0; i < msgs.size(); ++i)
            if (msgs[i].is_tool() && declared_ids.count(msgs[i].tool_call_id()))
                results[std::string(msgs[i].tool_call_id())].push_back(i);

        std::vector<message> out;
        out.reserve(msgs.size());
        for (const message& m : msgs) {
            if (m.is_tool()) continue; // re-emitted after its call, or an orphan
            if (!m.is_ai()) {
                out.push_back(m);
                continue;
            }
            out.push_back(sanitized_ai(m, opts));
            for (const declared_call& d : declared_of(m, opts)) {
                auto it = results.find(d.id);
                if (it != results.end() && !it->second.empty()) {
                    message answer = msgs[it->second.front()];
                    it->second.pop_front();
                    if (d.name_was_blank && detail::trim(answer.name).empty()) answer.name = d.name;
                    out.push_back(std::move(answer));
                } else {
                    out.push_back(tool_message(d.id, d.name, placeholder_text(d, opts), tool_status::error));
                }
            }
        }
        return out;
    }
};

} // namespace agentware

#endif
