#ifndef AGENTWARE_MIDDLEWARE_SANDBOX_HPP
#define AGENTWARE_MIDDLEWARE_SANDBOX_HPP

// sandbox: the environment a thread's file and shell tools run in (DeerFlow's
// SandboxMiddleware). A provider hands out one sandbox per thread, which the
// thread keeps across turns (its id in the `sandbox` state field); the
// middleware brings the sandbox tools and tells the provider at the end of
// every run that the run is done with it.

#include <agentware/agent/runtime.hpp>
#include <agentware/core/fields.hpp>
#include <agentware/core/type_list.hpp>
#include <agentware/middleware/sandbox/provider.hpp>
#include <agentware/middleware/sandbox/tools.hpp>
#include <agentware/middleware/thread_data.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>
#include <agentware/thread/fields.hpp>

#include <algorithm>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace agentware {

/// The provider `options.use` names: the one place where a provider name
/// becomes a provider (the names themselves are listed in
/// sandbox_provider_names, which the settings are checked against). "local"
/// and DeerFlow's class path are the host file system; "isolated" runs bash
/// under bubblewrap.
inline any_sandbox_provider make_sandbox_provider(const sandbox_options& options) {
    if (std::find(std::begin(sandbox_provider_names), std::end(sandbox_provider_names), options.use) ==
        std::end(sandbox_provider_names))
        throw std::invalid_argument("sandbox: unknown provider \"" + options.use + "\"");
    if (options.isolated()) return isolated_sandbox_provider{};
    return local_sandbox_provider{};
}

/// Acquires (lazily by default) and releases the thread's sandbox, and offers
/// the sandbox tools.
///
/// Lazy acquisition happens in the first sandbox tool call of a thread: the
/// tool returns the id as a `sandbox` update, so no wrap_tool_call is needed
/// to carry it into the state (DeerFlow needs one because its tools write a
/// state snapshot that is not persisted).
struct sandbox {
    using state_fields = fields<thread_data_field, sandbox_field, artifacts_field>;
    using must_come_after = type_list<thread_data>;

    /// With the provider `options.use` names (make_sandbox_provider).
    explicit sandbox(sandbox_options options = {}) : sandbox(options, make_sandbox_provider(options)) {}

    /// With a provider of the caller's (`options.use` is then not consulted).
    sandbox(sandbox_options options, any_sandbox_provider provider)
        : ctx_(std::make_shared<detail::sandbox_tool_context>()) {
        ctx_->options = std::move(options);
        ctx_->provider = std::move(provider);
    }

    const sandbox_options& options() const noexcept { return ctx_->options; }
    any_sandbox_provider& provider() noexcept { return ctx_->provider; }

    /// Eager acquisition (lazy_init = false), when the thread holds no sandbox yet.
    template <class State>
    void before_agent(State& state, runtime& rt) {
        if (ctx_->options.lazy_init) return;
        auto& sb = get<sandbox_field>(state);
        if (sb && sb->sandbox_id) return;
        const std::string thread_id = detail::context_thread_id(&rt.context, rt.thread_id);
        const std::string user_id = detail::context_user_id(&rt.context);
        detail::validate_ids(thread_id, user_id);
        sandbox_field::merge(sb, sandbox_state{ctx_->provider.acquire(thread_id, user_id)});
    }

    /// Every run ends its use of the sandbox: the one in the state, else one a
    /// tool named in context["sandbox_id"].
    template <class State>
    void after_agent(State& state, runtime& rt) {
        if (const auto& sb = get<sandbox_field>(state); sb && sb->sandbox_id) {
            ctx_->provider.release(*sb->sandbox_id);
        } else if (const auto* id = rt.context.if_contains("sandbox_id"); id && id->is_string()) {
            ctx_->provider.release(id->get_string());
        }
    }

    /// bash (when isolated or allow_host_bash), ls, read_file, write_file, str_replace,
    /// glob, grep and present_files.
    std::vector<std::shared_ptr<tool_interface>> tools() const { return make_sandbox_tools(ctx_); }

private:
    std::shared_ptr<detail::sandbox_tool_context> ctx_; // shared with the tools
};

} // namespace agentware

#endif
