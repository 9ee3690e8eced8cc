// The agent loop with its blocking entry point, without the HTTP model clients.
#include <agentware/agent/agent.hpp>
