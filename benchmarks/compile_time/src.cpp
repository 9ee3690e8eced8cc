// The one file of a program that compiles the implementations: Boost.JSON's,
// and agentware's too with AGENTWARE_SEPARATE_COMPILATION.
#include <agentware/src.hpp>
