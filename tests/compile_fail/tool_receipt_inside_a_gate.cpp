// tool_receipt is the outermost tool wrapper: a gate (here read_before_write)
// placed before it would answer calls that then get no receipt.
#include <agentware/core.hpp>
#include <agentware/middleware/read_before_write.hpp>
#include <agentware/middleware/tool_receipt.hpp>

agentware::pipeline<agentware::read_before_write, agentware::tool_receipt> p;
