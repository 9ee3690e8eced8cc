#ifndef AGENTWARE_AGENT_MEMORY_CHECKPOINTER_HPP
#define AGENTWARE_AGENT_MEMORY_CHECKPOINTER_HPP

// A checkpointer that keeps states in memory. Like the file one, it accepts
// only valid thread ids (validate_thread_id): switching from memory to disk
// must never start rejecting ids that used to work.

#include <agentware/agent/checkpointer.hpp>
#include <agentware/thread/id.hpp>

#include <boost/json/value.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentware {

/// Keeps states in memory, for tests and single-process servers.
///
/// A handle: copies share one store (a shared_ptr), so an agent and its caller
/// can hold the same checkpointer. All members may be called concurrently from
/// any number of threads. States are deep-copied in and out with the default
/// memory resource, so a saved value never refers to the caller's allocator and
/// a loaded one is the caller's to modify.
class memory_checkpointer {
public:
    memory_checkpointer() : store_(std::make_shared<store>()) {}

    std::optional<boost::json::value> load(std::string_view thread_id) const {
        validate_thread_id(thread_id);
        std::lock_guard lock(store_->mutex);
        const auto it = store_->states.find(thread_id);
        if (it == store_->states.end()) return std::nullopt;
        return std::optional<boost::json::value>(std::in_place, it->second, boost::json::storage_ptr());
    }

    void save(std::string_view thread_id, const boost::json::value& state) {
        validate_thread_id(thread_id);
        // Copy outside the lock: a large state should not stall other threads.
        boost::json::value copy(state, boost::json::storage_ptr());
        std::lock_guard lock(store_->mutex);
        const auto it = store_->states.find(thread_id);
        if (it == store_->states.end()) {
            store_->states.emplace(std::string(thread_id), std::move(copy));
        } else {
            // The old state is destroyed after the lock is released.
            std::swap(it->second, copy);
        }
    }

    bool erase(std::string_view thread_id) {
        validate_thread_id(thread_id);
        std::lock_guard lock(store_->mutex);
        const auto it = store_->states.find(thread_id);
        if (it == store_->states.end()) return false;
        store_->states.erase(it);
        return true;
    }

    /// The stored thread ids, sorted.
    std::vector<std::string> list() const {
        std::lock_guard lock(store_->mutex);
        std::vector<std::string> ids;
        ids.reserve(store_->states.size());
        for (const auto& entry : store_->states)
            ids.push_back(entry.first);
        return ids;
    }

    std::size_t size() const {
        std::lock_guard lock(store_->mutex);
        return store_->states.size();
    }

private:
    struct store {
        mutable std::mutex mutex;
        std::map<std::string, boost::json::value, std::less<>> states;
    };
    std::shared_ptr<store> store_;
};

static_assert(checkpointer<memory_checkpointer>);

} // namespace agentware

#endif
