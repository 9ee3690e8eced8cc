#ifndef AGENTWARE_MIDDLEWARE_THREAD_DATA_HPP
#define AGENTWARE_MIDDLEWARE_THREAD_DATA_HPP

// thread_data: gives each conversation thread its own workspace, uploads and
// outputs directories (DeerFlow's ThreadDataMiddleware) and records their host
// paths in the `thread_data` state field, where uploads, sandbox and
// view_image find them. Also stamps the run's last human message with the run
// id and time, as DeerFlow does.

#include <agentware/agent/runtime.hpp>
#include <agentware/core/fields.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>
#include <agentware/thread/fields.hpp>

#include <fmt/chrono.h>
#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>

namespace agentware {

struct thread_data_options {
    /// Where thread directories live; "" = $AGENTWARE_HOME, else ./.agentware.
    std::string base_dir;
    /// true: only compute the paths (tools create the directories on first
    /// use); false: create them in before_agent.
    bool lazy_init = true;

    static constexpr std::string_view config_section = "thread_data";
    friend bool operator==(const thread_data_options&, const thread_data_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const thread_data_options& o) {
    jv = boost::json::object{{"base_dir", o.base_dir}, {"lazy_init", o.lazy_init}};
}
inline thread_data_options tag_invoke(boost::json::value_to_tag<thread_data_options>,
                                      const boost::json::value& jv) {
    json_reader r(jv, std::string(thread_data_options::config_section));
    thread_data_options o;
    r.read("base_dir", o.base_dir).read("lazy_init", o.lazy_init).reject_unknown_keys();
    return o;
}

namespace detail {
/// UTC now as ISO 8601 with microseconds and "+00:00" (Python's isoformat()).
inline std::string utc_now_iso() {
    const auto now = std::chrono::system_clock::now();
    const auto micros =
        std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
    return detail::format("{:%Y-%m-%dT%H:%M:%S}.{:06}+00:00",
                          std::chrono::time_point_cast<std::chrono::seconds>(now), micros);
}
} // namespace detail

/// Per-thread directories: {base}/users/{user_id}/threads/{thread_id}/user-data/
/// {workspace,uploads,outputs}. The thread id is context["thread_id"] or the
/// run's; the user id is context["user_id"] or "default". Ids are validated
/// before any path is built: a bad one throws std::invalid_argument from
/// before_agent, which stops the run with that error and touches no file.
struct thread_data {
    using state_fields = fields<thread_data_field>;

    thread_data_options options;

    thread_data() = default;
    explicit thread_data(thread_data_options o) : options(std::move(o)) {}

    /// The paths of a thread (no directory is created).
    thread_paths paths_for(std::string_view thread_id, std::string_view user_id = "default") const {
        detail::validate_ids(thread_id, user_id);
        return detail::make_thread_paths(detail::resolve_base_dir(options.base_dir), user_id, thread_id);
    }

    template <class State>
    void before_agent(State& state, runtime& rt) const {
        const std::string thread_id = detail::context_thread_id(&rt.context, rt.thread_id);
        if (thread_id.empty())
            throw std::invalid_argument("Thread ID is required in runtime context or config.configurable");
        const std::string user_id = detail::context_user_id(&rt.context);
        thread_paths paths = paths_for(thread_id, user_id);
        if (!options.lazy_init) {
            detail::ensure_thread_dirs(paths);
            std::filesystem::create_directories(
                detail::thread_dir(detail::resolve_base_dir(options.base_dir), user_id, thread_id) /
                "acp-workspace");
        }
        get<thread_data_field>(state) = std::move(paths);

        if (!state.messages.empty() && state.messages.back().is_human()) {
            message& last = state.messages.back();
            if (last.name.empty()) last.name = "user-input";
            last.metadata["run_id"] = rt.run_id;
            last.metadata["timestamp"] = detail::utc_now_iso();
        }
    }
};

} // namespace agentware

#endif
