#ifndef AGENTWARE_MIDDLEWARE_TOOL_ERROR_HANDLING_HPP
#define AGENTWARE_MIDDLEWARE_TOOL_ERROR_HANDLING_HPP

// tool_error_handling: a tool (or an inner tool wrapper) that throws does not
// end the run: the call gets an error tool message that names the failure and
// tells the model to go on (DeerFlow's ToolErrorHandlingMiddleware). Every
// plain tool result is also classified (success, partial results, or an error
// of a kind: auth, rate_limited, transient, ...) into
// `metadata["deerflow_tool_meta"]` (DeerFlow's key, which it keeps in the tool
// message's additional_kwargs), so later middlewares and the UI can react
// without parsing the text again.

#include <agentware/agent/requests.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/json_values.hpp>
#include <agentware/thread/fields.hpp>
#include <agentware/tool/invalid_arguments.hpp>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <fmt/core.h>

#include <array>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#define AGENTWARE_HAS_CXXABI 1
#endif

namespace agentware {

/// How a tool result reads: what kind of problem, if any, and what the model should do next.
struct tool_result_meta {
    std::string status;                    ///< "success", "partial_success" or "error"
    std::optional<std::string> error_type; ///< none (JSON null) unless an error: auth, rate_limited, ...
    bool recoverable_by_model = true;
    std::string recommended_next_action; ///< continue, rewrite_query, try_alternative, summarize, stop
    std::string source;                  ///< "exception", "tool_return" or "content_analysis"

    boost::json::object to_json() const {
        return {{"status", status},
                {"error_type", error_type ? boost::json::value(*error_type) : boost::json::value(nullptr)},
                {"recoverable_by_model", recoverable_by_model},
                {"recommended_next_action", recommended_next_action},
                {"source", source}};
    }
};

struct tool_error_handling_options {
    std::size_t max_detail = 500;                ///< exception text longer than this is cut to 497 + "..."
    std::string task_tool_name = "task";         ///< its failures read like a subagent result
    std::string meta_key = "deerflow_tool_meta"; ///< where the classification goes in the message metadata
    bool classify_results = true;                ///< stamp successful calls' results too

