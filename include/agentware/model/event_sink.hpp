#ifndef AGENTWARE_MODEL_EVENT_SINK_HPP
#define AGENTWARE_MODEL_EVENT_SINK_HPP

// A run's custom-event channel, as hooks and tools see it: what they emit
// reaches `run_config::stream.on_event` (DeerFlow's custom stream events,
// such as the task tool's `task_started` or llm_error_handling's `llm_retry`).

#include <boost/json/object.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// Which delegated subagents' own streams reach a run's `stream.on_event`
/// (`run_config::subagent_streams`): their tokens (`subagent_token`,
/// `subagent_reasoning`), their steps (`task_running`) and the custom events
/// of their own chain (`subagent_event`), each carrying the delegation's
/// `task_id`. The lifecycle events (`task_started`, `task_completed`, ...)
/// are always sent, and the parent model sees the same either way.
struct subagent_stream_filter {
    enum class show { all, none, types };
    show mode = show::all;
    std::vector<std::string> types; ///< with show::types: the subagent types whose streams are sent

    static subagent_stream_filter all() { return {}; }
    static subagent_stream_filter none() { return {show::none, {}}; }
    static subagent_stream_filter only(std::vector<std::string> types) {
        return {show::types, std::move(types)};
    }

    bool shows(std::string_view type) const noexcept {
        switch (mode) {
        case show::all:
            return true;
        case show::none:
            return false;
        case show::types:
            return std::find(types.begin(), types.end(), type) != types.end();
        }
        return true;
    }
};

/// Sends custom events to the run's listener. Copies share one channel, and
/// the channel calls the listener one event at a time, whichever threads emit
/// (a round's tool calls run side by side), so the listener needs no lock of
/// its own. What the listener throws is dropped: an event never fails a run.
/// An empty sink (no listener) costs one branch per emit.
class event_sink {
public:
    using listener = std::function<void(const boost::json::object&)>;

    event_sink() = default;
    /// Emits to `*l`, which must outlive the sink (the run's config does), and
    /// so must `*subagents` (which subagents' streams the listener takes; all
    /// when null).
    explicit event_sink(const listener* l, const subagent_stream_filter* subagents = nullptr) {
        if (l && *l) channel_ = std::make_shared<channel>(l, subagents);
    }

    explicit operator bool() const noexcept { return channel_ != nullptr; }
    /// Equal for copies of one sink: tells whether two emitters share a channel.
    const void* id() const noexcept { return channel_.get(); }

    /// True when someone listens and takes the stream of a subagent of `type`.
    bool shows_subagent(std::string_view type) const noexcept {
        return channel_ && (!channel_->subagents || channel_->subagents->shows(type));
    }
    /// The run's subagent stream filter (null: all), for a subagent's own run.
    const subagent_stream_filter* subagent_filter() const noexcept {
        return channel_ ? channel_->subagents : nullptr;
    }

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
        channel(const listener* l, const subagent_stream_filter* f) : target(l), subagents(f) {}
        std::mutex mutex;
        const listener* target;
        const subagent_stream_filter* subagents;
    };
    std::shared_ptr<channel> channel_;
};

} // namespace agentware

#endif
