#ifndef AGENTWARE_MODEL_EVENT_SINK_HPP
#define AGENTWARE_MODEL_EVENT_SINK_HPP

// A run's custom-event channel, as hooks and tools see it: what they emit
// reaches `run_config::stream.on_event` (DeerFlow's custom stream events,
// such as the task tool's `task_started` or llm_error_handling's `llm_retry`).

#include <boost/json/object.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <utility>

namespace agentware {

/// Sends custom events to the run's listener. Copies share one channel, and
/// the channel calls the listener one event at a time, whichever threads emit
/// (a round's tool calls run side by side), so the listener needs no lock of
/// its own. What the listener throws is dropped: an event never fails a run.
/// An empty sink (no listener) costs one branch per emit.
class event_sink {
public:
    using listener = std::function<void(const boost::json::object&)>;

    event_sink() = default;
    /// Emits to `*l`, which must outlive the sink (the run's config does).
    explicit event_sink(const listener* l) {
        if (l && *l) channel_ = std::make_shared<channel>(l);
    }

    explicit operator bool() const noexcept { return channel_ != nullptr; }
    /// Equal for copies of one sink: tells whether two emitters share a channel.
    const void* id() const noexcept { return channel_.get(); }

    void emit(const boost::json::object& event) const noexcept {
        if (!channel_) return;
        std::lock_guard lock(channel_->mutex);
        try {
            (*channel_->target)(event);
        } catch (...) { // a listener's failure is not the run's
        }
    }

private:
    struct channel {
        explicit channel(const listener* l) : target(l) {}
        std::mutex mutex;
        const listener* target;
    };
    std::shared_ptr<channel> channel_;
};

} // namespace agentware

#endif
