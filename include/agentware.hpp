#ifndef AGENTWARE_HPP
#define AGENTWARE_HPP

// Everything but the HTTP model clients. A program that needs less includes
// less: <agentware/core.hpp> for the pipeline alone,
// <agentware/agent/agent.hpp> for the agent, one header per middleware.
//
// The HTTP model clients have headers of their own, included where a model is
// built: <agentware/model/openai_chat_model.hpp>,
// <agentware/model/anthropic_chat_model.hpp>, <agentware/model/model_factory.hpp>.
// They compile Beast and OpenSSL (CMake: link agentware::https), which would
// cost every file that includes this header several times what the rest of it
// costs, unless AGENTWARE_SEPARATE_COMPILATION compiles them once.

#include <agentware/core.hpp>

#include <agentware/message.hpp>
#include <agentware/state/basic_state.hpp>

#include <agentware/model/any_chat_model.hpp>
#include <agentware/model/chat_model.hpp>
#include <agentware/model/scripted_model.hpp>
#include <agentware/model/token_counter.hpp>

#include <agentware/tool/make_tool.hpp>
#include <agentware/tool/tool_set.hpp>

#include <agentware/agent/agent.hpp>
#include <agentware/agent/async_loop.hpp>
#include <agentware/agent/checkpointer.hpp>
#include <agentware/agent/file_checkpointer.hpp>
#include <agentware/agent/memory_checkpointer.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/thread/id.hpp>

#include <agentware/middleware/clarification.hpp>
#include <agentware/middleware/context_editing.hpp>
#include <agentware/middleware/dangling_tool_call.hpp>
#include <agentware/middleware/filesystem.hpp>
#include <agentware/middleware/from_function.hpp>
#include <agentware/middleware/guardrail.hpp>
#include <agentware/middleware/input_sanitization.hpp>
#include <agentware/middleware/llm_error_handling.hpp>
#include <agentware/middleware/llm_tool_selector.hpp>
#include <agentware/middleware/loop_detection.hpp>
#include <agentware/middleware/model_call_limit.hpp>
#include <agentware/middleware/model_fallback.hpp>
#include <agentware/middleware/model_length_finish_reason.hpp>
#include <agentware/middleware/model_retry.hpp>
#include <agentware/middleware/moderation.hpp>
#include <agentware/middleware/patch_tool_calls.hpp>
#include <agentware/middleware/pii.hpp>
#include <agentware/middleware/pii_redaction.hpp>
#include <agentware/middleware/prompt_caching.hpp>
#include <agentware/middleware/read_before_write.hpp>
#include <agentware/middleware/safety_finish_reason.hpp>
#include <agentware/middleware/sandbox.hpp>
#include <agentware/middleware/sandbox/audit.hpp>
#include <agentware/middleware/subagent_limit.hpp>
#include <agentware/middleware/system_message_coalescing.hpp>
#include <agentware/middleware/terminal_response.hpp>
#include <agentware/middleware/thread_data.hpp>
#include <agentware/middleware/token_accounting.hpp>
#include <agentware/middleware/token_budget.hpp>
#include <agentware/middleware/tool_call_limit.hpp>
#include <agentware/middleware/tool_emulator.hpp>
#include <agentware/middleware/tool_error_handling.hpp>
#include <agentware/middleware/tool_output_budget.hpp>
#include <agentware/middleware/tool_receipt.hpp>
#include <agentware/middleware/tool_result_sanitization.hpp>
#include <agentware/middleware/tool_retry.hpp>
#include <agentware/middleware/uploads.hpp>
#include <agentware/middleware/view_image.hpp>
#include <agentware/thread/fields.hpp>

#include <agentware/presets/deerflow.hpp>
#include <agentware/presets/subagent_chain.hpp>
#include <agentware/subagents/config.hpp>
#include <agentware/subagents/executor.hpp>
#include <agentware/subagents/task_tool.hpp>

#endif
