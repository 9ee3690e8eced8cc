#ifndef AGENTWARE_FILESYSTEM_STATE_BACKEND_HPP
#define AGENTWARE_FILESYSTEM_STATE_BACKEND_HPP

// Files kept in the agent state (deepagents' StateBackend): the `files`
// field maps a path to its data, merged by path, a null value deleting the
// path. The backend reads the state the tool runtime lends it and never
// changes it: writes return the `files` update (deep dive §2.4), which the
// agent folds in after the round. The map is ordered by path, so listing a
// directory costs its entries (times log n), not the number of files.

#include <agentware/core/fields.hpp>
#include <agentware/filesystem/backend.hpp>
#include <agentware/filesystem/detail/glob.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/state/update.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// One file of the state backend (deepagents' FileData).
struct file_data {
    std::string content;
    std::string encoding = "utf-8"; ///< or "base64"
    std::string created_at;         ///< ISO 8601
    std::string modified_at;        ///< ISO 8601

    friend bool operator==(const file_data&, const file_data&) = default;

    friend void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const file_data& f) {
        boost::json::object o{{"content", f.content}, {"encoding", f.encoding}};
        if (!f.created_at.empty()) o["created_at"] = f.created_at;
        if (!f.modified_at.empty()) o["modified_at"] = f.modified_at;
        jv = std::move(o);
    }
    friend file_data tag_invoke(boost::json::value_to_tag<file_data>, const boost::json::value& jv) {
        json_reader r(jv, "files");
        file_data f;
        r.read("content", f.content)
            .read("encoding", f.encoding)
            .read("created_at", f.created_at)
            .read("modified_at", f.modified_at)
            .reject_unknown_keys();
        return f;
    }
};

/// path -> file; an empty optional in an update deletes the path.
using file_map = std::map<std::string, std::optional<file_data>, std::less<>>;

/// The `files` state field: updates merge by path, null deletes.
struct files_field {
    static constexpr std::string_view name = "files";
    using value_type = file_map;
    static void merge(value_type& current, value_type&& update) {
        for (auto& [path, data] : update) {
            if (data)
                current.insert_or_assign(path, std::move(data));
            else
                current.erase(path);
        }
    }
};

/// The backend over the state's `files` (a view: the map must outlive it).
class state_backend {
public:
    state_backend() = default;
    explicit state_backend(const file_map* files) : files_(files) {}
    /// The files of the state the tool runtime lends (none when the agent's
    /// state has no `files` field).
    explicit state_backend(const tool_runtime& rt) : files_(rt.field<files_field>()) {}

    fs_ls_result ls(std::string_view path) const {
        fs_ls_result r;
        if (!files_) return r;
        const std::string prefix = dir_prefix(path);
        auto it = files_->lower_bound(prefix);
        while (it != files_->end() && std::string_view(it->first).starts_with(prefix)) {
            std::string_view rest = std::string_view(it->first).substr(prefix.size());
            const std::size_t slash = rest.find('/');
            if (slash == std::string_view::npos) {
                if (it->second && !rest.empty())
                    r.entries.push_back(
                        fs_entry{it->first, false, it->second->content.size(), it->second->modified_at});
                ++it;
                continue;
            }
            std::string dir = prefix + std::string(rest.substr(0, slash));
            r.entries.push_back(fs_entry{dir + "/", true, 0, {}});
            it = files_->lower_bound(dir + static_cast<char>('/' + 1)); // past the subtree
        }
        return r;
    }

    fs_read_result read(std::string_view path) const {
        fs_read_result r;
        const file_data* f = find(path);
        if (!f) {
            r.error = detail::file_not_found(path);
            return r;
        }
        r.content = f->content;
        r.encoding = f->encoding;
        return r;
    }

    fs_write_result write(std::string_view path, std::string_view content) const {
        fs_write_result r;
        r.path = path;
        const file_data* old = find(path);
        file_data f;
        f.content = std::string(content);
        f.modified_at = detail::iso_now();
        f.created_at = old && !old->created_at.empty() ? old->created_at : f.modified_at;
        r.files_update = boost::json::object{{path, boost::json::value_from(f)}};
        return r;
    }

