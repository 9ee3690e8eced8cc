#ifndef AGENTWARE_DETAIL_BLOCKING_RUNNER_HPP
#define AGENTWARE_DETAIL_BLOCKING_RUNNER_HPP

#include <agentware/detail/config.hpp>

#include <agentware/detail/awaitable_fwd.hpp>

#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace boost::asio {
class io_context;
}

namespace agentware::detail {

/// Runs a coroutine to its end on a private io_context, on the calling thread:
/// how asynchronous code (a model client, an asynchronous tool) is called from
/// blocking code.
///
/// A context is kept after its call and lent to the next one (each call has
/// one to itself; calls from several threads take different ones), and lives
/// as long as the runner. So what a call leaves bound to its executor, such as
/// a kept-alive connection in a pool keyed by executor, still works in the
/// next call instead of pointing at a destroyed context.
///
/// The io_context and co_spawn stay in the implementation file: every tool
/// set names this class, and most programs never run it.
class blocking_runner {
public:
    AGENTWARE_DECL blocking_runner();
    AGENTWARE_DECL ~blocking_runner();
    blocking_runner(const blocking_runner&) = delete;
    blocking_runner& operator=(const blocking_runner&) = delete;

    template <class T>
    T run(detail::awaitable<T> call) {
        if constexpr (std::is_void_v<T>) {
            run_to_end(std::move(call));
        } else {
            std::optional<T> value;
            run_to_end(keep(std::move(call), value));
            return std::move(*value);
        }
    }

private:
    template <class T, class Void = void> // Void: see model_ref::async_invoke_as
    static detail::awaitable<Void> keep(detail::awaitable<T> call, std::optional<T>& value) {
        value.emplace(co_await std::move(call));
    }

    /// Runs `call` on a context of its own until it ends; rethrows what it threw.
    AGENTWARE_CORO_DECL AGENTWARE_DECL void run_to_end(detail::awaitable<void> call);

    std::mutex mutex_;
    std::vector<std::unique_ptr<boost::asio::io_context>> contexts_;
};

} // namespace agentware::detail

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/detail/impl/blocking_runner.ipp>
#endif

#endif
