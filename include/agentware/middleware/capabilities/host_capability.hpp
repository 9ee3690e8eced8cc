#ifndef AGENTWARE_MIDDLEWARE_CAPABILITIES_HOST_CAPABILITY_HPP
#define AGENTWARE_MIDDLEWARE_CAPABILITIES_HOST_CAPABILITY_HPP

// The working directory of the host capabilities (search_tools, text_tools,
// git_tools, shell_tools; web_tools shares only host_capability): paths the model gives are taken relative to
// it and may not leave it, through "..", an absolute path or a symlink.

#include <agentware/detail/format.hpp>
#include <agentware/detail/process.hpp>
#include <agentware/message/detail/output_limits.hpp>
#include <agentware/middleware/detail/tool_args.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>
#include <agentware/thread/fields.hpp>
#include <agentware/tool/make_tool.hpp>
#include <agentware/tool/tool_set.hpp>

#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace agentware::detail {

/// A working directory, canonical.
struct working_dir {
    std::filesystem::path root;
    thread_paths roots; ///< the root as the three thread roots (for walk_tree's symlink rule)

    explicit working_dir(const std::string& dir) {
        std::error_code ec;
        root = std::filesystem::canonical(dir.empty() ? std::string(".") : dir, ec);
        if (ec || !std::filesystem::is_directory(root, ec))
            throw std::invalid_argument("root_dir: \"" + dir + "\" is not a directory");
        roots = thread_paths{root.string(), root.string(), root.string()};
    }

    /// The host path of `rel` (relative to the root, or absolute inside it);
    /// nullopt with `error` set when it is malformed or leads outside.
    std::optional<std::filesystem::path> resolve(std::string_view rel, std::string& error) const {
        if (rel.find('\0') != std::string_view::npos) {
            error = "Error: the path contains a NUL byte";
            return std::nullopt;
        }
        if (rel.size() > 4096) {
            error = "Error: the path is too long";
            return std::nullopt;
        }
        std::filesystem::path p(rel.empty() ? std::string(".") : std::string(rel));
        std::error_code ec;
        auto full = std::filesystem::weakly_canonical(p.is_absolute() ? p : root / p, ec);
        if (ec || !is_within(full, root)) {
            error = detail::format("Error: {} is outside the working directory", rel);
            return std::nullopt;
        }
        return full;
    }

    /// `p` relative to the root, '/'-separated ("." for the root).
    std::string relative(const std::filesystem::path& p) const {
        auto r = p.lexically_relative(root).generic_string();
        return r.empty() ? std::string(".") : r;
    }
};

/// The program `name` on PATH, or "" when there is none.
inline std::string find_program(std::string_view name) {
    const char* path = std::getenv("PATH");
    std::string_view dirs = path ? path : "/usr/bin:/bin";
    while (!dirs.empty()) {
        const auto colon = dirs.find(':');
        std::string_view dir = dirs.substr(0, colon);
        dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
        if (dir.empty()) continue;
        std::filesystem::path candidate = std::filesystem::path(std::string(dir)) / std::string(name);
        std::error_code ec;
        if (std::filesystem::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0)
            return candidate.string();
    }
    return {};
}

/// A command's output for the model: stdout, then stderr, cut in the middle
/// past `cap` characters.
inline std::string command_text(const command_outcome& r, std::size_t cap) {
    std::string out = r.out.data;
    if (!r.err.data.empty()) {
        if (!out.empty() && out.back() != '\n') out += '\n';
        out += r.err.data;
    }
    return middle_truncate(out, cap);
}

/// A tool of a host capability: `body(working_dir, options, args, err)`
/// answers; a bad argument or anything thrown is an error text.
template <class Options, class Body>
std::shared_ptr<tool_interface>
working_dir_tool(std::shared_ptr<const working_dir> wd, std::shared_ptr<const Options> options,
                 std::string name, std::string description, std::string_view schema, Body body) {
    return share_tool(make_tool(std::move(name), std::move(description), schema,
                                [wd, options, body](const boost::json::object& args) {
                                    return call_reading_args(args,
                                                             [&](const boost::json::object& a, auto& err) {
                                                                 return body(*wd, *options, a, err);
                                                             });
                                }));
}

/// What the host capabilities share: their options and tools, and leaving
/// some tools out (those a tool policy switches off).
template <class Options>
class host_capability {
public:
    const Options& options() const noexcept { return options_; }
    const std::vector<std::shared_ptr<tool_interface>>& tools() const noexcept { return tools_; }
    /// Leaves out the tools whose names `names` contains (a set of names).
    template <class Names>
    void drop_tools(const Names& names) {
        std::erase_if(tools_, [&](const auto& t) { return names.contains(t->schema().name); });
    }
    /// Leaves out every tool (a policy that switches the capability off).
    void drop_all_tools() noexcept { tools_.clear(); }

protected:
    host_capability() = default;
    explicit host_capability(Options o) : options_(std::move(o)) {}

    /// Adds a tool that works in `options_.root_dir` (working_dir_tool): the
    /// capability's tools share one working directory and one copy of the options.
    template <class Body>
    void add_tool(std::string name, std::string description, std::string_view schema, Body body) {
        if (!working_dir_) {
            working_dir_ = std::make_shared<const working_dir>(options_.root_dir);
            shared_options_ = std::make_shared<const Options>(options_);
        }
        tools_.push_back(working_dir_tool(working_dir_, shared_options_, std::move(name),
                                          std::move(description), schema, body));
    }

    Options options_;
    std::vector<std::shared_ptr<tool_interface>> tools_;

private:
    std::shared_ptr<const working_dir> working_dir_;
    std::shared_ptr<const Options> shared_options_;
};

} // namespace agentware::detail

#endif
