#ifndef AGENTWARE_SRC_HPP
#define AGENTWARE_SRC_HPP

// Include this header in exactly one translation unit of a program that uses
// agentware's JSON-based layers, and in no other (a file of its own is best:
// it rarely changes, so the build rarely recompiles it). It compiles
// Boost.JSON's implementation there, so the library stays header-only without
// linking libboost_json (do not also link Boost::json). With
// AGENTWARE_SEPARATE_COMPILATION defined in every translation unit, it also
// compiles agentware's own non-template code: the HTTP transport and model
// clients, the model factory, the MCP client, schema validation, the
// sandbox tools and the web tools (DeerFlow's too), and what every agent uses: messages'
// JSON forms, the message list's merge rule and ids, copies of a message,
// tool sets, the loop's non-template steps and its tool threads, the
// coroutine that runs blocking code from asynchronous code and back, and
// the scripted model.

#include <boost/json/src.hpp>

#if defined(AGENTWARE_SEPARATE_COMPILATION)
#include <agentware/agent/detail/impl/loop_steps.ipp>
#include <agentware/agent/detail/impl/tool_pool.ipp>
#include <agentware/agent/impl/run.ipp>
#include <agentware/detail/impl/blocking_runner.ipp>
#include <agentware/mcp/impl/client.ipp>
#include <agentware/message/impl/add_messages.ipp>
#include <agentware/message/impl/id.ipp>
#include <agentware/message/impl/json.ipp>
#include <agentware/message/impl/message.ipp>
#include <agentware/middleware/capabilities/impl/web.ipp>
#include <agentware/middleware/impl/deerflow_web_tools.ipp>
#include <agentware/middleware/sandbox/impl/tools.ipp>
#include <agentware/model/impl/anthropic_chat_model.ipp>
#include <agentware/model/impl/http_chat_client.ipp>
#include <agentware/model/impl/http_transport.ipp>
#include <agentware/model/impl/model_factory.ipp>
#include <agentware/model/impl/model_ref.ipp>
#include <agentware/model/impl/openai_chat_model.ipp>
#include <agentware/model/impl/openai_moderation_client.ipp>
#include <agentware/model/impl/scripted_model.ipp>
#include <agentware/tool/impl/make_tool.ipp>
#include <agentware/tool/impl/schema_validation.ipp>
#include <agentware/tool/impl/tool.ipp>
#include <agentware/tool/impl/tool_set.ipp>
#endif

#endif
