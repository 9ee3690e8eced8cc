#ifndef AGENTWARE_TESTS_MESSAGE_SUPPORT_HPP
#define AGENTWARE_TESTS_MESSAGE_SUPPORT_HPP

// What the tests of the message layer share: messages printed in one line by
// Catch, JSON objects from text, and a message's round trip through JSON text.
#include <agentware/message.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <string>
#include <string_view>

// Failed comparisons print the message in one line instead of "{?}".
namespace Catch {
template <>
struct StringMaker<agentware::message> {
    static std::string convert(const agentware::message& m) { return agentware::to_json_string(m); }
};
} // namespace Catch

namespace message_test {

namespace json = boost::json;
using agentware::message;

inline json::object obj(std::string_view text) { return json::parse(text).as_object(); }

inline message through_json(const message& m) {
    const std::string text = json::serialize(json::value_from(m));
    return json::value_to<message>(json::parse(text));
}

} // namespace message_test

#endif
