#ifndef AGENTWARE_TESTS_AGENT_CHECKPOINTER_SUPPORT_HPP
#define AGENTWARE_TESTS_AGENT_CHECKPOINTER_SUPPORT_HPP

// What the tests of thread ids and of the checkpointers share: a state to save, and ids none may accept.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <vector>

namespace checkpointer_test {

using namespace std::string_literals;

/// A saved state of `turn + 1` user messages.
inline boost::json::value sample_state(int turn) {
    boost::json::object state;
    boost::json::array messages;
    for (int i = 0; i <= turn; ++i)
        messages.push_back(boost::json::object{{"role", "user"}, {"content", "turn " + std::to_string(i)}});
    state["messages"] = std::move(messages);
    state["turn"] = turn;
    return state;
}

// Ids no checkpointer may accept: path tricks, separators, empty, too long,
// NUL and other control characters, spaces, non-ASCII, a dot.
inline const std::vector<std::string> hostile_ids = {
    "",
    "..",
    ".",
    "../x",
    "a/b",
    "/etc/passwd",
    "a\\b",
    "a b",
    " a",
    "a\n",
    "a\0b"s,
    "\0"s,
    "x.json",
    "caf\xc3\xa9",
    "a:b",
    "*",
    "a\tb",
    std::string(65, 'a'),
    std::string(1000, 'x') + "/..",
};

} // namespace checkpointer_test

#endif
