#ifndef AGENTWARE_MIDDLEWARE_UPLOADS_HPP
#define AGENTWARE_MIDDLEWARE_UPLOADS_HPP

// uploads: tells the model which files the user uploaded with this message
// (DeerFlow's UploadsMiddleware). A <current_uploads> block listing the files
// (size, virtual path, outline or preview of a converted Markdown sibling) is
// put in front of the last human message, and the files are recorded in the
// `uploaded_files` state field. Files shown in an earlier turn are never
// listed again.

#include <agentware/agent/runtime.hpp>
#include <agentware/core/fields.hpp>
#include <agentware/core/type_list.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/detail/regex.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/middleware/detail/untrusted_text.hpp>
#include <agentware/middleware/thread_data.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>
#include <agentware/thread/fields.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

struct uploads_options {
    /// Files described in full; the rest are summarised as "omitted". At least 1.
    std::size_t max_files_per_context_section = 10;
    /// When the message carries no "files" metadata: list the files that are
    /// in the uploads directory but were not shown in an earlier turn.
    bool discover_new_files = true;

    static constexpr std::string_view config_section = "uploads";
    friend bool operator==(const uploads_options&, const uploads_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const uploads_options& o) {
    jv = boost::json::object{{"max_files_per_context_section", o.max_files_per_context_section},
                             {"discover_new_files", o.discover_new_files}};
}
inline uploads_options tag_invoke(boost::json::value_to_tag<uploads_options>, const boost::json::value& jv) {
    json_reader r(jv, std::string(uploads_options::config_section));
    uploads_options o;
    r.read("max_files_per_context_section", o.max_files_per_context_section)
        .read("discover_new_files", o.discover_new_files)
        .reject_unknown_keys();
    return o;
}

namespace detail {

struct upload_outline {
    std::vector<std::pair<std::size_t, std::string>> headings; ///< line number, title
    bool truncated = false;
    std::vector<std::string> preview; ///< first non-empty lines when there are no headings
};

inline std::string lower_extension(const std::filesystem::path& p) {
    std::string ext = p.extension().string();
    for (char& c : ext)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return ext;
}

// Outline from the converted "<stem>.md" next to an upload: Markdown headings
// (at most 50), or, without any, the first 5 non-empty lines.
inline upload_outline read_upload_outline(const std::filesystem::path& uploads_dir,
                                          const std::string& filename) {
    upload_outline out;
    const auto md = uploads_dir / (std::filesystem::path(filename).stem().string() + ".md");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(md, ec)) ||
        std::filesystem::file_size(md, ec) > 8 * 1024 * 1024)
        return out;
    std::ifstream in(md);
    std::string line;
    std::size_t number = 0;
    static const std::regex heading(R"(^#{1,6}\s+(.+?)\s*#*\s*$)");
    std::vector<std::string> first_lines;
    while (std::getline(in, line)) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        std::cmatch m;
        if (detail::regex_match(line, m, heading)) {
            if (out.headings.size() == 50) {
                out.truncated = true;
                break;
            }
            out.headings.emplace_back(number, m[1].str());
        } else if (first_lines.size() < 5) {
            if (auto t = trim(line); !t.empty()) first_lines.emplace_back(t);
        }
    }
    if (out.headings.empty()) out.preview = std::move(first_lines);
    return out;
}

inline std::string format_upload_size(std::uint64_t bytes) {
    const double kb = static_cast<double>(bytes) / 1024.0;
    if (kb >= 1024.0) return detail::format("{:.1f} MB", kb / 1024.0);
    return detail::format("{:.1f} KB", kb);
}

// Gateway staging files (".upload-<id>.part") are half-written uploads.
inline bool is_staging_upload(std::string_view name) noexcept {
    return name.starts_with(".upload-") || name.ends_with(".part");
}

inline bool is_plain_file_name(std::string_view name) noexcept {
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
           name.find('\\') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

/// Names listed in <current_uploads> blocks of earlier messages (the seed's
/// "- name (" line form, so names with spaces are found whole).
inline std::set<std::string> names_shown_before(const std::vector<message>& messages, std::size_t end) {
    static const std::regex item(R"(^-\s+(.+?)\s*\()");
    std::set<std::string> shown;
    for (std::size_t i = 0; i < end; ++i) {
        if (!messages[i].is_human()) continue;
        const std::string text = messages[i].text();
        const auto open = text.find("<current_uploads>");
        if (open == std::string::npos) continue;
        const auto close = text.find("</current_uploads>", open);
        std::string_view block = std::string_view(text).substr(
            open, close == std::string::npos ? std::string::npos : close - open);
        std::size_t start = 0;
        while (start < block.size()) {
            std::size_t nl = block.find('\n', start);
            if (nl == std::string_view::npos) nl = block.size();
            std::string line(block.substr(start, nl - start));
            std::cmatch m;
            if (detail::regex_search(line, m, item)) shown.insert(m[1].str());
            start = nl + 1;
        }
    }
    return shown;
}

} // namespace detail

