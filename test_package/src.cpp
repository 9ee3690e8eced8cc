// The one file that compiles Boost.JSON and, with separate compilation, agentware.
#include <agentware/src.hpp>
