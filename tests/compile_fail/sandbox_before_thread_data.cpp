// sandbox needs the thread directories that thread_data computes, so it must
// come after thread_data in the pipeline.
#include <agentware/core.hpp>
#include <agentware/middleware/sandbox.hpp>
#include <agentware/middleware/thread_data.hpp>

agentware::pipeline<agentware::sandbox, agentware::thread_data> p;
