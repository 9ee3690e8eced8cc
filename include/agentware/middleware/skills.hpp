#ifndef AGENTWARE_MIDDLEWARE_SKILLS_HPP
#define AGENTWARE_MIDDLEWARE_SKILLS_HPP

// The skills middleware (docs/skills.md): the model's way into /mnt/skills.
// It serves read_file, ls, glob and grep under the container path from a
// skill catalog's host folders, refuses every file of a disabled skill with
// DeerFlow's text, and records each SKILL.md read in `skill_context`.
// Give it a catalog (load_skills in <agentware/skills/skills.hpp>, which
// needs yaml-cpp, or one of your own); this header does not read YAML.

#include <agentware/agent/wrap.hpp>
#include <agentware/core/fields.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/detail/regex.hpp>
#include <agentware/filesystem/detail/file_search.hpp> // wildcard_match, search_regex_flags, clamp_results
#include <agentware/memory/clock.hpp>                  // detail::iso_utc
#include <agentware/middleware/detail/tool_args.hpp>   // string_arg, int_arg, bool_arg
#include <agentware/skills/catalog.hpp>
#include <agentware/skills/context.hpp>

#include <boost/json/value_from.hpp>

#include <chrono>
#include <concepts>
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

namespace detail {

/// Calls `visit(host file or folder, its /mnt/skills path, is_dir)` for what
/// lies under `p` (the root, a category, a skill folder or a path in one),
/// enabled skills only, sorted, ignored names and links that leave a skill's
/// folder left out. `visit` returns false to stop.
template <class Visit>
void walk_skill_files(const skill_path& p, std::string_view container, const skill_catalog& catalog,
                      Visit&& visit) {
    namespace fs = std::filesystem;
    auto walk_one = [&](const skill& s, const fs::path& start) -> bool {
        const fs::path folder = skill_canonical(s.directory);
        const std::string base =
            detail::format("{}/{}/{}", container, skill_category_name(s.category), s.folder());
        std::error_code ec;
        if (fs::is_regular_file(start, ec))
            return visit(start, base + "/" + start.lexically_relative(folder).generic_string(), false);
        std::vector<fs::path> entries;
        for (fs::recursive_directory_iterator it(start, fs::directory_options::none, ec), end;
             !ec && it != end; it.increment(ec)) {
            const std::string name = it->path().filename().string();
            if (is_ignored_name(name)) {
                if (it->is_directory(ec)) it.disable_recursion_pending();
                continue;
            }
            if (it->is_symlink(ec) && !skill_within(skill_canonical(it->path()), folder)) continue;
            entries.push_back(it->path());
        }
        std::sort(entries.begin(), entries.end());
        for (const auto& e : entries) {
            const bool dir = fs::is_directory(e, ec);
            if (!visit(e, base + "/" + e.lexically_relative(folder).generic_string(), dir)) return false;
        }
        return true;
    };
    if (p.owner) {
        walk_one(*p.owner, p.host);
        return;
    }
    for (const auto& s : catalog.skills)
        if (s.enabled && (!p.level || *p.level == s.category))
            if (!walk_one(s, s.directory)) return;
}

/// glob under /mnt/skills, with the sandbox tool's arguments and texts
/// (reference deerflow.md §5.3); `pattern` matches the path relative to `shown`.
inline tool_output glob_skill_files(const skill_path& p, const std::string& shown,
                                    const boost::json::object& args, std::string_view container,
                                    const skill_catalog& catalog) {
    std::optional<arg_error> err;
    auto pattern = string_arg(args, "pattern", true, err);
    const bool include_dirs = bool_arg(args, "include_dirs", false, err);
    auto max_arg = int_arg(args, "max_results", err);
    if (err) return tool_output::error(err->text);
    const std::size_t max = clamp_results(max_arg, 200, 1000);
    std::string root = shown;
    while (root.size() > 1 && root.back() == '/')
        root.pop_back();
    std::vector<std::string> found;
    bool truncated = false;
    walk_skill_files(
        p, container, catalog, [&](const std::filesystem::path&, const std::string& virt, bool dir) {
            if (dir && !include_dirs) return true;
            const std::string rel =
                virt.size() > root.size() && virt.starts_with(root) ? virt.substr(root.size() + 1) : virt;
            if (!glob_match(*pattern, rel)) return true;
            if (found.size() == max) {
                truncated = true;
                return false;
            }
            found.push_back(virt);
            return true;
        });
    if (found.empty()) return tool_output(detail::format("No files matched under {}", shown));
    std::string out =
        detail::format("Found {} paths under {}{}", found.size(), shown,
                       truncated ? detail::format(" (showing first {})", found.size()) : std::string());
    for (std::size_t i = 0; i < found.size(); ++i)
        out += detail::format("\n{}. {}", i + 1, found[i]);
    if (truncated) out += "\nResults truncated. Narrow the path or pattern to see fewer matches.";
    return tool_output(std::move(out));
}

/// grep under /mnt/skills, with the sandbox tool's arguments and texts
/// (reference deerflow.md §5.3): files over 1 MB and binaries are skipped.
inline tool_output grep_skill_files(const skill_path& p, const std::string& shown,
                                    const boost::json::object& args, std::string_view container,
                                    const skill_catalog& catalog) {
    std::optional<arg_error> err;
    auto pattern = string_arg(args, "pattern", true, err);
    auto file_glob = string_arg(args, "glob", false, err);
    const bool literal = bool_arg(args, "literal", false, err);
    const bool case_sensitive = bool_arg(args, "case_sensitive", false, err);
    auto max_arg = int_arg(args, "max_results", err);
    if (err) return tool_output::error(err->text);
    const std::size_t max = clamp_results(max_arg, 100, 500);
    std::optional<std::regex> re;
    if (!literal) {
        try {
            re.emplace(*pattern, search_regex_flags(case_sensitive));
        } catch (const std::regex_error& e) {
            return tool_output::error(detail::format("Error: Invalid regex pattern: {}", e.what()));
        }
    }
    const std::string needle = case_sensitive ? *pattern : lower(*pattern);
    std::vector<std::string> hits;
    bool truncated = false;
    walk_skill_files(p, container, catalog,
                     [&](const std::filesystem::path& file, const std::string& virt, bool dir) {
                         if (dir) return true;
                         const std::string name = file.filename().string();
                         if (file_glob && !file_glob->empty() && !wildcard_match(*file_glob, name))
                             return true;
                         std::error_code ec;
                         if (std::filesystem::file_size(file, ec) > 1024 * 1024 || ec) return true;
                         std::string content;
                         if (!skill_read_file(file, content) || !is_utf8_text(content)) return true;
                         std::size_t line_no = 0;
                         std::string_view rest = content;
                         while (!rest.empty()) {
                             ++line_no;
                             const std::size_t nl = rest.find('\n');
                             std::string_view line = rest.substr(0, nl);
                             rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
                             if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
                             const std::string probe(line);
                             const bool match = re ? detail::regex_search(probe, *re)
                                                   : (case_sensitive ? probe : lower(probe)).find(needle) !=
                                                         std::string::npos;
                             if (!match) continue;
                             if (hits.size() == max) {
                                 truncated = true;
                                 return false;
                             }
                             hits.push_back(detail::format("{}:{}: {}", virt, line_no,
                                                           excerpt(line, utf8_offset(line, 200))));
                         }
                         return true;
                     });
    if (hits.empty()) return tool_output(detail::format("No matches found under {}", shown));
    std::string out =
        detail::format("Found {} matches under {}{}", hits.size(), shown,
                       truncated ? detail::format(" (showing first {})", hits.size()) : std::string());
    for (const auto& h : hits)
        out += "\n" + h;
    if (truncated) out += "\nResults truncated. Narrow the path or add a glob filter.";
    return tool_output(std::move(out));
}

} // namespace detail