    fs_write_result edit(std::string_view path, std::string_view old_text, std::string_view new_text,
                         bool replace_all) const {
        fs_write_result r;
        r.path = path;
        const file_data* old = find(path);
        if (!old) {
            r.error = detail::file_not_found(path);
            return r;
        }
        file_data f = *old;
        r.error = detail::apply_edit(f.content, old_text, new_text, replace_all, r.occurrences);
        if (!r.error.empty()) return r;
        f.modified_at = detail::iso_now();
        r.files_update = boost::json::object{{path, boost::json::value_from(f)}};
        return r;
    }

    fs_glob_result glob(std::string_view pattern, std::string_view path) const {
        fs_glob_result r;
        if (!files_) return r;
        const detail::fs_glob_pattern pat(pattern);
        const std::string prefix = dir_prefix(path);
        for (auto it = files_->lower_bound(prefix);
             it != files_->end() && std::string_view(it->first).starts_with(prefix); ++it)
            if (it->second && pat.matches(std::string_view(it->first).substr(prefix.size())))
                r.entries.push_back(
                    fs_entry{it->first, false, it->second->content.size(), it->second->modified_at});
        // Most recently modified first, as deepagents lists them.
        std::stable_sort(r.entries.begin(), r.entries.end(),
                         [](const fs_entry& a, const fs_entry& b) { return a.modified_at > b.modified_at; });
        return r;
    }

    fs_grep_result grep(std::string_view pattern, std::string_view path, std::string_view glob_filter,
                        std::size_t max_count) const {
        fs_grep_result r;
        if (!files_) return r;
        std::optional<detail::fs_glob_pattern> filter;
        if (!glob_filter.empty()) filter.emplace(glob_filter);
        std::size_t budget = max_count;
        // The path may name one file, or a directory.
        if (const file_data* f = find(path)) {
            if (f->encoding == "utf-8" && !detail::grep_text(path, f->content, pattern, r.matches, budget))
                r.truncated = true;
            return r;
        }
        const std::string prefix = dir_prefix(path);
        for (auto it = files_->lower_bound(prefix);
             it != files_->end() && std::string_view(it->first).starts_with(prefix); ++it) {
            if (!it->second || it->second->encoding != "utf-8") continue;
            if (filter && !filter->matches(std::string_view(it->first).substr(prefix.size()))) continue;
            if (!detail::grep_text(it->first, it->second->content, pattern, r.matches, budget)) {
                r.truncated = true;
                break;
            }
        }
        return r;
    }

    fs_write_result remove(std::string_view path) const {
        fs_write_result r;
        r.path = path;
        boost::json::object update;
        if (find(path)) update[path] = nullptr;
        if (files_) {
            const std::string prefix = dir_prefix(path);
            if (prefix != "/" || path == "/")
                for (auto it = files_->lower_bound(prefix);
                     it != files_->end() && std::string_view(it->first).starts_with(prefix); ++it)
                    update[it->first] = nullptr;
        }
        if (update.empty()) {
            r.error = detail::file_not_found(path);
            return r;
        }
        r.files_update = std::move(update);
        return r;
    }

    /// Directories are implicit in the state (a file's path makes them): nothing to do.
    fs_write_result mkdir(std::string_view path) const {
        fs_write_result r;
        r.path = path;
        return r;
    }

private:
    const file_map* files_ = nullptr;

    const file_data* find(std::string_view path) const {
        if (!files_) return nullptr;
        auto it = files_->find(path);
        return it == files_->end() || !it->second ? nullptr : &*it->second;
    }
    static std::string dir_prefix(std::string_view path) {
        std::string p(path);
        if (p.empty() || p.back() != '/') p += '/';
        return p;
    }
};

static_assert(filesystem_backend<state_backend>);

namespace detail {

/// Folds a backend's files update into a state update (path by path).
inline void fs_merge_files_update(state_update& update, std::optional<boost::json::object>& files) {
    if (!files) return;
    auto& slot = update.fields[files_field::name];
    if (!slot.is_object()) slot = boost::json::object{};
    for (auto& [k, v] : *files)
        slot.as_object()[k] = std::move(v);
}

} // namespace detail

} // namespace agentware

#endif
