#ifndef AGENTWARE_MIDDLEWARE_SANDBOX_IMPL_TOOLS_IPP
#define AGENTWARE_MIDDLEWARE_SANDBOX_IMPL_TOOLS_IPP

// The sandbox tools' definitions, compiled once in <agentware/src.hpp> with
// AGENTWARE_SEPARATE_COMPILATION. They stay in sandbox/tools.hpp, after its
// declarations (the tool families' headers, sandbox/tools/*.hpp, included
// there), so that a file that included the header first still gets them
// here.

#define AGENTWARE_SANDBOX_TOOLS_SOURCE
#include <agentware/middleware/sandbox/tools.hpp>

#endif
