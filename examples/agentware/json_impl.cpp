// The one TU of the CLI that compiles Boost.JSON's implementation.
#include <agentware/src.hpp>
