#ifndef AGENTWARE_FILESYSTEM_PERMISSIONS_HPP
#define AGENTWARE_FILESYSTEM_PERMISSIONS_HPP

// Allow and deny rules for the filesystem tools (deepagents'
// FilesystemPermission): each rule names operations ("read", "write") and
// path globs ("/workspace/**"); the first rule matching both decides, and
// without one the operation is allowed. Reading covers ls, read_file, glob
// and grep (whose results are filtered too); writing covers write_file,
// edit_file, delete and mkdir.

#include <agentware/detail/format.hpp>
#include <agentware/filesystem/detail/glob.hpp>
#include <agentware/json/reader.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_to.hpp>

#include <cstddef>
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
        // Paths relative to this rule: whoever reads the list puts
        // "permissions[i]" in front.
        json_reader r(jv);
        std::vector<std::string> ops;
        std::string mode = "allow";
        fs_permission p;
        r.read("operations", ops).read("paths", p.paths).read("mode", mode).reject_unknown_keys();
        for (std::size_t i = 0; i < ops.size(); ++i)
            p.operations.push_back(json_choose(
                detail::json_path(r.path_of("operations"), detail::format("[{}]", i)), ops[i],
                {json_choice_of<fs_operation>{"read", fs_operation::read}, {"write", fs_operation::write}}));
        if (mode == "interrupt")
            throw json_error(r.path_of("mode"),
                             "\"interrupt\" needs the human_in_the_loop middleware (expected "
                             "\"allow\" or \"deny\")");
        p.mode = json_choose(r.path_of("mode"), mode,
                             {json_choice_of<fs_permission_mode>{"allow", fs_permission_mode::allow},
                              {"deny", fs_permission_mode::deny}});
        for (std::size_t i = 0; i < p.paths.size(); ++i) {
            const std::string& path = p.paths[i];
            if (!path.starts_with('/') || path.find("..") != std::string::npos || path.starts_with('~'))
                throw json_error(detail::json_path(r.path_of("paths"), detail::format("[{}]", i)),
                                 "\"" + path + "\" must start with / and hold no .. or ~");
        }
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
