#ifndef AGENTWARE_TESTS_SUBAGENTS_SUPPORT_HPP
#define AGENTWARE_TESTS_SUBAGENTS_SUPPORT_HPP

// Helpers for the subagent tests: the `subagents:` section from JSON, a
// configuration whose general-purpose type uses the model "sub", and one
// delegation run directly on an io_context of its own.

#include "../agent/support.hpp"

#include <agentware/subagents/config.hpp>
#include <agentware/subagents/executor.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value_to.hpp>

#include <exception>
#include <optional>
#include <string_view>

namespace subagent_test {

namespace asio = boost::asio;
using namespace agentware;

inline subagents_options options_from(std::string_view json) {
    return boost::json::value_to<subagents_options>(boost::json::parse(json));
}

inline const char* sub_model_config = R"({"agents": {"general-purpose": {"model": "sub"}}})";

// Runs one delegation directly on an io_context of its own.
inline subagent_result execute(subagent_executor& ex, subagent_task task, subagent_parent parent = {}) {
    asio::io_context io;
    std::optional<subagent_result> out;
    asio::co_spawn(io, ex.execute(std::move(task), std::move(parent)),
                   [&](std::exception_ptr e, subagent_result r) {
                       if (e) std::rethrow_exception(e);
                       out = std::move(r);
                   });
    io.run();
    return std::move(*out);
}

} // namespace subagent_test

#endif // AGENTWARE_TESTS_SUBAGENTS_SUPPORT_HPP
