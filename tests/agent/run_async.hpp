#ifndef AGENTWARE_TESTS_AGENT_RUN_ASYNC_HPP
#define AGENTWARE_TESTS_AGENT_RUN_ASYNC_HPP

// Runs an agent's coroutine loop to its end on an io_context of its own.
#include <agentware/agent/agent.hpp>
#include <agentware/agent/async_loop.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <optional>
#include <utility>

namespace test {

template <class Agent>
auto run_async(Agent& a, agentware::agent_input input, agentware::run_config cfg = {}) {
    boost::asio::io_context io;
    std::optional<agentware::invoke_result<typename Agent::state_type>> out;
    std::exception_ptr failure;
    boost::asio::co_spawn(io, a.async_invoke(std::move(input), std::move(cfg)),
                          [&](std::exception_ptr e, auto r) {
                              failure = e;
                              out = std::move(r);
                          });
    io.run();
    if (failure) std::rethrow_exception(failure);
    return std::move(*out);
}

/// Continues a paused thread through the coroutine loop.
template <class Agent>
auto resume_async(Agent& a, agentware::resume r, agentware::run_config cfg = {}) {
    boost::asio::io_context io;
    std::optional<agentware::invoke_result<typename Agent::state_type>> out;
    std::exception_ptr failure;
    boost::asio::co_spawn(io, a.async_invoke(std::move(r), std::move(cfg)),
                          [&](std::exception_ptr e, auto res) {
                              failure = e;
                              out = std::move(res);
                          });
    io.run();
    if (failure) std::rethrow_exception(failure);
    return std::move(*out);
}

} // namespace test

#endif
