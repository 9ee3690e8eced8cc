#ifndef AGENTWARE_MEMORY_MANAGER_HPP
#define AGENTWARE_MEMORY_MANAGER_HPP

// The memory manager (DeerFlow's DeerMem backend behind get_memory_manager()):
// what the memory and dynamic_context middlewares, and the summarization
// middleware's emergency path, talk to. One manager is shared by every run
// of an agent; it owns the storage, the updater and the queue's worker.

#include <agentware/memory/clock.hpp>
#include <agentware/memory/injection.hpp>
#include <agentware/memory/messages.hpp>
#include <agentware/memory/options.hpp>
#include <agentware/memory/queue.hpp>
#include <agentware/memory/storage.hpp>
#include <agentware/memory/updater.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

struct memory_manager_setup {
    memory_model model; ///< the memory model (required to extract anything)
    std::shared_ptr<memory_clock> clock = default_memory_clock();
    bool start_worker = true; ///< false: nothing runs until flush() (tests, replay)
};

class memory_manager {
public:
    explicit memory_manager(memory_options options, memory_manager_setup setup = {})
        : options_(std::move(options)), clock_(setup.clock ? std::move(setup.clock) : default_memory_clock()),
          storage_(std::make_shared<memory_storage>(
              detail::resolve_base_dir(options_.backend_config.storage_path), clock_)),
          updater_(std::make_shared<memory_updater>(storage_, std::move(setup.model), options_.backend_config,
                                                    clock_)),
          queue_(
              queue_options(options_.backend_config, setup.start_worker),
              [u = updater_](const memory_update_item& item) { u->update(item); }, clock_) {}

    ~memory_manager() { shutdown(); }
    memory_manager(const memory_manager&) = delete;
    memory_manager& operator=(const memory_manager&) = delete;

    const memory_options& options() const noexcept { return options_; }
    memory_storage& storage() noexcept { return *storage_; }
    memory_updater& updater() noexcept { return *updater_; }
    memory_update_queue& queue() noexcept { return queue_; }
    memory_clock& clock() noexcept { return *clock_; }

    /// Gives the worker its model (DeerFlow: backend_config.model, else the app's model).
    void set_model(memory_model model) { updater_->set_model(std::move(model)); }

    /// DeerMem.add: filters, detects signals and queues (debounced). Never
    /// throws: a conversation with nothing to remember, an unsafe id or a full
    /// queue gives `dropped` (the next turn feeds the conversation again).
    memory_add_result add(std::string_view thread_id, const std::vector<message>& messages,
                          std::string_view agent_name, std::string_view user_id,
                          std::string_view trace_id = {}) {
        return enqueue(thread_id, messages, agent_name, user_id, trace_id, false);
    }

    /// The immediate path (the summarization hook, before messages are
    /// compacted away): processed at once, ignoring the watermark.
    memory_add_result add_nowait(std::string_view thread_id, const std::vector<message>& messages,
                                 std::string_view agent_name, std::string_view user_id,
                                 std::string_view trace_id = {}) {
        return enqueue(thread_id, messages, agent_name, user_id, trace_id, true);
    }

    /// Processes every pending update now.
    bool flush(std::chrono::milliseconds timeout) { return queue_.flush(timeout); }

    /// Flushes with `shutdown_flush_timeout_seconds`, then stops the worker.
    bool shutdown() {
        return queue_.shutdown(std::chrono::milliseconds(
            static_cast<long long>(std::llround(options_.shutdown_flush_timeout_seconds * 1000))));
    }

    /// The user's memory for an agent; an empty one when it cannot be read.
    user_memory load(std::string_view user_id, std::string_view agent_name) {
        return storage_->load(user_id, agent_name);
    }

    /// The manager's read view (memory_view of what is stored).
    boost::json::object read_view(std::string_view user_id, std::string_view agent_name) {
        return memory_view(storage_->load(user_id, agent_name));
    }

    /// The `<memory>` block for dynamic_context; "" when injection is off,
    /// the memory is empty, or it cannot be read.
    std::string injection(std::string_view user_id, std::string_view agent_name) {
        if (!options_.enabled || !options_.injection_enabled || options_.manager_class == "noop") return {};
        try {
            const user_memory m = storage_->load(user_id, agent_name);
            memory_injection_options o;
            o.max_tokens = options_.backend_config.max_injection_tokens;
            o.guaranteed_categories = options_.backend_config.guaranteed_categories;
            o.guaranteed_token_budget = options_.backend_config.guaranteed_token_budget;
            o.include_facts = options_.mode != "tool";
            return memory_block(format_memory_for_injection(m, o));
        } catch (const std::exception&) {
            return {};
        }
    }

private:
    static memory_queue_options queue_options(const memory_backend_options& b, bool start_worker) {
        memory_queue_options q;
        q.debounce =
            std::chrono::milliseconds(static_cast<long long>(std::llround(b.debounce_seconds * 1000)));
        q.max_depth = b.queue_max_depth;
        q.between_items =
            std::chrono::milliseconds(static_cast<long long>(std::llround(b.between_items_seconds * 1000)));
        q.start_worker = start_worker;
        return q;
    }

    memory_add_result enqueue(std::string_view thread_id, const std::vector<message>& messages,
                              std::string_view agent_name, std::string_view user_id,
                              std::string_view trace_id, bool emergency) {
        if (!options_.enabled || options_.manager_class == "noop" || thread_id.empty())
            return memory_add_result::dropped;
        memory_update_item item;
        try {
            detail::check_memory_user(user_id);
            item.agent_name = detail::memory_agent_dir(agent_name);
        } catch (const std::exception&) {
            return memory_add_result::dropped;
        }
        item.messages = filter_messages_for_memory(messages);
        if (!worth_remembering(item.messages)) return memory_add_result::dropped;
        item.signals = detect_memory_signals(item.messages);
        item.thread_id = std::string(thread_id);
        item.user_id = std::string(user_id);
        item.trace_id = std::string(trace_id);
        return emergency ? queue_.add_nowait(std::move(item)) : queue_.add(std::move(item));
    }

    memory_options options_;
    std::shared_ptr<memory_clock> clock_;
    std::shared_ptr<memory_storage> storage_;
    std::shared_ptr<memory_updater> updater_;
    memory_update_queue queue_;
};

} // namespace agentware

#endif