    static constexpr std::string_view config_section = "tool_error_handling";
    friend bool operator==(const tool_error_handling_options&, const tool_error_handling_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                       const tool_error_handling_options& o) {
    jv = boost::json::object{{"max_detail", o.max_detail},
                             {"task_tool_name", o.task_tool_name},
                             {"meta_key", o.meta_key},
                             {"classify_results", o.classify_results}};
}
inline tool_error_handling_options tag_invoke(boost::json::value_to_tag<tool_error_handling_options>,
                                              const boost::json::value& jv) {
    json_reader r(jv, std::string(tool_error_handling_options::config_section));
    tool_error_handling_options o;
    r.read("max_detail", o.max_detail)
        .read("task_tool_name", o.task_tool_name)
        .read("meta_key", o.meta_key)
        .read("classify_results", o.classify_results)
        .reject_unknown_keys();
    return o;
}

namespace detail {

struct error_rule {
    std::array<std::string_view, 5> keywords;
    std::string_view error_type;
    bool recoverable;
    std::string_view next_action;
};

// DeerFlow's table (tool_result_meta.py), first match wins. Numeric codes must
// stand alone as a word; the rest are case-insensitive substrings.
inline constexpr std::array<error_rule, 8> error_rules{{
    {{"401", "403", "unauthorized", "authentication", "invalid api key"}, "auth", false, "stop"},
    {{"rate limit", "rate limited", "rate_limit", {}, {}}, "rate_limited", false, "summarize"},
    {{"timeout", "timed out", "connection", "network error", "temporarily unavailable"},
     "transient",
     false,
     "try_alternative"},
    {{"not configured", "not installed", "missing required", "disabled", "no api key"},
     "config",
     false,
     "stop"},
    {{"permission denied", "access denied", "path traversal", "forbidden", {}},
     "permission",
     true,
     "try_alternative"},
    {{"no results found", "no content found", "no images found", "no results", {}},
     "no_results",
     true,
     "rewrite_query"},
    {{"not found", "no such file", "does not exist", "404", {}}, "not_found", true, "rewrite_query"},
    {{"unexpected error", "internal error", "500", {}, {}}, "internal", false, "stop"},
}};

inline bool is_numeric(std::string_view s) noexcept {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

inline std::string exception_type_name() {
#ifdef AGENTWARE_HAS_CXXABI
    if (const std::type_info* t = abi::__cxa_current_exception_type()) {
        int status = 0;
        std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(t->name(), nullptr, nullptr, &status),
                                                    std::free);
        return status == 0 && name ? std::string(name.get()) : std::string(t->name());
    }
#endif
    return "unknown exception";
}

} // namespace detail

/// The kind of error `text` describes (DeerFlow's keyword table); `unknown`
/// when nothing matches. `status` and `source` are left for the caller.
inline tool_result_meta classify_tool_error(std::string_view text) {
    const std::string low = detail::lower(text);
    for (const auto& rule : detail::error_rules)
        for (std::string_view k : rule.keywords) {
            if (k.empty()) continue;
            const bool hit =
                detail::is_numeric(k) ? detail::contains_word(low, k) : low.find(k) != std::string::npos;
            if (hit)
                return tool_result_meta{"error",
                                        std::string(rule.error_type),
                                        rule.recoverable,
                                        std::string(rule.next_action),
                                        {}};
        }
    return tool_result_meta{"error", "unknown", true, "try_alternative", {}};
}

namespace detail {

// A JSON "error" value that means "no error".
inline bool error_sentinel(const boost::json::value& v) {
    if (!truthy(v)) return true;
    if (!v.is_string()) return false;
    static constexpr std::array<std::string_view, 8> none{"none", "null",    "false", "no",
                                                          "ok",   "success", "n/a",   ""};
    const std::string s = lower(trim(v.get_string()));
    for (auto n : none)
        if (s == n) return true;
    return false;
}

inline std::optional<boost::json::object> parse_object(std::string_view text) {
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(text, ec);
    if (ec || !v.is_object()) return std::nullopt;
    return std::move(v.get_object());
}

// The kind of error a fetched page's title names when the title is nothing
// but an HTTP error status ("404 Not Found", "# HTTP Error 502 - Bad Gateway"):
// leading status codes and generic nouns are dropped, and what is left must be
// exactly one of DeerFlow's reason phrases. A title with other words ("404 Ways
// to Cook Rice") is a document, not an error page.
inline std::optional<std::string_view> error_page_type(std::string_view title) {
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 13> phrases{{
        {"unauthorized", "auth"},
        {"proxy authentication required", "auth"},
        {"forbidden", "permission"},
        {"access denied", "permission"},
        {"permission denied", "permission"},
        {"not found", "not_found"},
        {"too many requests", "rate_limited"},
        {"internal server error", "internal"},
        {"not implemented", "internal"},
        {"bad gateway", "transient"},
        {"service unavailable", "transient"},
        {"service temporarily unavailable", "transient"},
        {"gateway timeout", "transient"},
    }};
    static constexpr std::array<std::string_view, 9> filler{"http", "error",     "page", "the",     "file",
                                                            "or",   "directory", "url",  "resource"};
    std::vector<std::string> words;
    std::string word;
    for (char c : lower(title)) {
        if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')) {
            word += c;
        } else if (!word.empty()) {
            words.push_back(std::move(word));
            word.clear();
        }
    }
    if (!word.empty()) words.push_back(std::move(word));
    std::size_t first = 0;
    auto skippable = [&](const std::string& w) {
        for (auto f : filler)
            if (w == f) return true;
        return w.size() == 3 && is_numeric(w) && w >= "400" && w <= "599";
    };
    while (first < words.size() && skippable(words[first]))
        ++first;
    std::string phrase;
    for (std::size_t i = first; i < words.size(); ++i)
        phrase += (phrase.empty() ? "" : " ") + words[i];
    for (const auto& [p, type] : phrases)
        if (phrase == p) return type;
    return std::nullopt;
}

inline std::string_view first_nonempty_line(std::string_view text) {
    while (!text.empty()) {
        std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        if (!trim(line).empty()) return trim(line);
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
    return {};
}

} // namespace detail

/// DeerFlow's normalize_tool_result, for a tool message that carries no
/// classification yet: the rules are tried in order (see the docs page).
inline tool_result_meta classify_tool_result(const message& m) {
    const std::string text = m.text();
    auto as_error = [](tool_result_meta meta, std::string_view source) {
        meta.status = "error";
        meta.source = std::string(source);
        return meta;
    };
    // Arguments refused by the tool's schema: the model fixes the call and
    // retries. Classified before the keyword table, whose "missing required"
    // (meant for a missing setting) would make it a fatal `config` error; the
    // result is what DeerFlow's table gives a pydantic validation error.
    if (m.is_error() && std::string_view(text).starts_with(detail::invalid_arguments_prefix))
        return tool_result_meta{"error", "unknown", true, "try_alternative", "tool_return"};
    const bool error_prefix = std::string_view(text).starts_with("Error:");
    if (m.is_error() && !error_prefix) { // 1: an error status
        if (auto o = detail::parse_object(text)) {
            if (const auto* e = o->if_contains("error"); e && !detail::error_sentinel(*e))
                return as_error(classify_tool_error(detail::python_str(*e)), "tool_return");
            return tool_result_meta{"error", "unknown", true, "try_alternative", "tool_return"};
        }
        return as_error(classify_tool_error(text), "tool_return");
    }
    if (error_prefix)
        return as_error(classify_tool_error(std::string_view(text).substr(6)), "tool_return"); // 2
    if (auto o = detail::parse_object(text)) // 3: a JSON object with a truthy "error"
        if (const auto* e = o->if_contains("error"); e && !detail::error_sentinel(*e))
            return as_error(classify_tool_error(detail::python_str(*e)), "tool_return");
    if (m.name == "web_fetch") { // 4: a fetched page that is an HTTP error page
        std::string_view first = detail::first_nonempty_line(text);
        if (auto type = detail::error_page_type(first))
            for (const auto& rule : detail::error_rules)
                if (rule.error_type == *type)
                    return tool_result_meta{"error", std::string(rule.error_type), rule.recoverable,
                                            std::string(rule.next_action), "content_analysis"};
    }
    static constexpr std::array<std::string_view, 7> partial{
        "partial results",  "limited results",  "truncated",      "results may be incomplete",
        "no results found", "no content found", "no images found"};
    const std::string low = detail::lower(text);
    for (auto p : partial) // 5
        if (low.find(p) != std::string::npos)
            return tool_result_meta{"partial_success", std::nullopt, true, "rewrite_query",
                                    "content_analysis"};
    return tool_result_meta{"success", std::nullopt, true, "continue", "content_analysis"}; // 6
}

struct tool_error_handling {
    // Text kept for parity with DeerFlow's ToolErrorHandlingMiddleware
    static constexpr std::string_view error_format = "Error: Tool '{}' failed with {}: {}. Continue with "
                                                     "available context, or choose an alternative tool.";
    static constexpr std::string_view continue_hint =
        " Continue with available context, or choose an alternative tool.";
    static constexpr std::string_view unknown_tool = "unknown_tool";
    static constexpr std::string_view missing_id = "missing_tool_call_id";

