#ifndef AGENTWARE_AGENT_IMPL_RUN_IPP
#define AGENTWARE_AGENT_IMPL_RUN_IPP

// The definitions of agentware/agent/run.hpp's non-template code: in every translation unit
// that includes it (header-only), or once in <agentware/src.hpp>
// (AGENTWARE_SEPARATE_COMPILATION).

#include <agentware/agent/run.hpp>

#include <string>
#include <utility>

namespace agentware {

agent_input::agent_input(std::string text) { messages.push_back(human_message(std::move(text))); }
agent_input::agent_input(const char* text) : agent_input(std::string(text)) {}

} // namespace agentware

#endif
