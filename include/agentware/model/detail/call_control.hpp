#ifndef AGENTWARE_MODEL_DETAIL_CALL_CONTROL_HPP
#define AGENTWARE_MODEL_DETAIL_CALL_CONTROL_HPP

// Cancellation of one model call, shared by the HTTP transport and the
// clients' retry loop. Only their implementations include it.

#include <agentware/model/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_state.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <utility>

namespace agentware::detail {

/// Cancellation of one call: requested from any thread, carried out on the
/// call's executor (where its I/O objects live).
class call_control : public std::enable_shared_from_this<call_control> {
public:
    explicit call_control(boost::asio::any_io_executor ex) : executor_(std::move(ex)) {}

    void request_cancel() {
        cancelled_ = true;
        boost::asio::post(executor_, [self = shared_from_this()] { self->interrupt(); });
    }
    /// Also true once Asio cancelled the awaiting coroutine (per-operation cancellation).
    bool cancelled() const noexcept {
        return cancelled_ ||
               (asio_state_ && asio_state_->cancelled() != boost::asio::cancellation_type::none);
    }
    /// Follows the cancellation state of the coroutine making the call.
    void follow(boost::asio::cancellation_state state) { asio_state_ = state; }

    /// The I/O object (a stream or a timer) to interrupt, set and cleared by
    /// the call on its executor.
    template <class IoObject>
    void watch(IoObject* io) noexcept {
        watched_ = io;
        cancel_watched_ = [](void* p) { static_cast<IoObject*>(p)->cancel(); };
    }
    void unwatch() noexcept {
        watched_ = nullptr;
        cancel_watched_ = nullptr;
    }

private:
    void interrupt() {
        if (watched_ != nullptr) cancel_watched_(watched_);
    }

    boost::asio::any_io_executor executor_;
    std::atomic<bool> cancelled_{false};
    std::optional<boost::asio::cancellation_state> asio_state_;
    void* watched_ = nullptr;
    void (*cancel_watched_)(void*) = nullptr;
};

/// Requests cancellation of a call when a std::stop_token is triggered
/// (the callback of a std::stop_callback).
struct stop_canceller {
    std::shared_ptr<call_control> control;
    void operator()() const { control->request_cancel(); }
};

/// Clears what a call_control watches when a scope ends, on every path.
struct watch_guard {
    call_control& control;
    ~watch_guard() { control.unwatch(); }
};

inline model_error cancelled_error() {
    return model_error(model_error_kind::cancelled, "the model call was cancelled");
}

/// Throws `cancelled` when the call was cancelled by the client or by Asio's
/// per-operation cancellation of the awaiting coroutine. Not a coroutine:
/// Asio refuses any further co_await in a cancelled coroutine.
inline void throw_if_cancelled(const call_control& control) {
    if (control.cancelled()) throw cancelled_error();
}

} // namespace agentware::detail

#endif
