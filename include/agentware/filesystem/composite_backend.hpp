#ifndef AGENTWARE_FILESYSTEM_COMPOSITE_BACKEND_HPP
#define AGENTWARE_FILESYSTEM_COMPOSITE_BACKEND_HPP

// Several backends behind one tree (deepagents' CompositeBackend): a path
// under a route's prefix goes to that route's backend with the prefix cut
// ("/memories/notes.md" reaches the memories backend as "/notes.md"; the
// longest matching prefix wins), every other path to the default backend.
// Paths in the results, and the keys of a `files` update, get the prefix
// back. Listing or searching "/" covers the default backend and every route.

#include <agentware/filesystem/backend.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

class composite_backend {
public:
    struct route {
        std::string prefix; ///< "/memories/" (a trailing "/" is added when missing)
        any_backend backend;
    };

    composite_backend(any_backend default_backend, std::vector<route> routes)
        : default_(std::move(default_backend)), routes_(std::move(routes)) {
        for (auto& r : routes_)
            if (r.prefix.empty() || r.prefix.back() != '/') r.prefix += '/';
        std::sort(routes_.begin(), routes_.end(),
                  [](const route& a, const route& b) { return a.prefix.size() > b.prefix.size(); });
    }

    bool can_execute() const noexcept { return default_.can_execute(); }

    fs_ls_result ls(std::string_view path) {
        auto [b, routed, r] = pick(path);
        fs_ls_result out = b->ls(routed);
        if (r) rebase(out.entries, *r);
        if (!r && path == "/")
            for (const auto& rt : routes_) {
                const std::string top = rt.prefix.substr(0, rt.prefix.find('/', 1) + 1);
                const bool listed = std::any_of(out.entries.begin(), out.entries.end(),
                                                [&](const fs_entry& e) { return e.path == top; });
                if (!listed) out.entries.push_back(fs_entry{top, true, 0, {}});
            }
        return out;
    }
    fs_read_result read(std::string_view path) {
        auto [b, routed, r] = pick(path);
        fs_read_result out = b->read(routed);
        if (r) fix_error(out.error, routed, path);
        return out;
    }
    fs_write_result write(std::string_view path, std::string_view content) {
        auto [b, routed, r] = pick(path);
        return finish(b->write(routed, content), routed, path, r);
    }
    fs_write_result edit(std::string_view path, std::string_view o, std::string_view n, bool all) {
        auto [b, routed, r] = pick(path);
        return finish(b->edit(routed, o, n, all), routed, path, r);
    }
    fs_write_result remove(std::string_view path) {
        auto [b, routed, r] = pick(path);
        return finish(b->remove(routed), routed, path, r);
    }
    fs_write_result mkdir(std::string_view path) {
        auto [b, routed, r] = pick(path);
        return finish(b->mkdir(routed), routed, path, r);
    }
    fs_glob_result glob(std::string_view pattern, std::string_view path) {
        auto [b, routed, r] = pick(path);
        fs_glob_result out = b->glob(pattern, routed);
        if (r) rebase(out.entries, *r);
        if (!r && path == "/")
            for (auto& rt : routes_) {
                fs_glob_result more = rt.backend.glob(pattern, "/");
                rebase(more.entries, rt);
                out.entries.insert(out.entries.end(), more.entries.begin(), more.entries.end());
            }
        return out;
    }
    fs_grep_result grep(std::string_view pattern, std::string_view path, std::string_view glob_filter,
                        std::size_t max_count) {
        auto [b, routed, r] = pick(path);
        fs_grep_result out = b->grep(pattern, routed, glob_filter, max_count);
        if (r)
            for (auto& m : out.matches)
                m.path = join(*r, m.path);
        if (!r && path == "/")
            for (auto& rt : routes_) {
                if (out.truncated || out.matches.size() >= max_count) break;
                fs_grep_result more =
                    rt.backend.grep(pattern, "/", glob_filter, max_count - out.matches.size());
                for (auto& m : more.matches)
                    out.matches.push_back(fs_grep_match{join(rt, m.path), m.line, std::move(m.text)});
                out.truncated = more.truncated;
            }
        return out;
    }
    execute_response execute(std::string_view command, std::optional<std::chrono::seconds> timeout) {
        return default_.execute(command, timeout);
    }

private:
    any_backend default_;
    std::vector<route> routes_;

    struct picked {
        any_backend* backend;
        std::string routed;
        const route* via;
    };
    picked pick(std::string_view path) {
        for (auto& r : routes_) {
            std::string_view dir(r.prefix.data(), r.prefix.size() - 1);
            if (path.starts_with(r.prefix))
                return {&r.backend, "/" + std::string(path.substr(r.prefix.size())), &r};
            if (path == dir) return {&r.backend, "/", &r};
        }
        return {&default_, std::string(path), nullptr};
    }
    static std::string join(const route& r, std::string_view routed) {
        return r.prefix.substr(0, r.prefix.size() - 1) + std::string(routed);
    }
    static void rebase(std::vector<fs_entry>& entries, const route& r) {
        for (auto& e : entries)
            e.path = join(r, e.path);
    }
    static void fix_error(std::string& error, std::string_view routed, std::string_view path) {
        if (error.empty()) return;
        const std::string quoted = "'" + std::string(routed) + "'";
        if (auto pos = error.find(quoted); pos != std::string::npos)
            error.replace(pos, quoted.size(), "'" + std::string(path) + "'");
    }
    static fs_write_result finish(fs_write_result res, std::string_view routed, std::string_view path,
                                  const route* r) {
        res.path = std::string(path);
        if (!r) return res;
        fix_error(res.error, routed, path);
        if (res.files_update) {
            boost::json::object keyed;
            for (auto& [k, v] : *res.files_update)
                keyed[join(*r, k)] = std::move(v);
            res.files_update = std::move(keyed);
        }
        return res;
    }
};

static_assert(filesystem_backend<composite_backend>);

} // namespace agentware

#endif
