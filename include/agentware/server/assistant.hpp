#ifndef AGENTWARE_SERVER_ASSISTANT_HPP
#define AGENTWARE_SERVER_ASSISTANT_HPP

// An assistant is a graph the server can run: a name and a factory of agents.
// The server sees an agent only through `assistant_run`, one small virtual
// interface, so registering an agent composed at compile time never makes the
// server a template over the user's chain. `agent_assistant` wraps any
// agentware::agent; the factory is called for each run (as DeerFlow builds
// its lead agent per run, from the run's context).

#include <agentware/agent/agent.hpp>
#include <agentware/agent/async_loop.hpp>
#include <agentware/agent/checkpointer.hpp>
#include <agentware/agent/run.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware::server {

/// What the server hears of a run as it goes.
struct run_observer {
    /// The thread's whole state (the agent state's JSON form), each time the run saves it.
    std::function<void(const boost::json::value& state)> on_checkpoint;
    std::function<void(const agent_update&)> on_update;       ///< each step's new messages
    std::function<void(std::string_view)> on_text;            ///< the model's text as it streams
    std::function<void(const boost::json::object&)> on_event; ///< the run's custom events
};

/// Where a run reads and writes its thread's state (the server's store).
struct state_access {
    std::function<std::optional<boost::json::value>(std::string_view thread_id)> load;
    std::function<void(std::string_view thread_id, const boost::json::value& state)> save;
    /// `save`, given the agent's state as a view so that what changed is all
    /// that is converted and written. Returns the whole state saved, which the
    /// caller keeps until its next save (for the observer). Null: `save`.
    std::function<const boost::json::value*(std::string_view thread_id, const state_view& state)>
        save_changes;
    /// A tool's result as it completes, from the tool's thread (the state
    /// saved last plus the results since is the thread's state now). Null:
    /// the results are kept with the next save.
    std::function<void(std::string_view thread_id, const boost::json::value& message)> save_result;
};

/// One run, as the server asks for it.
struct run_request {
    std::string thread_id;
    std::string run_id;
    std::vector<message> input;               ///< new messages (none when resuming)
    std::optional<boost::json::value> resume; ///< set: continue the paused run with this value
    boost::json::object context;              ///< the run's context (configurable and context merged)
    std::size_t recursion_limit = 100;
    std::stop_token stop;
    run_observer observer;
    state_access state;
};

/// The outcome: the agent's result (its state is in the store by then).
using run_outcome = run_result;

/// One agent made for one run.
class assistant_run {
public:
    virtual ~assistant_run() = default;
    virtual run_outcome run(run_request& request) = 0;
    /// True when `async_run` runs the agent as a coroutine (its model is
    /// asynchronous): the server then runs it on its own threads' event loop
    /// instead of a thread of its pool, so ten thousand runs need no ten thousand threads.
    virtual bool is_async() const { return false; }
    virtual boost::asio::awaitable<run_outcome> async_run(run_request& request) { co_return run(request); }
    /// Stops the model call in progress, from another thread (the stop token ends the rest).
    virtual void cancel() {}
};

/// Makes the agent of one run from its context (the `context` and
/// `config.configurable` of the request, merged).
using assistant_factory = std::function<std::unique_ptr<assistant_run>(const boost::json::object& context)>;

/// A graph the server serves.
struct assistant_spec {
    std::string graph_id; ///< also accepted as the assistant id
    std::string name;     ///< shown to clients (default: the graph id)
    std::string description;
    assistant_factory factory;
    boost::json::object config;   ///< the assistant's `config` as clients see it
    boost::json::object metadata; ///< its `metadata` (plus {"created_by": "system"})
};

namespace detail {

// The server's store, as the agent's checkpointer.
struct store_checkpointer {
    const state_access* access;
    const run_observer* observer;

    /// Tool results of the round in progress (the agent saves the state
    /// before each round, then each result as it comes; the next save holds them).
    std::vector<boost::json::value> results;

