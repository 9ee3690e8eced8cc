#ifndef AGENTWARE_MIDDLEWARE_SANDBOX_TOOLS_CONTEXT_HPP
#define AGENTWARE_MIDDLEWARE_SANDBOX_TOOLS_CONTEXT_HPP

// What the sandbox tools of one sandbox middleware share: its options, its
// provider and the files its write_file wrote.

#include <agentware/middleware/sandbox/options.hpp>
#include <agentware/middleware/sandbox/provider.hpp>

#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace agentware {

namespace detail {

/// What the tools of one sandbox middleware share.
struct sandbox_tool_context {
    sandbox_options options;
    any_sandbox_provider provider;

    // Files the agent wrote with write_file, per sandbox: their contents had
    // virtual paths turned into host paths, which read_file turns back.
    std::mutex written_mutex;
    std::map<std::string, std::set<std::string>> written;

    void remember_written(const std::string& sandbox_id, const std::filesystem::path& p) {
        std::lock_guard lock(written_mutex);
        written[sandbox_id].insert(p.string());
    }
    bool was_written(const std::string& sandbox_id, const std::filesystem::path& p) {
        std::lock_guard lock(written_mutex);
        auto it = written.find(sandbox_id);
        return it != written.end() && it->second.count(p.string()) != 0;
    }
};

} // namespace detail

} // namespace agentware

#endif