    tool_error_handling_options options;

    tool_error_handling() = default;
    explicit tool_error_handling(tool_error_handling_options o) : options(std::move(o)) {}

    auto wrap_tool_call(auto& req, auto&& next) -> decltype(next(req)) {
        return map_response(
            req, next, [this](tool_response r) { return stamp(std::move(r)); },
            [this, call = req.call](std::exception_ptr e) { return failure(*call, e); });
    }

    /// The result for a call whose chain threw `e`.
    tool_response failure(const tool_call& call, std::exception_ptr e) const {
        std::string type = "unknown exception", what;
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& x) {
            type = detail::exception_type_name();
            what = x.what();
        } catch (...) {
            type = detail::exception_type_name();
        }
        std::string detail_text(detail::trim(what));
        if (detail_text.empty()) detail_text = type;
        detail_text = detail::cap_with_ellipsis(detail_text, options.max_detail);

        const std::string name = call.name.empty() ? std::string(unknown_tool) : call.name;
        message m;
        if (call.name == options.task_tool_name) {
            std::string error = type + ": " + detail_text;
            std::string text = "Task failed. Error: " + error;
            if (!std::string_view(text).ends_with(".") && !std::string_view(text).ends_with("!") &&
                !std::string_view(text).ends_with("?"))
                text += '.';
            text += continue_hint;
            m = tool_message(call.id.empty() ? std::string(missing_id) : call.id, name, std::move(text),
                             tool_status::error);
            m.metadata["subagent_status"] = "failed";
            m.metadata["subagent_error"] = error;
        } else {
            m = tool_message(call.id.empty() ? std::string(missing_id) : call.id, name,
                             fmt::format(fmt::runtime(error_format), name, type, detail_text),
                             tool_status::error);
        }
        // Classified from "<type>: <detail>", as DeerFlow does, so a type name
        // such as timeout_error counts too.
        tool_result_meta meta = classify_tool_error(type + ": " + detail_text);
        meta.source = "exception";
        m.metadata[options.meta_key] = meta.to_json();
        return tool_response{std::move(m), {}, false};
    }

    /// A result that only answers the call. The sandbox's first tool call of a
    /// thread also records the sandbox it acquired; DeerFlow adds that record
    /// outside this middleware, so such a result counts as plain here too.
    static bool is_plain_result(const tool_response& r) {
        if (r.end_run || !r.update.messages.empty()) return false;
        for (const auto& kv : r.update.fields)
            if (kv.key() != sandbox_field::name) return false;
        return true;
    }

    /// Classifies a plain result; results that change the state or end the
    /// run (DeerFlow's `Command`s) and already classified ones are left alone.
    tool_response stamp(tool_response r) const {
        if (!options.classify_results || !is_plain_result(r) || r.msg.metadata.contains(options.meta_key))
            return r;
        r.msg.metadata[options.meta_key] = classify_tool_result(r.msg).to_json();
        return r;
    }
};

} // namespace agentware

#endif
