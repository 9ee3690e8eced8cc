#ifndef AGENTWARE_AGENT_RUN_EVENTS_HPP
#define AGENTWARE_AGENT_RUN_EVENTS_HPP

// What a middleware tells the caller about a run without failing it (a
// fallback taken, a setting that had no effect, an answer cut for safety):
// an entry in the run context's `events` list, which the caller reads in
// run_result::context after the run, and, for what the caller should see as
// it happens, an event on the run's channel (`runtime::events`, fed to
// `run_config::stream.on_event`).

#include <agentware/agent/runtime.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <string>
#include <string_view>
#include <utility>

namespace agentware {

/// Appends `{"middleware": m, "event": e, "detail": d}` to `rt->context["events"]`.
inline void record_event(runtime* rt, std::string_view middleware, std::string_view event,
                         std::string detail_text) {
    if (!rt) return;
    auto& events = rt->context["events"];
    if (!events.is_array()) events = boost::json::array{};
    events.as_array().push_back(boost::json::object{
        {"middleware", middleware}, {"event", event}, {"detail", std::move(detail_text)}});
}

/// Sends `event` (an object with a "type") to the run's event channel, if
/// anyone listens. A listener that throws does not fail the run.
inline void emit_event(const runtime* rt, const boost::json::object& event) noexcept {
    if (rt) rt->events.emit(event);
}

/// True when the run's context already holds an event named `event`.
inline bool has_event(const runtime& rt, std::string_view event) {
    const auto* events = rt.context.if_contains("events");
    if (!events || !events->is_array()) return false;
    for (const auto& e : events->as_array())
        if (e.is_object())
            if (const auto* n = e.as_object().if_contains("event");
                n && n->is_string() && n->as_string() == event)
                return true;
    return false;
}

} // namespace agentware

#endif