/// The skills middleware: the model's way into /mnt/skills (see the top of
/// this file). Put it where its wrap_tool_call sees the file tools' calls
/// before the sandbox's tools do (anywhere in DeerFlow's chain: the sandbox
/// offers the tools, and this hook answers the calls under /mnt/skills).
/// Shared by concurrent runs: the catalog is read-only after construction.
class skills {
public:
    using state_fields = fields<skill_context_field>;
    static constexpr std::string_view middleware_name = "skills";

    /// No skills: every path under /mnt/skills is not found.
    skills() : catalog_(std::make_shared<const skill_catalog>()) {}
    /// Loads the catalog from the roots: needs load_skills, i.e.
    /// <agentware/skills/skills.hpp> (yaml-cpp), included where this is used.
    template <class States = skill_states>
        requires std::same_as<States, skill_states>
    explicit skills(skills_options o, const States& states = {})
        : options_(std::move(o)),
          catalog_(std::make_shared<const skill_catalog>(load_skills(options_, states))) {}
    /// With a catalog of the caller's.
    skills(skills_options o, skill_catalog catalog)
        : options_(std::move(o)), catalog_(std::make_shared<const skill_catalog>(std::move(catalog))) {
        options_.validate();
    }
    /// With a catalog shared with other middlewares and runs (the lead agent's).
    skills(skills_options o, std::shared_ptr<const skill_catalog> catalog)
        : options_(std::move(o)), catalog_(std::move(catalog)) {
        if (!catalog_) catalog_ = std::make_shared<const skill_catalog>();
        options_.validate();
    }

