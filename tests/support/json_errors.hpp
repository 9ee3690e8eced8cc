#ifndef AGENTWARE_TESTS_SUPPORT_JSON_ERRORS_HPP
#define AGENTWARE_TESTS_SUPPORT_JSON_ERRORS_HPP

// What the tests of JSON forms (options, configuration sections) compare: the
// message of the json_error that reading a text as T throws.

#include <agentware/json/reader.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_to.hpp>

#include <string>
#include <string_view>

namespace test_support {

/// The message of the json_error that reading `text` as T throws ("" when none).
template <class T>
std::string read_error(std::string_view text) {
    try {
        (void)boost::json::value_to<T>(boost::json::parse(text));
    } catch (const agentware::json_error& e) {
        return e.what();
    }
    return {};
}

} // namespace test_support

#endif // AGENTWARE_TESTS_SUPPORT_JSON_ERRORS_HPP
