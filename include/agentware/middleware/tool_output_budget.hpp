#ifndef AGENTWARE_MIDDLEWARE_TOOL_OUTPUT_BUDGET_HPP
#define AGENTWARE_MIDDLEWARE_TOOL_OUTPUT_BUDGET_HPP

// tool_output_budget: a huge tool result does not flood the context
// (DeerFlow's ToolOutputBudgetMiddleware). A result longer than
// `externalize_min_chars` is saved under the thread's outputs
// (/mnt/user-data/outputs/.tool-results/{tool}-{id12}.{ext}) and replaced by a
// synopsis: its size and kind, a head and a tail sample, and where to read
// the rest with read_file. When it cannot be saved, a result longer than
// `fallback_max_chars` is cut to its head and tail instead. In every model
// request, tool messages of the history longer than `fallback_max_chars`
// are cut the same way (request only).

#include <agentware/agent/requests.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/core/fields.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/detail/hash.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/detail/output_limits.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/message/id.hpp>
#include <agentware/message/message.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>
#include <agentware/thread/fields.hpp>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

struct tool_output_budget_options {
    std::size_t externalize_min_chars = 12000; ///< results longer than this are saved and summarised
    std::size_t preview_head_chars = 2000;
    std::size_t preview_tail_chars = 1000;
    std::size_t fallback_max_chars = 30000; ///< when saving fails: results longer than this are cut
    std::size_t fallback_head_chars = 8000;
    std::size_t fallback_tail_chars = 3000;
    std::string storage_subdir = ".tool-results"; ///< under the thread's outputs directory
    std::vector<std::string> exempt_tools{"read_file", "read_file_tool"};
    std::map<std::string, std::size_t, std::less<>> tool_overrides; ///< per-tool externalize_min_chars

    static constexpr std::string_view config_section = "tool_output";
    friend bool operator==(const tool_output_budget_options&, const tool_output_budget_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                       const tool_output_budget_options& o) {
    boost::json::array exempt;
    for (const auto& t : o.exempt_tools)
        exempt.emplace_back(t);
    boost::json::object overrides;
    for (const auto& [k, v] : o.tool_overrides)
        overrides[k] = v;
    jv = boost::json::object{{"externalize_min_chars", o.externalize_min_chars},
                             {"preview_head_chars", o.preview_head_chars},
                             {"preview_tail_chars", o.preview_tail_chars},
                             {"fallback_max_chars", o.fallback_max_chars},
                             {"fallback_head_chars", o.fallback_head_chars},
                             {"fallback_tail_chars", o.fallback_tail_chars},
                             {"storage_subdir", o.storage_subdir},
                             {"exempt_tools", std::move(exempt)},
                             {"tool_overrides", std::move(overrides)}};
}
inline tool_output_budget_options tag_invoke(boost::json::value_to_tag<tool_output_budget_options>,
                                             const boost::json::value& jv) {
    json_reader r(jv, std::string(tool_output_budget_options::config_section));
    tool_output_budget_options o;
    r.read("externalize_min_chars", o.externalize_min_chars)
        .read("preview_head_chars", o.preview_head_chars)
        .read("preview_tail_chars", o.preview_tail_chars)
        .read("fallback_max_chars", o.fallback_max_chars)
        .read("fallback_head_chars", o.fallback_head_chars)
        .read("fallback_tail_chars", o.fallback_tail_chars)
        .read("storage_subdir", o.storage_subdir)
        .read("exempt_tools", o.exempt_tools)
        .read("tool_overrides", o.tool_overrides)
        .reject_unknown_keys();
    if (o.storage_subdir.empty() || o.storage_subdir.find("..") != std::string::npos ||
        o.storage_subdir.front() == '/')
        throw json_error(r.path_of("storage_subdir"), "must be a relative directory name without \"..\"");
    return o;
}

namespace detail {

/// The first `head` and last `tail` code points of `text` with a note of what
/// was left out between them (text of at most head + tail code points comes back whole).
inline std::string head_tail_cut(std::string_view text, std::size_t head, std::size_t tail) {
    const std::size_t chars = utf8_chars(text);
    if (chars <= head + tail) return std::string(text);
    const std::size_t head_end = utf8_offset(text, head);
    const std::size_t tail_start = utf8_offset(text, chars - tail);
    return detail::format("{}\n\n... [{} characters omitted] ...\n\n{}", text.substr(0, head_end),
                          chars - head - tail, text.substr(tail_start));
}

/// What kind of text a result is: "json", "text", or "binary" (not UTF-8, or NUL bytes).
inline std::string_view result_kind(std::string_view text) {
    if (!is_utf8_text(text) || text.find('\0') != std::string_view::npos) return "binary";
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
        boost::system::error_code ec;
        (void)boost::json::parse(text, ec);
        if (!ec) return "json";
    }
    return "text";
}

} // namespace detail

struct tool_output_budget {
    using state_fields = fields<thread_data_field>;

    tool_output_budget_options options;

    tool_output_budget() = default;
    explicit tool_output_budget(tool_output_budget_options o) : options(std::move(o)) {}

    std::size_t threshold_for(std::string_view tool) const {
        if (auto it = options.tool_overrides.find(tool); it != options.tool_overrides.end())
            return it->second;
        return options.externalize_min_chars;
    }
    bool exempt(std::string_view tool) const {
        return std::find(options.exempt_tools.begin(), options.exempt_tools.end(), tool) !=
               options.exempt_tools.end();
    }

