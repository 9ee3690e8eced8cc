// clarification must be the last middleware: its wrap_tool_call has to be the
// innermost, so it answers ask_clarification before anything runs the call.
#include <agentware/core.hpp>
#include <agentware/middleware/clarification.hpp>
#include <agentware/middleware/loop_detection.hpp>

agentware::pipeline<agentware::clarification, agentware::loop_detection> p;
