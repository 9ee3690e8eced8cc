#ifndef AGENTWARE_AGENT_CHECKPOINTER_HPP
#define AGENTWARE_AGENT_CHECKPOINTER_HPP

// Checkpointers keep each conversation thread's serialized agent state, so
// invoking the agent again on the same thread id continues the conversation.
// This header is what the agent needs of one: the concepts, the state view an
// incremental checkpointer reads, and the error. The
// built-in stores have headers of their own: memory_checkpointer.hpp,
// file_checkpointer.hpp and append_checkpointer.hpp.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <concepts>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace agentware {

/// A stored checkpoint could not be read or written: an I/O error (the message
/// names the path and the system's error text) or a file that is not valid JSON
/// (the message names the file and the parser's error).
class checkpoint_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A store of serialized agent states by thread id.
///
/// `load` gives the last saved state, or nullopt for a thread never saved (or
/// erased); `save` replaces it; `erase` says whether there was one; `list`
/// gives the ids of all stored threads.
template <class C>
concept checkpointer = requires(C& c, std::string_view thread_id, const boost::json::value& state) {
    { c.load(thread_id) } -> std::same_as<std::optional<boost::json::value>>;
    c.save(thread_id, state);
    { c.erase(thread_id) } -> std::convertible_to<bool>;
    { c.list() } -> std::same_as<std::vector<std::string>>;
};

/// A state to save, converted to JSON piece by piece as the checkpointer asks
/// for it. An agent hands one to a checkpointer that saves what changed
/// (incremental_checkpointer), so that a save converts the messages it writes
/// and the few it checks, not the whole history.
class state_view {
public:
    virtual ~state_view() = default;
    /// How many messages the state holds.
    virtual std::size_t message_count() const = 0;
    /// The JSON form of message `i` (`i < message_count()`), as in `whole()`.
    virtual boost::json::value message(std::size_t i) const = 0;
    /// The JSON form of every top-level key but `"messages"`, as in `whole()`.
    virtual boost::json::object fields() const = 0;
    /// The whole state's JSON form (an object with a `"messages"` array).
    virtual boost::json::value whole() const = 0;

protected:
    state_view() = default;
    state_view(const state_view&) = default;
    state_view& operator=(const state_view&) = default;
};

/// A checkpointer whose save can cost what changed (append_file_checkpointer):
/// `save_changes(thread_id, view)` does what `save(thread_id, view.whole())`
/// would, reading of the view only what it needs. The agent saves through it
/// when the checkpointer has it (every save of `invoke`: before each tool
/// round and at the end); a whole-file checkpointer needs none and is given
/// the whole state's JSON.
template <class C>
concept incremental_checkpointer =
    checkpointer<C> &&
    requires(C& c, std::string_view thread_id, const state_view& view) { c.save_changes(thread_id, view); };

/// A checkpointer that can also keep one tool call's result on its own, as the
/// call completes (append_file_checkpointer): `save_result(thread_id, message)`
/// records the tool message after the thread's last saved state, and `load`
/// gives it back after that state's messages until the next `save` (which
/// holds the round's results itself). An agent with such a checkpointer saves
/// the state before each tool round and each result as it comes, so a crash in
/// the middle of a round loses only the calls still running.
template <class C>
concept result_checkpointer =
    checkpointer<C> && requires(C& c, std::string_view thread_id, const boost::json::value& message) {
        c.save_result(thread_id, message);
    };

} // namespace agentware

#endif