    auto wrap_tool_call(auto& req, auto&& next) -> decltype(next(req)) {
        if (exempt(req.call->name)) return next(req);
        std::optional<thread_paths> td;
        if (req.state)
            if (const auto& t = get<thread_data_field>(*req.state)) td = *t;
        return map_response(req, next, [this, td = std::move(td)](tool_response r) {
            apply(r.msg, td ? &*td : nullptr);
            return r;
        });
    }

    /// Oversized tool messages of the history are cut in the request.
    auto wrap_model_call(auto& req, auto&& next) -> decltype(next(req)) {
        const auto& msgs = req.messages;
        for (std::size_t i = 0; i < msgs.size(); ++i) {
            const message& m = msgs[i];
            if (!m.is_tool() || exempt(m.name)) continue;
            std::size_t bytes = 0;
            for (const auto& b : m.content)
                bytes += b.text.size();
            if (bytes <= options.fallback_max_chars)
                continue; // fewer bytes than the limit: fewer characters too
            const std::string text = m.text();
            if (detail::utf8_chars(text) <= options.fallback_max_chars) continue;
            message& e = req.messages.edit()[i];
            e.content = detail::text_content(
                detail::head_tail_cut(text, options.fallback_head_chars, options.fallback_tail_chars));
        }
        return next(req);
    }

    /// Externalises or cuts one tool result in place; the outcome ("externalized",
    /// "truncated" or "" when untouched) is also stamped into metadata["tool_output"].
    std::string apply(message& m, const thread_paths* td) const {
        std::size_t bytes = 0;
        for (const auto& b : m.content)
            bytes += b.text.size();
        const std::size_t limit = threshold_for(m.name);
        if (bytes <= limit) return {};
        const std::string text = m.text();
        const std::size_t chars = detail::utf8_chars(text);
        if (chars <= limit) return {};
        const std::string_view kind = detail::result_kind(text);
        if (td) {
            if (auto saved = save(text, m.name, kind, *td)) {
                m.content = detail::text_content(synopsis(text, chars, kind, m.name, *saved));
                m.metadata["tool_output"] =
                    boost::json::object{{"externalized", true}, {"path", *saved}, {"original_chars", chars}};
                return "externalized";
            }
        }
        if (chars <= options.fallback_max_chars) return {};
        m.content = detail::text_content(
            kind == "binary"
                ? detail::format("[binary output of {} bytes omitted: it could not be saved]", text.size())
                : detail::head_tail_cut(text, options.fallback_head_chars, options.fallback_tail_chars));
        m.metadata["tool_output"] = boost::json::object{{"truncated", true}, {"original_chars", chars}};
        return "truncated";
    }

    /// Saves the result; its virtual path, or nullopt when it could not be written.
    std::optional<std::string> save(std::string_view text, std::string_view tool, std::string_view kind,
                                    const thread_paths& td) const {
        namespace fs = std::filesystem;
        if (td.outputs_path.empty()) return std::nullopt;
        std::string safe_tool;
        for (char c : tool)
            safe_tool += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
        if (safe_tool.empty()) safe_tool = "tool";
        // Named by its content: the same output gives the same name on every run
        // (a replay reads back what the model read), and is kept once.
        const std::string id(detail::sha256_hex_digits(text).data(), 12);
        const std::string ext = kind == "json" ? "json" : kind == "binary" ? "bin" : "txt";
        const std::string name = detail::format("{}-{}.{}", safe_tool, id, ext);
        std::error_code ec;
        const fs::path dir = fs::path(td.outputs_path) / options.storage_subdir;
        fs::create_directories(dir, ec);
        if (ec) return std::nullopt;
        {
            std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
            if (!out) return std::nullopt;
            out.write(text.data(), static_cast<std::streamsize>(text.size()));
            if (!out) return std::nullopt;
        }
        return detail::format("{}/{}/{}", detail::virtual_outputs, options.storage_subdir, name);
    }

    /// The text that replaces an externalised result (our wording; see the docs page).
    std::string synopsis(std::string_view text, std::size_t chars, std::string_view kind,
                         std::string_view tool, std::string_view path) const {
        std::string out =
            detail::format("[Tool output saved] The {} result is {} characters of {} — too large to show "
                           "in full. The complete output is at {}.\n",
                           tool, chars,
                           kind == "json"     ? "JSON"
                           : kind == "binary" ? "binary data"
                                              : "text",
                           path);
        if (kind != "binary") {
            const std::size_t head_end = detail::utf8_offset(text, options.preview_head_chars);
            const std::size_t tail_start = detail::utf8_offset(
                text, chars > options.preview_tail_chars ? chars - options.preview_tail_chars : 0);
            out += detail::format("\n--- first {} characters ---\n{}\n", options.preview_head_chars,
                                  text.substr(0, head_end));
            if (options.preview_tail_chars > 0)
                out += detail::format("\n--- last {} characters ---\n{}\n", options.preview_tail_chars,
                                      text.substr(std::max(tail_start, head_end)));
        }
        out += detail::format(
            "\nTo see more, call read_file with path \"{}\" and a start_line/end_line range.", path);
        return out;
    }
};

} // namespace agentware

#endif
