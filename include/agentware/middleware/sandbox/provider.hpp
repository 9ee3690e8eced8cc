#ifndef AGENTWARE_MIDDLEWARE_SANDBOX_PROVIDER_HPP
#define AGENTWARE_MIDDLEWARE_SANDBOX_PROVIDER_HPP

// Sandbox providers: who hands out the environment a thread's tools run in.
// A provider acquires a sandbox for a (thread, user), which the thread keeps
// across turns (its id is in the `sandbox` state field), and is told at the
// end of every run that the run no longer needs it (release); what release
// does is the provider's business (the local provider keeps everything).

#include <agentware/detail/format.hpp>

#include <fmt/core.h>

#include <concepts>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace agentware {

/// A sandbox provider: `acquire(thread_id, user_id)` returns the sandbox id
/// for that thread (the same id again for a thread that has one), and
/// `release(id)` ends a run's use of it. Both may be called from several
/// threads at once.
template <class P>
concept sandbox_provider = requires(P& p, std::string_view thread_id, std::string_view user_id) {
    { p.acquire(thread_id, user_id) } -> std::convertible_to<std::string>;
    p.release(thread_id);
};

/// The host file system as the sandbox (DeerFlow's LocalSandboxProvider): ids
/// are "local:{user_id}:{thread_id}", the thread's directories are the
/// sandbox, and release keeps it (so a thread's next run finds it as it was).
/// Not an isolation boundary: bash runs on the host (see sandbox_options).
class local_sandbox_provider {
public:
    local_sandbox_provider() = default;

    std::string acquire(std::string_view thread_id, std::string_view user_id) {
        std::string id = detail::format("{}:{}:{}", prefix_, user_id, thread_id);
        std::lock_guard lock(state_->mutex);
        state_->acquired.insert(id);
        return id;
    }
    void release(std::string_view) noexcept {}

    /// True when `id` was acquired from this provider (or a copy of it).
    bool has(std::string_view id) const {
        std::lock_guard lock(state_->mutex);
        return state_->acquired.count(std::string(id)) != 0;
    }

protected:
    explicit local_sandbox_provider(std::string prefix) : prefix_(std::move(prefix)) {}

private:
    struct shared {
        mutable std::mutex mutex;
        std::set<std::string> acquired;
    };
    std::string prefix_ = "local";
    std::shared_ptr<shared> state_ = std::make_shared<shared>(); // copies share the sandboxes
};

static_assert(sandbox_provider<local_sandbox_provider>);

/// The thread's directories as the sandbox, with bash isolated by the
/// operating system (bubblewrap namespaces, see sandbox/bubblewrap.hpp): ids are
/// "isolated:{user_id}:{thread_id}"; like the local provider, release keeps
/// the directories. Chosen by `sandbox: {use: isolated}`.
class isolated_sandbox_provider : public local_sandbox_provider {
public:
    isolated_sandbox_provider() : local_sandbox_provider("isolated") {}
};

static_assert(sandbox_provider<isolated_sandbox_provider>);

/// Any sandbox provider, type-erased and shared (the middleware and its tools
/// hold the same one).
class any_sandbox_provider {
public:
    any_sandbox_provider() : any_sandbox_provider(local_sandbox_provider{}) {}

    template <sandbox_provider P>
        requires(!std::same_as<std::remove_cvref_t<P>, any_sandbox_provider>)
    any_sandbox_provider(P p) // NOLINT: implicit, so any provider can be passed where one is expected
        : impl_(std::make_shared<model<P>>(std::move(p))) {}

    /// Shares a provider the caller keeps using (e.g. to inspect it in tests).
    template <sandbox_provider P>
    static any_sandbox_provider shared(std::shared_ptr<P> p) {
        any_sandbox_provider a;
        a.impl_ = std::make_shared<ref_model<P>>(std::move(p));
        return a;
    }

    std::string acquire(std::string_view thread_id, std::string_view user_id) {
        return impl_->acquire(thread_id, user_id);
    }
    void release(std::string_view id) { impl_->release(id); }

private:
    struct concept_t {
        virtual ~concept_t() = default;
        virtual std::string acquire(std::string_view, std::string_view) = 0;
        virtual void release(std::string_view) = 0;
    };
    template <class P>
    struct model final : concept_t {
        explicit model(P p) : provider(std::move(p)) {}
        std::string acquire(std::string_view t, std::string_view u) override {
            return provider.acquire(t, u);
        }
        void release(std::string_view id) override { provider.release(id); }
        P provider;
    };
    template <class P>
    struct ref_model final : concept_t {
        explicit ref_model(std::shared_ptr<P> p) : provider(std::move(p)) {}
        std::string acquire(std::string_view t, std::string_view u) override {
            return provider->acquire(t, u);
        }
        void release(std::string_view id) override { provider->release(id); }
        std::shared_ptr<P> provider;
    };
    std::shared_ptr<concept_t> impl_;
};

} // namespace agentware

#endif