    /// Stamps skill_context entries (the replay fixes it).
    std::function<std::chrono::system_clock::time_point()> clock = [] {
        return std::chrono::system_clock::now();
    };

    const skills_options& options() const noexcept { return options_; }
    const skill_catalog& catalog() const noexcept { return *catalog_; }
    const std::shared_ptr<const skill_catalog>& shared_catalog() const noexcept { return catalog_; }

    /// skills_prompt_section of this catalog.
    std::string
    prompt_section(const std::optional<std::vector<std::string>>& available = std::nullopt) const {
        return skills_prompt_section(*catalog_, options_.container_path, available);
    }

    /// read_file, ls, glob and grep under the container path are answered
    /// here, from the skills' host folders; the other read tools
    /// (read_tool_names) are refused for a disabled skill's files and
    /// otherwise run; a SKILL.md read that succeeds adds its skill to
    /// `skill_context`.
    template <class Request, class Next>
    auto wrap_tool_call(Request& req, Next&& next) -> decltype(next(req)) {
        const tool_call& call = *req.call;
        const bool served = call.name == "read_file" || call.name == "ls";
        const bool gated = served || call.name == "glob" || call.name == "grep" || is_read_tool(call.name);
        if (!gated) return next(req);
        const auto* path_value = call.args.if_contains("path");
        if (!path_value || !path_value->is_string()) return next(req);
        const std::string path(path_value->get_string());
        auto rel = detail::under_container(path, options_.container_path);
        if (!rel) return next(req);
        const bool search = call.name == "glob" || call.name == "grep";
        detail::skill_path p = detail::resolve_skill_path(path, *rel, *catalog_, call.name == "ls" || search);
        if (!p.error.empty()) return short_circuit(req, next, answer(call, p.error, tool_status::error));
        if (search) {
            std::error_code ec;
            if (p.owner && (call.name == "glob" ? !std::filesystem::is_directory(p.host, ec)
                                                : !std::filesystem::exists(p.host, ec)))
                return short_circuit(
                    req, next,
                    answer(call, detail::format("Error: Directory not found: {}", path), tool_status::error));
            tool_output out =
                call.name == "glob"
                    ? detail::glob_skill_files(p, path, call.args, options_.container_path, *catalog_)
                    : detail::grep_skill_files(p, path, call.args, options_.container_path, *catalog_);
            const tool_status status = out.status;
            return short_circuit(req, next, answer(call, out.text(), status));
        }
        if (call.name == "ls") {
            std::error_code ec;
            if (p.owner && !std::filesystem::is_directory(p.host, ec))
                return short_circuit(
                    req, next,
                    answer(call, detail::format("Error: Directory not found: {}", path), tool_status::error));
            std::string listing = detail::list_skill_path(p, options_.container_path, *catalog_);
            return short_circuit(req, next,
                                 answer(call, listing.empty() ? "(empty)" : listing, tool_status::ok));
        }
        std::optional<skill_entry> entry;
        if (p.is_skill_md && is_read_tool(call.name))
            entry = skill_entry{p.owner->name, p.owner->location(options_.container_path),
                                p.owner->description, detail::iso_utc(clock())};
        if (call.name == "read_file") {
            std::string text;
            const tool_status status = detail::read_skill_file(p, path, call.args, text);
            tool_response r = answer(call, std::move(text), status);
            if (status == tool_status::ok && entry) record(r, std::move(*entry));
            return short_circuit(req, next, std::move(r));
        }
        if (!entry) return next(req);
        return map_response(req, next, [entry = std::move(*entry)](tool_response r) mutable {
            if (!r.msg.is_error() && !r.msg.text().starts_with("Error:")) record(r, std::move(entry));
            return r;
        });
    }

private:
    bool is_read_tool(std::string_view name) const {
        return std::find(options_.read_tool_names.begin(), options_.read_tool_names.end(), name) !=
               options_.read_tool_names.end();
    }

    static tool_response answer(const tool_call& call, std::string text, tool_status status) {
        return tool_response{tool_message(call.id, call.name, std::move(text), status), {}, false};
    }

    static void record(tool_response& r, skill_entry e) {
        skill_context_field::value_type update{std::move(e)};
        r.update.fields[skill_context_field::name] = boost::json::value_from(update);
    }

    skills_options options_;
    std::shared_ptr<const skill_catalog> catalog_;
};

} // namespace agentware

#endif
