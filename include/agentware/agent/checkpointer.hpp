#ifndef AGENTWARE_AGENT_CHECKPOINTER_HPP
#define AGENTWARE_AGENT_CHECKPOINTER_HPP

// Checkpointers keep each conversation thread's serialized agent state, so
// invoking the agent again on the same thread id continues the conversation.
// This header is what the agent needs of one: the concept and its error. The
// built-in stores have headers of their own: memory_checkpointer.hpp,
// file_checkpointer.hpp and append_checkpointer.hpp.

#include <boost/json/value.hpp>

#include <concepts>
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
