#ifndef AGENTWARE_MIDDLEWARE_FILESYSTEM_OPTIONS_HPP
#define AGENTWARE_MIDDLEWARE_FILESYSTEM_OPTIONS_HPP

// The filesystem middleware's settings (deepagents' FilesystemMiddleware
// arguments) with their JSON form, and how read_file numbers lines.

#include <agentware/filesystem/permissions.hpp>
#include <agentware/json/reader.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// How read_file numbers lines: deepagents' current form (markers
/// right-aligned to the widest, two spaces) or the older `cat -n` form (six
/// columns and a tab, still deepagentsjs's).
enum class line_number_format { current, cat };

/// Settings of the filesystem middleware (deepagents' FilesystemMiddleware
/// arguments, snake_case as in Python).
struct filesystem_options {
    /// Tool results longer than 4 characters times this are evicted (unset: never).
    std::optional<std::size_t> tool_token_limit_before_evict = 20000;
    /// Human messages longer than 4 characters times this are evicted (unset: never).
    std::optional<std::size_t> human_message_token_limit_before_evict = 50000;
    /// execute's `timeout` may not exceed this.
    std::chrono::seconds max_execute_timeout = std::chrono::seconds(3600);
    /// grep stops after this many matches.
    std::size_t grep_max_count = 1000;
    /// When not empty, every path must start with one of these.
    std::vector<std::string> allowed_prefixes;
    /// Allow and deny rules, the first match deciding.
    std::vector<fs_permission> permissions;
    line_number_format read_file_format = line_number_format::current;
    /// Appended to the system prompt; unset: the built-in text; "": nothing.
    std::optional<std::string> system_prompt;
    /// Tool name -> description replacing the built-in one.
    std::map<std::string, std::string> custom_tool_descriptions;
    /// The tools to offer (empty: all); a list must contain read_file.
    std::vector<std::string> tools;

    static constexpr std::string_view config_section = "filesystem";
    friend bool operator==(const filesystem_options&, const filesystem_options&) = default;

    void validate() const {
        if (!tools.empty() && std::find(tools.begin(), tools.end(), "read_file") == tools.end())
            throw std::invalid_argument("tools: the list must contain read_file");
        static constexpr std::string_view known[] = {"ls",   "read_file", "write_file", "edit_file", "glob",
                                                     "grep", "delete",    "mkdir",      "execute"};
        for (const auto& t : tools)
            if (std::find(std::begin(known), std::end(known), t) == std::end(known))
                throw std::invalid_argument("tools: unknown tool \"" + t + "\"");
    }
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const filesystem_options& o) {
    boost::json::object out;
    out["tool_token_limit_before_evict"] =
        o.tool_token_limit_before_evict ? boost::json::value(*o.tool_token_limit_before_evict) : nullptr;
    out["human_message_token_limit_before_evict"] =
        o.human_message_token_limit_before_evict
            ? boost::json::value(*o.human_message_token_limit_before_evict)
            : nullptr;
    out["max_execute_timeout"] = o.max_execute_timeout.count();
    out["grep_max_count"] = o.grep_max_count;
    out["allowed_prefixes"] = boost::json::value_from(o.allowed_prefixes);
    out["permissions"] = boost::json::value_from(o.permissions);
    out["read_file_format"] = o.read_file_format == line_number_format::current ? "current" : "cat";
    out["system_prompt"] = o.system_prompt ? boost::json::value(*o.system_prompt) : nullptr;
    out["custom_tool_descriptions"] = boost::json::value_from(o.custom_tool_descriptions);
    out["tools"] = boost::json::value_from(o.tools);
    jv = std::move(out);
}

inline filesystem_options tag_invoke(boost::json::value_to_tag<filesystem_options>,
                                     const boost::json::value& jv) {
    json_reader r(jv, std::string(filesystem_options::config_section));
    filesystem_options o;
    // An explicit null switches eviction off, as None does in deepagents.
    if (const auto* v = r.object().if_contains("tool_token_limit_before_evict"); v && v->is_null())
        o.tool_token_limit_before_evict.reset();
    if (const auto* v = r.object().if_contains("human_message_token_limit_before_evict"); v && v->is_null())
        o.human_message_token_limit_before_evict.reset();
    r.read("tool_token_limit_before_evict", o.tool_token_limit_before_evict)
        .read("human_message_token_limit_before_evict", o.human_message_token_limit_before_evict)
        .read("max_execute_timeout", o.max_execute_timeout)
        .read("grep_max_count", o.grep_max_count)
        .read("allowed_prefixes", o.allowed_prefixes)
        .read("permissions", o.permissions)
        .choice("read_file_format", o.read_file_format,
                {{"current", line_number_format::current}, {"cat", line_number_format::cat}})
        .read("system_prompt", o.system_prompt)
        .read("custom_tool_descriptions", o.custom_tool_descriptions)
        .read("tools", o.tools)
        .reject_unknown_keys();
    r.validate(o);
    return o;
}

} // namespace agentware

#endif
