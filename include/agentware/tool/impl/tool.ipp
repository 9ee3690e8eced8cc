#ifndef AGENTWARE_TOOL_IMPL_TOOL_IPP
#define AGENTWARE_TOOL_IMPL_TOOL_IPP

// The definitions of agentware/tool/tool.hpp's non-template code: in every translation unit
// that includes it (header-only), or once in <agentware/src.hpp>
// (AGENTWARE_SEPARATE_COMPILATION).

#include <agentware/tool/tool.hpp>

#include <boost/asio/awaitable.hpp>

namespace agentware {

// Out of line: with separate compilation, the coroutine that runs a blocking
// tool for the asynchronous loop (and tool_interface's vtable) is compiled once.
detail::awaitable<tool_output> tool_interface::async_call(const boost::json::object& args,
                                                          const tool_runtime& rt) {
    return detail::call_as_awaitable(*this, args, rt);
}

} // namespace agentware

#endif
