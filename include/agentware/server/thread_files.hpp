#ifndef AGENTWARE_SERVER_THREAD_FILES_HPP
#define AGENTWARE_SERVER_THREAD_FILES_HPP

// The files of a thread over HTTP, as DeerFlow's gateway serves them to its
// web UI: uploads into the thread's uploads folder (multipart/form-data),
// their list and removal, the artifacts (any file of the thread's user data,
// by its virtual path /mnt/user-data/...), and the removal of a thread's
// folder. The folders are the ones the thread_data middleware gives the
// agent ({base}/users/{user}/threads/{thread}/user-data/{workspace,uploads,
// outputs}), so a file uploaded here is the file the agent reads.
//
// Every path a client names is resolved and checked before a file is opened:
// no `..`, nothing outside the thread's folders, no symbolic link on the way
// (resolve_model_path, the check the agent's own tools go through).

#include <agentware/detail/format.hpp>
#include <agentware/server/detail/http_files.hpp>
#include <agentware/server/http.hpp>
#include <agentware/server/multipart.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>
#include <agentware/thread/id.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace agentware::server {

/// DeerFlow's upload limits (config.yaml `uploads:`; its defaults).
struct upload_limits {
    std::size_t max_files = 10;
    std::uint64_t max_file_size = 50ull * 1024 * 1024;
    std::uint64_t max_total_size = 100ull * 1024 * 1024;
};

struct thread_files_options {
    /// Where thread folders live, as thread_data's `base_dir` ("": $AGENTWARE_HOME, else ./.agentware).
    std::string base_dir;
    /// The user whose threads these are (DeerFlow without accounts: "default").
    std::string user_id = "default";
    upload_limits limits;
};

namespace detail {

inline constexpr std::string_view upload_staging_prefix = ".upload-";
inline constexpr std::string_view upload_staging_suffix = ".part";

/// The name an uploaded file is stored under: the last component of what the
/// client sent (browsers send bare names; some send a path). Throws
/// std::invalid_argument with the reason for a name that cannot be a file name.
inline std::string upload_file_name(std::string_view sent) {
    const auto quoted = agentware::detail::quoted_excerpt(sent, 80);
    std::string_view name = sent;
    if (const auto slash = name.rfind('/'); slash != std::string_view::npos) name = name.substr(slash + 1);
    if (name.empty() || name == "." || name == "..")
        throw std::invalid_argument(agentware::detail::format("Filename is unsafe: {}", quoted));
    if (name.find('\\') != std::string_view::npos)
        throw std::invalid_argument(agentware::detail::format("Filename contains backslash: {}", quoted));
    for (unsigned char c : name)
        if (c < 0x20 || c == 0x7f)
            throw std::invalid_argument(
                agentware::detail::format("Filename contains a control character: {}", quoted));
    if (name.size() > 255)
        throw std::invalid_argument(agentware::detail::format("Filename too long: {} bytes", name.size()));
    if (name.starts_with(upload_staging_prefix) && name.ends_with(upload_staging_suffix))
        throw std::invalid_argument(
            agentware::detail::format("Filename is reserved for uploads in progress: {}", quoted));
    return std::string(name);
}

/// `name`, or `stem_1.ext`, `stem_2.ext`, ... when a file of this request took it.
inline std::string claim_unique_name(const std::string& name, std::set<std::string>& seen) {
    if (seen.insert(name).second) return name;
    const std::filesystem::path p(name);
    const std::string stem = p.stem().string(), ext = p.extension().string();
    for (int n = 1;; ++n) {
        std::string candidate = agentware::detail::format("{}_{}{}", stem, n, ext);
        if (seen.insert(candidate).second) return candidate;
    }
}

inline double file_mtime_seconds(const std::filesystem::path& p) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return 0;
    return double(st.st_mtim.tv_sec) + double(st.st_mtim.tv_nsec) / 1e9;
}

} // namespace detail

/// The thread-file routes of DeerFlow's gateway; add_routes puts them on a router.
class thread_files {
public:
    explicit thread_files(thread_files_options o) : options_(std::move(o)) {}

    const thread_files_options& options() const noexcept { return options_; }

    /// The thread's folders (no folder is created); throws std::invalid_argument for a bad id.
    thread_paths paths(std::string_view thread_id) const {
        agentware::detail::validate_ids(thread_id, options_.user_id);
        return agentware::detail::make_thread_paths(agentware::detail::resolve_base_dir(options_.base_dir),
                                                    options_.user_id, thread_id);
    }

