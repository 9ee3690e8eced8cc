#ifndef AGENTWARE_AGENTWARE_HPP
#define AGENTWARE_AGENTWARE_HPP

// Everything but the HTTP model clients (include <agentware/model/...> for those).

#include <agentware/agent/agent.hpp>
#include <agentware/agent/checkpointer.hpp>
#include <agentware/agent/thread_id.hpp>
#include <agentware/core.hpp>
#include <agentware/message.hpp>
#include <agentware/model/chat_model.hpp>
#include <agentware/model/scripted_model.hpp>
#include <agentware/state/basic_state.hpp>
#include <agentware/tool/make_tool.hpp>
#include <agentware/tool/tool_set.hpp>

#endif
