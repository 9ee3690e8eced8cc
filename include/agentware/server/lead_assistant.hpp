#ifndef AGENTWARE_SERVER_LEAD_ASSISTANT_HPP
#define AGENTWARE_SERVER_LEAD_ASSISTANT_HPP

// DeerFlow's lead agent as an assistant: a new lead agent for each run, made
// from the configuration and the run's context (thinking_enabled,
// is_plan_mode, subagent_enabled, model_name, ... as DeerFlow's web UI sends
// them), as DeerFlow's make_lead_agent is called per run.

#include <agentware/presets/lead_agent.hpp>
#include <agentware/server/assistant.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace agentware::server {

/// The assistant `graph_id` (DeerFlow's is "lead_agent") over make_lead_agent.
/// `current_setup` gives the setup each run starts with (a program that
/// switches skills on and off hands out a new one); `config` and the setups
/// must outlive the runs that use them.
inline assistant_spec
lead_agent_assistant(std::shared_ptr<const boost::json::value> config,
                     std::function<std::shared_ptr<const lead_agent_setup>()> current_setup,
                     std::string graph_id = "lead_agent") {
    assistant_spec spec;
    spec.graph_id = graph_id;
    spec.name = std::move(graph_id);
    spec.description = "DeerFlow's lead agent";
    // One memory for every run, as DeerFlow has one memory queue per process:
    // the first agent's manager is kept (with its model) and handed to the
    // agents after it, so memory updates are debounced across runs and
    // flushed when the server ends, not at the end of each run.
    struct shared_state {
        std::mutex mutex;
        std::shared_ptr<memory_manager> manager;
        // The setup the runs use: the current one with the memory sharing
        // added, made again only when the current one changes.
        std::shared_ptr<const lead_agent_setup> base;
        std::shared_ptr<const lead_agent_setup> own;
    };
    auto state = std::make_shared<shared_state>();
    spec.factory = [config, current_setup = std::move(current_setup),
                    state](const boost::json::object& context) -> std::unique_ptr<assistant_run> {
        std::shared_ptr<const lead_agent_setup> base = current_setup(), setup;
        {
            std::lock_guard lock(state->mutex);
            if (state->base != base) {
                auto own = std::make_shared<lead_agent_setup>(*base);
                own->attach_helpers = [attach = base->attach_helpers,
                                       weak = std::weak_ptr<shared_state>(state)](deerflow_pipeline& chain) {
                    if (attach) attach(chain);
                    auto* m = chain.get<memory>();
                    auto shared = weak.lock();
                    if (m == nullptr || !shared) return;
                    std::lock_guard lock(shared->mutex);
                    if (!shared->manager)
                        shared->manager = m->manager();
                    else
                        *m = memory(shared->manager);
                };
                state->base = base;
                state->own = std::move(own);
            }
            setup = state->own;
        }
        auto holder = std::make_shared<lead_agent>(
            make_lead_agent(*config, lead_agent_request::from_context(context), *setup));
        using agent_type = lead_agent::agent_type;
        std::shared_ptr<agent_type> agent(holder, holder->agent.get());
        return std::make_unique<agent_run<agent_type>>(
            std::move(agent), [holder, setup](run_config c) { return holder->config(std::move(c)); });
    };
    return spec;
}

/// The same with one setup for every run.
inline assistant_spec lead_agent_assistant(std::shared_ptr<const boost::json::value> config,
                                           std::shared_ptr<const lead_agent_setup> setup,
                                           std::string graph_id = "lead_agent") {
    return lead_agent_assistant(
        std::move(config), [setup = std::move(setup)] { return setup; }, std::move(graph_id));
}

} // namespace agentware::server

#endif
