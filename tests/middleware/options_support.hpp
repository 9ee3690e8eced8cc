#ifndef AGENTWARE_TESTS_MIDDLEWARE_OPTIONS_SUPPORT_HPP
#define AGENTWARE_TESTS_MIDDLEWARE_OPTIONS_SUPPORT_HPP

// Helpers for the tests of JSON forms (the middlewares' options, the state fields).

#include "../support/json_errors.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value_to.hpp>

#include <string>
#include <string_view>

namespace options_test {

using namespace agentware;

using test_support::read_error;

} // namespace options_test

#endif // AGENTWARE_TESTS_MIDDLEWARE_OPTIONS_SUPPORT_HPP
