// read_before_write's wrap_tool_call must stand outside tool_error_handling's,
// so it must come before it in the pipeline.
#include <agentware/core.hpp>
#include <agentware/middleware/read_before_write.hpp>
#include <agentware/middleware/tool_error_handling.hpp>

agentware::pipeline<agentware::tool_error_handling, agentware::read_before_write> p;
