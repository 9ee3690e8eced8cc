// The one TU of the CLI that compiles the implementations (Boost.JSON's, and
// agentware's with AGENTWARE_SEPARATE_COMPILATION).
#include <agentware/src.hpp>
