// The one TU of the test program that compiles Boost.JSON's implementation.
#include <agentware/src.hpp>