    /// Puts the routes on `r`; `keep_alive` (this object's owner) is held by them.
    void add_routes(router& r, std::shared_ptr<const void> keep_alive = {}) {
        auto add = [&](std::string method, std::string pattern,
                       http_response (thread_files::*f)(http_request&)) {
            r.add(std::move(method), std::move(pattern), detail::gateway_handler(this, f, keep_alive));
        };
        add("POST", "/api/threads/{thread_id}/uploads", &thread_files::upload);
        add("GET", "/api/threads/{thread_id}/uploads/list", &thread_files::list);
        add("GET", "/api/threads/{thread_id}/uploads/limits", &thread_files::limits);
        add("DELETE", "/api/threads/{thread_id}/uploads/{filename}", &thread_files::remove_upload);
        add("GET", "/api/threads/{thread_id}/artifacts/{path:path}", &thread_files::artifact);
        add("DELETE", "/api/threads/{thread_id}", &thread_files::remove_thread);
    }

private:
    // The thread's paths, or the 422 DeerFlow answers for an id that is not one.
    std::optional<thread_paths> thread_or(const http_request& q, http_response& error) const {
        try {
            return paths(q.param("thread_id"));
        } catch (const std::invalid_argument& e) {
            error = http_response::detail(422, e.what());
            return std::nullopt;
        }
    }

    // A folder of the thread that is a symbolic link (placed by something the
    // agent ran) would take every check's root elsewhere: refused.
    static bool roots_are_real(const thread_paths& p) {
        namespace fs = std::filesystem;
        const fs::path data = fs::path(p.uploads_path).parent_path();
        std::error_code ec;
        for (const fs::path& d :
             {data, fs::path(p.workspace_path), fs::path(p.uploads_path), fs::path(p.outputs_path)})
            if (fs::is_symlink(fs::symlink_status(d, ec))) return false;
        return true;
    }

    std::string artifact_url(std::string_view thread_id, std::string_view filename) const {
        return agentware::detail::format("/api/threads/{}/artifacts{}/{}", thread_id,
                                         agentware::detail::virtual_uploads, detail::url_quote(filename));
    }

    http_response upload(http_request& q) {
        namespace fs = std::filesystem;
        http_response error;
        auto td = thread_or(q, error);
        if (!td) return error;
        std::vector<form_part> parts;
        try {
            parts = parse_multipart(q.body, q.header("content-type"));
        } catch (const std::invalid_argument& e) {
            return http_response::detail(422, e.what());
        }
        std::erase_if(parts, [](const form_part& p) { return p.name != "files" || !p.has_filename; });
        if (parts.empty()) return http_response::detail(400, "No files provided");
        const upload_limits& lim = options_.limits;
        if (parts.size() > lim.max_files)
            return http_response::detail(
                413, agentware::detail::format("Too many files: maximum is {}", lim.max_files));
        // Every name and size is checked before the first file is written.
        std::vector<std::pair<std::string, std::string>> names; // stored, as sent (sanitised)
        std::set<std::string> seen;
        std::uint64_t total = 0;
        for (const auto& p : parts) {
            if (p.filename.empty()) continue; // a file input left empty
            std::string clean;
            try {
                clean = detail::upload_file_name(p.filename);
            } catch (const std::invalid_argument& e) {
                return http_response::detail(400, e.what());
            }
            if (p.data.size() > lim.max_file_size)
                return http_response::detail(413, agentware::detail::format("File too large: {}", clean));
            total += p.data.size();
            if (total > lim.max_total_size) return http_response::detail(413, "Total upload size too large");
            names.emplace_back(detail::claim_unique_name(clean, seen), clean);
        }
        if (names.empty()) return http_response::detail(400, "No files provided");
        if (!roots_are_real(*td)) return http_response::detail(403, "Access denied: path traversal detected");
        std::error_code ec;
        fs::create_directories(td->uploads_path, ec);
        if (ec) return http_response::detail(500, "Failed to create the thread's uploads folder");

        boost::json::array files;
        boost::json::array skipped;
        const std::string thread_id = q.param("thread_id");
        std::size_t i = 0;
        for (const auto& p : parts) {
            if (p.filename.empty()) continue;
            const auto& [stored, sent] = names[i++];
            const fs::path dest = fs::path(td->uploads_path) / stored;
            if (!write_upload(dest, p.data)) {
                skipped.emplace_back(stored);
                continue;
            }
            boost::json::object info{
                {"filename", stored},
                {"size", p.data.size()},
                {"path", dest.string()},
                {"virtual_path", std::string(agentware::detail::virtual_uploads) + "/" + stored},
                {"artifact_url", artifact_url(thread_id, stored)}};
            if (stored != sent) info["original_filename"] = sent;
            files.push_back(std::move(info));
        }
        std::string message = agentware::detail::format("Successfully uploaded {} file(s)", files.size());
        if (!skipped.empty())
            message += agentware::detail::format("; skipped {} unsafe file(s)", skipped.size());
        return http_response::json(boost::json::object{{"success", skipped.empty()},
                                                       {"files", std::move(files)},
                                                       {"message", std::move(message)},
                                                       {"skipped_files", std::move(skipped)}});
    }

