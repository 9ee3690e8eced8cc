#ifndef AGENTWARE_TOOL_INTERRUPT_HPP
#define AGENTWARE_TOOL_INTERRUPT_HPP

// Pausing a run for a human: what a hook or a tool throws to interrupt the
// run, and what the caller passes to continue it. The agent loops catch the
// interrupt (docs/interrupts.md); tools and hooks raise it through
// `tool_runtime::interrupt` and `runtime::interrupt`, which return the
// resume value instead when the run is being resumed.

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <exception>
#include <string>
#include <utility>
#include <vector>

namespace agentware {

/// Thrown to pause the run: `payload` goes to the caller (in
/// `run_result::interrupts`), who resumes the run with `resume{value}`.
///
/// Not a std::exception on purpose: error handlers that catch
/// std::exception (or turn any failure into an error tool message through
/// `map_response`) let it pass.
struct interrupt {
    boost::json::value payload;
    /// Only from an after_model hook: the ids of the last ai message's tool
    /// calls that wait for the answer. The round's other calls run before the
    /// run pauses, and their results are kept. Empty: none of the calls runs.
    std::vector<std::string> held_calls;
};

/// What `invoke(resume{...}, config)` continues a paused thread with. With
/// several interrupts pending (tool calls of one round that each
/// interrupted), `value` is an object with one key per interrupt id.
struct resume {
    boost::json::value value;
};

/// One pending interrupt, as the run's result reports it: `id` names where it
/// was raised (a hook point such as "after_model", or a tool call's id).
struct interrupt_info {
    std::string id;
    boost::json::value value;
};

namespace detail {

/// True when `e` holds an agentware::interrupt.
inline bool is_interrupt(const std::exception_ptr& e) noexcept {
    if (!e) return false;
    try {
        std::rethrow_exception(e);
    } catch (const interrupt&) {
        return true;
    } catch (...) {
        return false;
    }
}

/// The resume values of one interrupt point, given to its `interrupt` calls in
/// order (a hook that interrupts twice receives the first value, then the
/// second; a call past the values pauses the run again).
struct resume_cursor {
    const boost::json::array* values = nullptr;
    mutable std::size_t next = 0;

    boost::json::value take(boost::json::value payload, std::vector<std::string> held = {}) const {
        if (values != nullptr && next < values->size()) return (*values)[next++];
        throw interrupt{std::move(payload), std::move(held)};
    }
};

} // namespace detail
} // namespace agentware

#endif
