#ifndef AGENTWARE_MIDDLEWARE_KIT_HPP
#define AGENTWARE_MIDDLEWARE_KIT_HPP

// What a middleware author includes: the names docs/hooks.md uses to write a
// middleware, and nothing of the built-in middlewares themselves.
//
//  * hooks and their results: the pipeline, optional slots, jumps
//    (jump_to), state fields and `get<Field>(state)` (core);
//  * messages and state updates (message, state);
//  * the run: `runtime` (thread id, run id, context, the run's model, its
//    event channel), the model and tool requests and responses that wrap
//    hooks receive (`model_request`, `tool_request`, `tool_response`), and
//    the helpers that run the next handler of a wrap hook (wrap.hpp);
//  * tools a middleware offers: `make_tool`, typed tools, tool sets;
//  * events: `emit_event` (as it happens) and `record_event` (in the run's
//    context, read after the run);
//  * options from JSON: `json_reader`, `json_error` (errors that name a key's
//    path).

#include <agentware/agent/requests.hpp>
#include <agentware/agent/run_events.hpp>
#include <agentware/agent/runtime.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/core.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message.hpp>
#include <agentware/state/update.hpp>
#include <agentware/tool/make_tool.hpp>
#include <agentware/tool/tool_set.hpp>
#include <agentware/tool/typed_tool.hpp>

#endif
