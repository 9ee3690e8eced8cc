// safety_finish_reason must come after loop_detection (and token_budget):
// after_model runs in reverse order, so it then sees the answer first and
// the loop guard counts the cleaned one.
#include <agentware/core.hpp>
#include <agentware/middleware/loop_detection.hpp>
#include <agentware/middleware/safety_finish_reason.hpp>

agentware::pipeline<agentware::safety_finish_reason, agentware::loop_detection> p;