/// Lists the files uploaded with the last human message in front of it.
///
/// The files come from the message's metadata["files"] (entries with a
/// "filename" and an optional "size", as DeerFlow's front end sends them);
/// without that key, and with discover_new_files, from the uploads directory,
/// minus the files earlier turns showed. Only plain names of regular files
/// present on disk are listed; the path is always rebuilt as
/// /mnt/user-data/uploads/{filename}.
struct uploads {
    using state_fields = fields<thread_data_field, uploaded_files_field>;
    using must_come_after = type_list<thread_data>;

    uploads_options options;

    uploads() = default;
    explicit uploads(uploads_options o) : options(o) {
        if (options.max_files_per_context_section < 1)
            throw std::invalid_argument("max_files_per_context_section must be at least 1");
    }

    template <class State>
    void before_agent(State& state, runtime&) const {
        auto& recorded = get<uploaded_files_field>(state);
        if (state.messages.empty() || !state.messages.back().is_human()) {
            recorded = std::vector<uploaded_file>{};
            return;
        }
        const auto& td = get<thread_data_field>(state);
        std::optional<std::filesystem::path> dir;
        if (td && !td->uploads_path.empty()) dir = td->uploads_path;

        message& last = state.messages.back();
        std::vector<uploaded_file> files = collect(state.messages, dir);
        recorded = files;
        if (files.empty()) return;

        const std::string block = format_block(files, dir);
        const std::string original = last.text();
        if (const auto* o = last.metadata.if_contains("original_user_content"); !o || !o->is_string())
            last.metadata["original_user_content"] = original;
        const bool plain_text =
            last.content.size() <= 1 && (last.content.empty() || last.content[0].is_text());
        if (plain_text) {
            last.content = {text_block(block + "\n\n" + original)};
        } else {
            last.content.insert(last.content.begin(), text_block(block + "\n\n"));
        }
    }

    /// The <current_uploads> block for these files.
    std::string format_block(const std::vector<uploaded_file>& files,
                             const std::optional<std::filesystem::path>& dir) const {
        const std::size_t n_context = std::min(files.size(), options.max_files_per_context_section);
        std::vector<std::string> lines{"<current_uploads>",
                                       "The following files were uploaded in this message:", ""};
        for (std::size_t i = 0; i < n_context; ++i) {
            const auto& f = files[i];
            const std::string name = detail::neutralize_untrusted_tags(f.filename);
            lines.push_back(detail::format("- {} ({})", name, detail::format_upload_size(f.size)));
            lines.push_back(detail::format("  Path: {}", detail::neutralize_untrusted_tags(f.path)));
            if (dir) {
                auto outline = detail::read_upload_outline(*dir, f.filename);
                if (!outline.headings.empty()) {
                    lines.push_back(
                        "  Document outline (use `read_file` with line ranges to read sections):");
                    for (const auto& [line, title] : outline.headings)
                        lines.push_back(
                            detail::format("    L{}: {}", line, detail::neutralize_untrusted_tags(title)));
                    if (outline.truncated)
                        lines.push_back(detail::format(
                            "    ... (showing first {} headings; use `read_file` to explore further)",
                            outline.headings.size()));
                } else if (!outline.preview.empty()) {
                    lines.push_back("  No structural headings detected. Document begins with:");
                    for (const auto& p : outline.preview)
                        lines.push_back(detail::format("    > {}", detail::neutralize_untrusted_tags(p)));
                    lines.push_back("  Use `grep` to search for keywords (e.g. `grep(pattern='keyword', "
                                    "path='/mnt/user-data/uploads/')`).");
                }
            }
            lines.push_back("");
        }
        if (n_context == 0) {
            lines.push_back("(empty)");
            lines.push_back("");
        }
        if (files.size() > n_context) {
            // Counted by extension, most frequent first (ties: first seen first).
            std::vector<std::pair<std::string, std::size_t>> counts;
            for (std::size_t i = n_context; i < files.size(); ++i) {
                std::string ext = files[i].extension.empty() ? "(no extension)" : files[i].extension;
                auto it =
                    std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == ext; });
                if (it == counts.end())
                    counts.emplace_back(std::move(ext), 1);
                else
                    ++it->second;
            }
            std::stable_sort(counts.begin(), counts.end(),
                             [](const auto& a, const auto& b) { return a.second > b.second; });
            std::string types;
            for (const auto& [ext, count] : counts)
                types += detail::format("{}{} {}", types.empty() ? "" : ", ", count, ext);
            lines.push_back(
                detail::format("... ({} more file(s) from this message omitted from this context.)",
                               files.size() - n_context));
            lines.push_back(
                detail::format("  Omitted file types: {}", detail::neutralize_untrusted_tags(types)));
            lines.push_back(
                "  Use `glob(pattern='**/*', path='/mnt/user-data/uploads/')` to list all uploads.");
            lines.push_back(
                "  Use `grep(pattern='keyword', path='/mnt/user-data/uploads/')` to search across uploads.");
            lines.push_back("");
        }
        for (const char* l :
             {"To work with these files:",
              "- Read from the file first — use the outline line numbers and `read_file` to locate relevant "
              "sections.",
              "- Use `grep` to search for keywords when you are not sure which section to look at",
              "  (e.g. `grep(pattern='revenue', path='/mnt/user-data/uploads/')`).",
              "- Use `glob` to find files by name pattern",
              "  (e.g. `glob(pattern='**/*.md', path='/mnt/user-data/uploads/')`).",
              "- Only fall back to web search if the file content is clearly insufficient to answer the "
              "question.",
              "</current_uploads>"})
            lines.emplace_back(l);
        std::string out;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            if (i) out += '\n';
            out += lines[i];
        }
        return out;
    }

