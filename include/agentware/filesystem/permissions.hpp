#ifndef AGENTWARE_FILESYSTEM_PERMISSIONS_HPP
#define AGENTWARE_FILESYSTEM_PERMISSIONS_HPP

// Allow and deny rules for the filesystem tools (deepagents'
// FilesystemPermission): each rule names operations ("read", "write") and
// path globs ("/workspace/**"); the first rule matching both decides, and
// without one the operation is allowed. Reading covers ls, read_file, glob
// and grep (whose results are filtered too); writing covers write_file,
// edit_file, delete and mkdir.

#include <agentware/filesystem/detail/glob.hpp>
#include <agentware/json/reader.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_to.hpp>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace agentware {

enum class fs_operation { read, write };
enum class fs_permission_mode { allow, deny };

struct fs_permission {
    std::vector<fs_operation> operations;
    std::vector<std::string> paths; ///< globs of absolute paths ("/secrets/**")
    fs_permission_mode mode = fs_permission_mode::allow;

    friend bool operator==(const fs_permission&, const fs_permission&) = default;

    friend void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const fs_permission& p) {
        boost::json::array ops, paths;
        for (auto op : p.operations)
            ops.emplace_back(op == fs_operation::read ? "read" : "write");
        for (const auto& s : p.paths)
            paths.emplace_back(s);
        jv = boost::json::object{{"operations", std::move(ops)},
                                 {"paths", std::move(paths)},
                                 {"mode", p.mode == fs_permission_mode::allow ? "allow" : "deny"}};
    }
    friend fs_permission tag_invoke(boost::json::value_to_tag<fs_permission>, const boost::json::value& jv) {
        json_reader r(jv, "permissions[]");
        std::vector<std::string> ops;
        std::string mode = "allow";
        fs_permission p;
        r.read("operations", ops).read("paths", p.paths).read("mode", mode).reject_unknown_keys();
        for (const auto& op : ops) {
            if (op == "read")
                p.operations.push_back(fs_operation::read);
            else if (op == "write")
                p.operations.push_back(fs_operation::write);
            else
                throw std::invalid_argument(
                    "permissions[].operations: expected \"read\" or \"write\", got \"" + op + "\"");
        }
        if (mode == "allow")
            p.mode = fs_permission_mode::allow;
        else if (mode == "deny")
            p.mode = fs_permission_mode::deny;
        else
            throw std::invalid_argument("permissions[].mode: expected \"allow\" or \"deny\", got \"" + mode +
                                        "\" (\"interrupt\" needs the human_in_the_loop middleware)");
        for (const auto& path : p.paths)
            if (!path.starts_with('/') || path.find("..") != std::string::npos || path.starts_with('~'))
                throw std::invalid_argument("permissions[].paths: \"" + path +
                                            "\" must start with / and hold no .. or ~");
        return p;
    }
};

/// Whether `rules` let `op` touch `path` (a validated absolute path).
inline bool fs_permitted(const std::vector<fs_permission>& rules, fs_operation op, std::string_view path) {
    for (const auto& rule : rules) {
        bool op_listed = false;
        for (auto o : rule.operations)
            if (o == op) op_listed = true;
        if (!op_listed) continue;
        for (const auto& glob : rule.paths) {
            // Anchored at the root: "/a/**" matches "/a" and everything under it.
            std::vector<std::string> alts;
            detail::expand_braces(std::string_view(glob).substr(1), alts);
            for (const auto& alt : alts)
                if (detail::glob_match(alt, path.substr(1))) return rule.mode == fs_permission_mode::allow;
        }
    }
    return true;
}

} // namespace agentware

#endif
