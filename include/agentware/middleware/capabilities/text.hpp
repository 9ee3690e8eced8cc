#ifndef AGENTWARE_MIDDLEWARE_CAPABILITIES_TEXT_HPP
#define AGENTWARE_MIDDLEWARE_CAPABILITIES_TEXT_HPP

// text_tools: the Swift catalog's `text` capability. `head` and `tail` show
// the first or last lines of a file of the working directory; `diff`
// compares two files as a unified diff (the host's diff program, labelled
// with the paths relative to the working directory).

#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/middleware/capabilities/host_capability.hpp>
#include <agentware/middleware/detail/tool_args.hpp>
#include <agentware/tool/make_tool.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>

#include <fmt/core.h>

#include <chrono>
#include <cstddef>
#include <deque>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

struct text_tools_options {
    std::string root_dir = ".";     ///< the working directory
    std::size_t default_lines = 10; ///< head and tail without `lines`
    std::size_t max_lines = 2000;   ///< head and tail at most
    std::size_t max_output_chars = 50000;

    static constexpr std::string_view config_section = "text";
    friend bool operator==(const text_tools_options&, const text_tools_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const text_tools_options& o) {
    jv = boost::json::object{{"root_dir", o.root_dir},
                             {"default_lines", o.default_lines},
                             {"max_lines", o.max_lines},
                             {"max_output_chars", o.max_output_chars}};
}

inline text_tools_options tag_invoke(boost::json::value_to_tag<text_tools_options>,
                                     const boost::json::value& jv) {
    json_reader r(jv, std::string(text_tools_options::config_section));
    text_tools_options o;
    r.read("root_dir", o.root_dir)
        .read("default_lines", o.default_lines)
        .read("max_lines", o.max_lines)
        .read("max_output_chars", o.max_output_chars)
        .reject_unknown_keys();
    return o;
}

namespace detail {

// The regular file `raw` names, or an error text.
inline std::optional<std::filesystem::path>
text_file(const working_dir& wd, const std::optional<std::string>& raw, std::string& why) {
    auto p = wd.resolve(raw.value_or(""), why);
    if (!p) return std::nullopt;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*p, ec)) {
        why = detail::format("Error: File '{}' not found", raw.value_or(""));
        return std::nullopt;
    }
    return p;
}

inline tool_output text_ends(bool head, const working_dir& wd, const text_tools_options& o,
                             const boost::json::object& a, std::optional<arg_error>& err) {
    auto raw = string_arg(a, "file_path", true, err);
    auto lines = int_arg(a, "lines", err);
    if (err) return {};
    std::string why;
    auto file = text_file(wd, raw, why);
    if (!file) return tool_output::error(why);
    const std::size_t n =
        std::min(o.max_lines, lines && *lines > 0 ? static_cast<std::size_t>(*lines) : o.default_lines);
    std::ifstream in(*file, std::ios::binary);
    std::deque<std::string> kept;
    std::string line;
    while (std::getline(in, line)) {
        if (head && kept.size() == n) break;
        kept.push_back(std::move(line));
        if (!head && kept.size() > n) kept.pop_front();
    }
    std::string out;
    for (const auto& l : kept) {
        if (!out.empty()) out += '\n';
        out += l;
    }
    return middle_truncate(out, o.max_output_chars);
}

inline tool_output text_diff(const working_dir& wd, const text_tools_options& o, const boost::json::object& a,
                             std::optional<arg_error>& err) {
    auto first = string_arg(a, "file_a", true, err);
    auto second = string_arg(a, "file_b", true, err);
    if (err) return {};
    std::string why;
    auto pa = text_file(wd, first, why);
    if (!pa) return tool_output::error(why);
    auto pb = text_file(wd, second, why);
    if (!pb) return tool_output::error(why);
    const std::string diff = find_program("diff");
    if (diff.empty()) return tool_output::error("Error: no diff program on this host");
    auto r = run_process(
        {diff, "-u", "--label", wd.relative(*pa), "--label", wd.relative(*pb), pa->string(), pb->string()},
        std::chrono::seconds(30), o.max_output_chars * 2);
    if (!r.failure.empty()) return tool_output::error("Error: " + r.failure);
    if (r.exit_code == 0) return std::string("The files are identical.");
    if (r.exit_code != 1) return tool_output::error("Error: " + command_text(r, o.max_output_chars));
    return command_text(r, o.max_output_chars);
}

} // namespace detail

/// The `text` capability: head, tail and diff in a working directory.
class text_tools : public detail::host_capability<text_tools_options> {
public:
    using options_type = text_tools_options;
    static constexpr std::string_view capability_id = "text"; ///< in the capability catalog

    text_tools() : text_tools(text_tools_options{}) {}
    explicit text_tools(text_tools_options o) : host_capability(std::move(o)) {
        constexpr std::string_view ends_schema =
            R"({"type":"object","properties":{"file_path":{"type":"string","description":"The file, relative to the working directory."},"lines":{"type":"integer","description":"How many lines (default 10)."}},"required":["file_path"]})";
        add_tool("head", "Shows the first lines of a file.", ends_schema,
                 [](const auto& wd, const auto& op, const auto& a, auto& err) {
                     return detail::text_ends(true, wd, op, a, err);
                 });
        add_tool("tail", "Shows the last lines of a file.", ends_schema,
                 [](const auto& wd, const auto& op, const auto& a, auto& err) {
                     return detail::text_ends(false, wd, op, a, err);
                 });
        add_tool(
            "diff", "Compares two files and shows their differences as a unified diff.",
            R"({"type":"object","properties":{"file_a":{"type":"string","description":"The first file."},"file_b":{"type":"string","description":"The second file."}},"required":["file_a","file_b"]})",
            &detail::text_diff);
    }
};

} // namespace agentware

#endif
