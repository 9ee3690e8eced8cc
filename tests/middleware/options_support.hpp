#ifndef AGENTWARE_TESTS_MIDDLEWARE_OPTIONS_SUPPORT_HPP
#define AGENTWARE_TESTS_MIDDLEWARE_OPTIONS_SUPPORT_HPP

// Helpers for the tests of JSON forms (the middlewares' options, the state fields).

#include <agentware/json/reader.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_to.hpp>

#include <string>
#include <string_view>

namespace options_test {

using namespace agentware;

// The message of the json_error that reading `text` as T throws ("" when none).
template <class T>
inline std::string read_error(std::string_view text) {
    try {
        (void)boost::json::value_to<T>(boost::json::parse(text));
    } catch (const json_error& e) {
        return e.what();
    }
    return {};
}

} // namespace options_test

#endif // AGENTWARE_TESTS_MIDDLEWARE_OPTIONS_SUPPORT_HPP
