#ifndef AGENTWARE_MIDDLEWARE_SANDBOX_OPTIONS_HPP
#define AGENTWARE_MIDDLEWARE_SANDBOX_OPTIONS_HPP

// The sandbox middleware's settings and its tools' (DeerFlow's `sandbox:`
// configuration) with their JSON form, and the provider names `sandbox.use`
// accepts.

#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/middleware/sandbox/bubblewrap.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>

namespace agentware {

/// Settings of the sandbox middleware and its tools (DeerFlow's `sandbox:`
/// configuration, with its defaults).
struct sandbox_options {
    /// The provider: "local" (the host file system; DeerFlow's class path
    /// "deerflow.sandbox.local:LocalSandboxProvider" is read as "local") or
    /// "isolated" (bash runs under bubblewrap, see sandbox/bubblewrap.hpp). Any
    /// other name is refused when the settings are read (sandbox_provider_names).
    std::string use = "local";
    /// The isolated sandbox's limits (used when `use` is "isolated").
    isolation_options isolation;
    /// true: acquire on the first tool call; false: in before_agent.
    bool lazy_init = true;
    /// Offer `bash`, which runs on the host: only in a fully trusted setup.
    bool allow_host_bash = false;
    /// A bash command is killed, with its whole process group, after this long.
    std::chrono::milliseconds bash_command_timeout = std::chrono::seconds(600);
    /// bash output is middle-truncated to this many characters (0 = off).
    std::size_t bash_output_max_chars = 20000;
    /// Each of stdout and stderr is captured up to this many bytes.
    std::size_t bash_capture_max_bytes = 10 * 1024 * 1024;
    /// read_file output is head-truncated to this many characters (0 = off).
    std::size_t read_file_output_max_chars = 50000;
    /// ls output is head-truncated to this many characters (0 = off).
    std::size_t ls_output_max_chars = 20000;
    /// A single non-append write_file larger than this is refused (0 = off).
    std::size_t write_file_max_bytes = 80 * 1024;
    /// Upper bounds of the glob and grep `max_results` arguments.
    std::size_t glob_max_results = 1000;
    std::size_t grep_max_results = 500;
    /// One glob or grep call stops with an error after this long (0 = no limit).
    std::chrono::milliseconds search_timeout = std::chrono::seconds(30);

    static constexpr std::string_view config_section = "sandbox";
    friend bool operator==(const sandbox_options&, const sandbox_options&) = default;

    bool isolated() const noexcept { return use == "isolated"; }
    /// bash is offered: always in the isolated sandbox, on the host only when allowed.
    bool offers_bash() const noexcept { return isolated() || allow_host_bash; }
};

/// The provider names `sandbox.use` accepts. A provider is added here and in
/// make_sandbox_provider (middleware/sandbox.hpp), where the name becomes a
/// provider object.
inline constexpr std::string_view sandbox_provider_names[] = {"local", "isolated",
                                                              "deerflow.sandbox.local:LocalSandboxProvider"};

namespace detail {
inline boost::json::value seconds_json(std::chrono::milliseconds d) {
    const auto ms = d.count();
    return ms % 1000 == 0 ? boost::json::value(ms / 1000) : boost::json::value(ms / 1000.0);
}
} // namespace detail

/// DeerFlow's `sandbox:` keys; `bash_command_timeout` and `search_timeout`
/// are in seconds (a fraction when not whole seconds).
inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const sandbox_options& o) {
    jv = boost::json::object{{"use", o.use},
                             {"isolation", boost::json::value_from(o.isolation)},
                             {"lazy_init", o.lazy_init},
                             {"allow_host_bash", o.allow_host_bash},
                             {"bash_command_timeout", detail::seconds_json(o.bash_command_timeout)},
                             {"bash_output_max_chars", o.bash_output_max_chars},
                             {"bash_capture_max_bytes", o.bash_capture_max_bytes},
                             {"read_file_output_max_chars", o.read_file_output_max_chars},
                             {"ls_output_max_chars", o.ls_output_max_chars},
                             {"write_file_max_bytes", o.write_file_max_bytes},
                             {"glob_max_results", o.glob_max_results},
                             {"grep_max_results", o.grep_max_results},
                             {"search_timeout", detail::seconds_json(o.search_timeout)}};
}
inline sandbox_options tag_invoke(boost::json::value_to_tag<sandbox_options>, const boost::json::value& jv) {
    json_reader r(jv, std::string(sandbox_options::config_section));
    sandbox_options o;
    r.read("use", o.use)
        .read("isolation", o.isolation)
        .read("lazy_init", o.lazy_init)
        .read("allow_host_bash", o.allow_host_bash)
        .read("bash_command_timeout", o.bash_command_timeout)
        .read("bash_output_max_chars", o.bash_output_max_chars)
        .read("bash_capture_max_bytes", o.bash_capture_max_bytes)
        .read("read_file_output_max_chars", o.read_file_output_max_chars)
        .read("ls_output_max_chars", o.ls_output_max_chars)
        .read("write_file_max_bytes", o.write_file_max_bytes)
        .read("glob_max_results", o.glob_max_results)
        .read("grep_max_results", o.grep_max_results)
        .read("search_timeout", o.search_timeout)
        .reject_unknown_keys();
    if (std::find(std::begin(sandbox_provider_names), std::end(sandbox_provider_names), o.use) ==
        std::end(sandbox_provider_names))
        throw json_error(r.path_of("use"), detail::format("unknown sandbox provider \"{}\" (known: {})",
                                                          o.use, fmt::join(sandbox_provider_names, ", ")));
    if (o.use == "deerflow.sandbox.local:LocalSandboxProvider") o.use = "local";
    return o;
}

} // namespace agentware

#endif
