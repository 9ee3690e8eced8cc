#ifndef AGENTWARE_AGENT_RUNTIME_HPP
#define AGENTWARE_AGENT_RUNTIME_HPP

#include <boost/json/object.hpp>

#include <cstddef>
#include <string>

namespace agentware {

/// What the hooks of one run share: which thread and run this is, and the
/// run's context, a JSON object that middlewares and the caller read and write
/// (DeerFlow's `runtime.context`: `thread_id`, `user_id`, `sandbox_id`, ...).
struct runtime {
    std::string thread_id;
    std::string run_id;
    boost::json::object context;
    std::size_t round = 0; ///< model calls made so far in this run
};

} // namespace agentware

#endif