private:
    static std::optional<std::uint64_t> regular_file_size(const std::filesystem::path& p) {
        std::error_code ec;
        // symlink_status: a link in the uploads directory is not an upload
        if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(p, ec)) || ec)
            return std::nullopt;
        auto size = std::filesystem::file_size(p, ec);
        if (ec) return std::nullopt;
        return size;
    }

    static uploaded_file make_entry(std::string name, std::uint64_t size) {
        uploaded_file f;
        f.extension = detail::lower_extension(name);
        f.path = detail::format("{}/{}", detail::virtual_uploads, name);
        f.filename = std::move(name);
        f.size = size;
        return f;
    }

    std::vector<uploaded_file> collect(const std::vector<message>& messages,
                                       const std::optional<std::filesystem::path>& dir) const {
        std::vector<uploaded_file> files;
        const message& last = messages.back();
        if (const auto* meta = last.metadata.if_contains("files")) {
            const auto* list = meta->if_array();
            if (!list) return files;
            std::set<std::string> seen;
            for (const auto& v : *list) {
                const auto* o = v.if_object();
                if (!o) continue;
                const auto* fn = o->if_contains("filename");
                if (!fn || !fn->is_string()) continue;
                std::string name(fn->get_string());
                if (!detail::is_plain_file_name(name) || detail::is_staging_upload(name) ||
                    !seen.insert(name).second)
                    continue;
                std::uint64_t size = 0;
                if (const auto* s = o->if_contains("size")) {
                    if (s->is_uint64())
                        size = s->get_uint64();
                    else if (s->is_int64() && s->get_int64() > 0)
                        size = static_cast<std::uint64_t>(s->get_int64());
                    else if (s->is_double() && s->get_double() > 0)
                        size = static_cast<std::uint64_t>(s->get_double());
                }
                if (dir && !regular_file_size(*dir / name)) continue;
                files.push_back(make_entry(std::move(name), size));
            }
            return files;
        }
        if (!options.discover_new_files || !dir) return files;
        const auto shown = detail::names_shown_before(messages, messages.size() - 1);
        std::error_code ec;
        std::vector<std::string> names;
        for (std::filesystem::directory_iterator it(*dir, ec), end; !ec && it != end; it.increment(ec))
            names.push_back(it->path().filename().string());
        std::sort(names.begin(), names.end());
        for (auto& name : names) {
            if (detail::is_staging_upload(name) || shown.count(name)) continue;
            if (auto size = regular_file_size(*dir / name))
                files.push_back(make_entry(std::move(name), *size));
        }
        return files;
    }
};

} // namespace agentware

#endif