    std::optional<boost::json::value> load(std::string_view id) {
        auto state = access->load(id);
        if (state && !results.empty())
            if (auto* ms = state->as_object().if_contains("messages"); ms && ms->is_array())
                for (const auto& r : results)
                    ms->as_array().push_back(r);
        return state;
    }
    void save(std::string_view id, const boost::json::value& state) {
        results.clear();
        access->save(id, state);
        if (observer->on_checkpoint) observer->on_checkpoint(state);
    }
    void save_changes(std::string_view id, const state_view& state) {
        if (!access->save_changes) return save(id, state.whole());
        results.clear();
        const boost::json::value* saved = access->save_changes(id, state);
        if (saved != nullptr && observer->on_checkpoint) observer->on_checkpoint(*saved);
    }
    void save_result(std::string_view id, const boost::json::value& message) {
        results.push_back(message);
        if (access->save_result) access->save_result(id, message);
    }
    bool erase(std::string_view) { return false; }
    std::vector<std::string> list() { return {}; }
};

} // namespace detail

/// An assistant_run over an agentware::agent (held by `Ptr`: a unique_ptr or
/// a shared_ptr). `configure` adds what the agent needs in its run_config
/// (the lead agent's switches, say).
template <class Agent>
class agent_run final : public assistant_run {
public:
    explicit agent_run(std::shared_ptr<Agent> agent, std::function<run_config(run_config)> configure = {},
                       std::shared_ptr<void> keep_alive = {})
        : agent_(std::move(agent)), configure_(std::move(configure)), keep_alive_(std::move(keep_alive)) {}

    run_outcome run(run_request& r) override {
        run_config cfg = prepare(r);
        if (r.resume) return agent_->invoke(resume{*r.resume}, cfg);
        return agent_->invoke(agent_input(std::move(r.input)), cfg);
    }
    bool is_async() const override {
        using model_type = std::remove_cvref_t<decltype(agent_->model())>;
        if constexpr (async_chat_model<model_type>) {
            if constexpr (requires { agent_->model().is_async(); })
                return agent_->model().is_async();
            else
                return true;
        } else {
            return false;
        }
    }
    boost::asio::awaitable<run_outcome> async_run(run_request& r) override {
        using model_type = std::remove_cvref_t<decltype(agent_->model())>;
        if constexpr (async_chat_model<model_type>) {
            run_config cfg = prepare(r);
            if (r.resume) co_return co_await agent_->async_invoke(resume{*r.resume}, std::move(cfg));
            co_return co_await agent_->async_invoke(agent_input(std::move(r.input)), std::move(cfg));
        } else {
            co_return run(r);
        }
    }
    void cancel() override {
        if constexpr (requires { agent_->model().cancel(); }) agent_->model().cancel();
    }

private:
    run_config prepare(run_request& r) {
        agent_->use_checkpointer(detail::store_checkpointer{&r.state, &r.observer, {}});
        run_config cfg;
        cfg.thread_id = r.thread_id;
        cfg.run_id = r.run_id;
        cfg.recursion_limit = r.recursion_limit;
        cfg.context = r.context;
        cfg.context["thread_id"] = r.thread_id;
        cfg.stop = r.stop;
        if (r.observer.on_update) cfg.on_update = r.observer.on_update;
        if (r.observer.on_text) cfg.stream.on_text = r.observer.on_text;
        if (r.observer.on_event) cfg.stream.on_event = r.observer.on_event;
        if (configure_) cfg = configure_(std::move(cfg));
        return cfg;
    }

    std::shared_ptr<Agent> agent_;
    std::function<run_config(run_config)> configure_;
    std::shared_ptr<void> keep_alive_;
};

/// An assistant whose every run gets a new agent from `make()` (a callable
/// returning the agent by value or in a unique_ptr/shared_ptr).
template <class Make>
assistant_spec make_assistant(std::string graph_id, Make make) {
    assistant_spec spec;
    spec.graph_id = graph_id;
    spec.name = std::move(graph_id);
    spec.factory = [make = std::move(make)](const boost::json::object&) -> std::unique_ptr<assistant_run> {
        auto made = make();
        using made_type = decltype(made);
        if constexpr (requires {
                          made.get();
                          *made;
                      }) {
            using agent_type = std::remove_reference_t<decltype(*made)>;
            return std::make_unique<agent_run<agent_type>>(std::shared_ptr<agent_type>(std::move(made)));
        } else {
            return std::make_unique<agent_run<made_type>>(std::make_shared<made_type>(std::move(made)));
        }
    };
    return spec;
}

} // namespace agentware::server

#endif
