#ifndef AGENTWARE_MIDDLEWARE_SANDBOX_TOOLS_PRESENT_FILES_HPP
#define AGENTWARE_MIDDLEWARE_SANDBOX_TOOLS_PRESENT_FILES_HPP

// The sandbox's present_files tool: files under /mnt/user-data/outputs
// shown to the user, as an `artifacts` state update.

#include <agentware/detail/format.hpp>
#include <agentware/middleware/sandbox/tools/tool_call.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>
#include <agentware/thread/fields.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace agentware {

namespace detail {

inline tool_output present_files_body(const boost::json::object& args, const sandbox_call& call) {
    const auto* list = args.if_contains("filepaths");
    if (!list || !list->is_array())
        return error_output("Error: argument 'filepaths' must be a list of paths");
    const auto outputs = std::filesystem::path(weakly_canonical_string(call.paths->outputs_path));
    std::vector<std::string> normalized;
    for (const auto& v : list->get_array()) {
        const std::string p = v.is_string() ? std::string(v.get_string()) : boost::json::serialize(v);
        auto reject = [&] {
            // Text kept for parity with DeerFlow (reference §5.3).
            return error_output(
                detail::format("Error: Only files in /mnt/user-data/outputs can be presented: {}", p));
        };
        if (!v.is_string() || p.find('\0') != std::string::npos) return reject();
        std::filesystem::path host;
        if (has_path_prefix(p, virtual_user_data)) {
            // As DeerFlow's resolve_virtual_path: ".." is allowed while the
            // resolved path stays in the thread's user data; leaving it is
            // a traversal.
            std::error_code ec;
            const auto mapped = virtual_to_host_path(p, *call.paths);
            if (!mapped.empty()) host = std::filesystem::weakly_canonical(mapped, ec);
            const auto parent = common_parent(*call.paths);
            const bool inside = !ec && !host.empty() &&
                                (parent.empty() ? inside_thread_roots(host, *call.paths)
                                                : is_within(host, weakly_canonical_string(parent)));
            if (!inside) return error_output(path_error(text_path_traversal));
        } else {
            std::error_code ec;
            if (!std::filesystem::path(p).is_absolute()) return reject();
            host = std::filesystem::weakly_canonical(p, ec);
            if (ec) return reject();
        }
        if (!is_within(host, outputs) || host == outputs) return reject();
        normalized.push_back(detail::format("{}/{}", virtual_outputs,
                                            std::filesystem::relative(host, outputs).generic_string()));
    }
    tool_output out("Successfully presented files");
    out.update.set<artifacts_field>(normalized);
    return out;
}

} // namespace detail

} // namespace agentware

#endif
