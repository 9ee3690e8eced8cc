// The examples' one file that compiles the implementations: Boost.JSON's,
// and agentware's own with AGENTWARE_SEPARATE_COMPILATION. It rarely changes,
// so an edit to an example recompiles only that example.
#include <agentware/src.hpp>