    // Writes beside the destination and renames over it, so a reader never
    // sees half a file; a destination that is not a plain file of its own (a
    // symbolic link, a hard link, a folder) is left alone: false.
    static bool write_upload(const std::filesystem::path& dest, std::string_view data) {
        namespace fs = std::filesystem;
        struct stat st {};
        if (::lstat(dest.c_str(), &st) == 0 && (!S_ISREG(st.st_mode) || st.st_nlink > 1)) return false;
        static std::atomic<unsigned> counter{0};
        const fs::path tmp = dest.parent_path() /
                             agentware::detail::format("{}{}-{}{}", detail::upload_staging_prefix, ::getpid(),
                                                       counter++, detail::upload_staging_suffix);
        const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) return false;
        std::size_t done = 0;
        while (done < data.size()) {
            const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
            if (n <= 0) break;
            done += std::size_t(n);
        }
        const bool ok = ::close(fd) == 0 && done == data.size();
        std::error_code ec;
        if (ok) fs::rename(tmp, dest, ec);
        if (!ok || ec) {
            fs::remove(tmp, ec);
            return false;
        }
        return true;
    }

    http_response list(http_request& q) {
        namespace fs = std::filesystem;
        http_response error;
        auto td = thread_or(q, error);
        if (!td) return error;
        const std::string thread_id = q.param("thread_id");
        boost::json::array files;
        std::error_code ec;
        if (roots_are_real(*td) && fs::is_directory(td->uploads_path, ec)) {
            std::vector<fs::directory_entry> entries;
            for (const auto& e : fs::directory_iterator(td->uploads_path, ec))
                entries.push_back(e);
            std::sort(entries.begin(), entries.end(),
                      [](const auto& a, const auto& b) { return a.path().filename() < b.path().filename(); });
            for (const auto& e : entries) {
                const std::string name = e.path().filename().string();
                if (name.starts_with(detail::upload_staging_prefix) &&
                    name.ends_with(detail::upload_staging_suffix))
                    continue;
                if (!e.is_regular_file(ec) || e.is_symlink(ec)) continue;
                files.push_back(boost::json::object{
                    {"filename", name},
                    {"size", static_cast<std::uint64_t>(e.file_size(ec))},
                    {"path", e.path().string()},
                    {"virtual_path", std::string(agentware::detail::virtual_uploads) + "/" + name},
                    {"artifact_url", artifact_url(thread_id, name)},
                    {"extension", e.path().extension().string()},
                    {"modified", detail::file_mtime_seconds(e.path())}});
            }
        }
        const std::size_t count = files.size();
        return http_response::json(boost::json::object{{"files", std::move(files)}, {"count", count}});
    }

    http_response limits(http_request& q) {
        http_response error;
        if (!thread_or(q, error)) return error;
        const upload_limits& l = options_.limits;
        return http_response::json(boost::json::object{{"max_files", l.max_files},
                                                       {"max_file_size", l.max_file_size},
                                                       {"max_total_size", l.max_total_size}});
    }

    http_response remove_upload(http_request& q) {
        namespace fs = std::filesystem;
        http_response error;
        auto td = thread_or(q, error);
        if (!td) return error;
        const std::string filename = q.param("filename");
        if (!roots_are_real(*td)) return http_response::detail(400, "Invalid path");
        std::error_code ec;
        const fs::path root = fs::weakly_canonical(td->uploads_path, ec);
        const fs::path target = fs::weakly_canonical(fs::path(td->uploads_path) / filename, ec);
        if (ec || filename.find('\0') != std::string::npos || target == root ||
            !agentware::detail::is_within(target, root))
            return http_response::detail(400, "Invalid path");
        if (!fs::is_regular_file(target, ec))
            return http_response::detail(404, agentware::detail::format("File not found: {}", filename));
        if (!fs::remove(target, ec) || ec)
            return http_response::detail(500, agentware::detail::format("Failed to delete {}", filename));
        return http_response::json(boost::json::object{
            {"success", true}, {"message", agentware::detail::format("Deleted {}", filename)}});
    }

    http_response artifact(http_request& q) {
        namespace fs = std::filesystem;
        http_response error;
        auto td = thread_or(q, error);
        if (!td) return error;
        std::string path = q.param("path");
        while (path.starts_with('/'))
            path.erase(0, 1);
        if (path != "mnt/user-data" && !path.starts_with("mnt/user-data/"))
            return http_response::detail(400, "Path must start with /mnt/user-data");
        if (!roots_are_real(*td)) return http_response::detail(403, "Access denied: path traversal detected");
        const auto resolved =
            agentware::detail::resolve_model_path("/" + path, &*td, agentware::detail::path_access::read);
        if (!resolved.ok())
            return http_response::detail(resolved.error.find("traversal") != std::string::npos ? 403 : 400,
                                         resolved.error);
        std::error_code ec;
        const auto status = fs::status(resolved.host, ec);
        if (!fs::exists(status))
            return http_response::detail(404, agentware::detail::format("Artifact not found: {}", path));
        if (!fs::is_regular_file(status))
            return http_response::detail(400, agentware::detail::format("Path is not a file: {}", path));
        auto bytes = detail::read_file_bytes(resolved.host);
        if (!bytes)
            return http_response::detail(404, agentware::detail::format("Artifact not found: {}", path));

        const std::string name = resolved.host.filename().string();
        std::string type(detail::media_type_of(name));
        const auto download = q.query_value("download");
        const bool attach =
            (download && (*download == "true" || *download == "1")) || detail::is_active_content(type);
        if (type.empty())
            type = bytes->substr(0, 8192).find('\0') == std::string::npos ? "text/plain"
                                                                          : "application/octet-stream";
        if (type.starts_with("text/")) type += "; charset=utf-8";

        http_response r;
        r.content_type = type;
        r.headers.emplace_back("content-disposition",
                               detail::content_disposition(attach ? "attachment" : "inline", name));
        r.headers.emplace_back("accept-ranges", "bytes");
        const std::string range = q.header("range");
        if (!attach && !range.empty() && q.header("if-range").empty()) {
            const auto br = detail::parse_byte_range(range, bytes->size());
            if (!br) {
                auto refused = http_response::detail(416, "Requested range is not satisfiable");
                refused.headers.emplace_back("content-range",
                                             agentware::detail::format("bytes */{}", bytes->size()));
                return refused;
            }
            r.status = 206;
            r.headers.emplace_back("content-range", agentware::detail::format("bytes {}-{}/{}", br->first,
                                                                              br->last, bytes->size()));
            r.body = bytes->substr(br->first, br->last - br->first + 1);
            return r;
        }
        r.body = std::move(*bytes);
        return r;
    }

    http_response remove_thread(http_request& q) {
        namespace fs = std::filesystem;
        const std::string thread_id = q.param("thread_id");
        try {
            agentware::detail::validate_ids(thread_id, options_.user_id);
        } catch (const std::invalid_argument& e) {
            return http_response::detail(422, e.what());
        }
        const fs::path dir = agentware::detail::thread_dir(
            agentware::detail::resolve_base_dir(options_.base_dir), options_.user_id, thread_id);
        std::error_code ec;
        if (!fs::exists(fs::symlink_status(dir, ec)))
            return http_response::json(boost::json::object{
                {"success", true},
                {"message", agentware::detail::format("No local data for {}", thread_id)}});
        fs::remove_all(dir, ec); // a symbolic link inside is removed, never followed
        if (ec) return http_response::detail(500, "Failed to delete local thread data.");
        return http_response::json(boost::json::object{
            {"success", true},
            {"message", agentware::detail::format("Deleted local thread data for {}", thread_id)}});
    }

    thread_files_options options_;
};

} // namespace agentware::server

#endif
