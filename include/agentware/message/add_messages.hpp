#ifndef AGENTWARE_MESSAGE_ADD_MESSAGES_HPP
#define AGENTWARE_MESSAGE_ADD_MESSAGES_HPP
// The merge rule for the message list of the agent state (LangGraph's add_messages).

#include <agentware/message/id.hpp>
#include <agentware/message/message.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace agentware {

namespace detail {

/// Finds messages of a list by id. Updates usually touch recent messages, so it
/// searches from the back; after a few lookups on a long list it builds a hash
/// index once, which keeps large updates (e.g. a restored history) linear.
class message_index {
public:
    explicit message_index(const std::vector<message>& list) : list_(list) {}

    std::optional<std::size_t> find(const std::string& id) {
        if (!map_ && ++lookups_ > linear_lookups && list_.size() > short_list) build();
        if (map_) {
            const auto it = map_->find(id);
            if (it == map_->end()) return std::nullopt;
            return it->second;
        }
        for (std::size_t i = list_.size(); i-- > 0;)
            if (list_[i].id == id) return i;
        return std::nullopt;
    }

    /// Call after pushing a message onto the list.
    void appended() {
        if (map_) (*map_)[list_.back().id] = list_.size() - 1;
    }

private:
    void build() {
        map_.emplace();
        map_->reserve(list_.size());
        // Later duplicates overwrite earlier ones, as the backward search would find them.
        for (std::size_t i = 0; i < list_.size(); ++i)
            (*map_)[list_[i].id] = i;
    }

    static constexpr std::size_t linear_lookups = 8;
    static constexpr std::size_t short_list = 32;

    const std::vector<message>& list_;
    std::optional<std::unordered_map<std::string, std::size_t>> map_;
    std::size_t lookups_ = 0;
};

/// Throws if a remove marker names no message; runs before anything changes so
/// a rejected update leaves the list untouched.
inline void check_removals(const std::vector<message>& base, const std::vector<message>& updates,
                           std::size_t first) {
    const bool any = std::any_of(updates.begin() + static_cast<std::ptrdiff_t>(first), updates.end(),
                                 [](const message& m) { return m.is_remove(); });
    if (!any) return;

    message_index existing{base};
    std::unordered_set<std::string_view> added; // ids introduced earlier in this update
    for (std::size_t i = first; i < updates.size(); ++i) {
        const message& m = updates[i];
        if (!m.is_remove()) {
            if (!m.id.empty()) added.insert(m.id);
            continue;
        }
        if (m.id.empty())
            throw std::invalid_argument(
                "add_messages: a remove marker needs the id of the message to remove");
        if (!added.count(m.id) && !existing.find(m.id))
            throw std::invalid_argument("add_messages: cannot remove message \"" + m.id +
                                        "\": no message has that id");
    }
}

} // namespace detail

/// Merges `updates` into `into` the way LangGraph's add_messages reducer does:
///  * a message without id gets make_message_id() and is appended;
///  * a message whose id is already present replaces that message in place;
///  * remove_message(id) deletes the message with that id (which may have been
///    added earlier in the same update); removing an unknown id throws
///    std::invalid_argument naming the id. Removals take effect at the end, so
///    a message removed and then re-sent in one update stays (as in LangGraph);
///  * remove_all_messages() drops everything before it — the current list and
///    the part of the update before the last such marker — and the rest of the
///    update is merged into the then empty list.
/// If it throws std::invalid_argument, `into` is unchanged.
///
/// Complexity (n = into.size(), u = updates.size()): messages without id cost
/// O(1) amortised each (no search). A message with an id is searched from the
/// back, O(distance from the end); past 8 such searches on a list longer than
/// 32 a hash index is built once, bounding the whole call by O(n + u) expected.
/// Removals add one O(n) compaction pass.
inline void add_messages(std::vector<message>& into, std::vector<message> updates) {
    std::size_t first = 0;
    bool clear = false;
    for (std::size_t i = updates.size(); i-- > 0;) {
        if (updates[i].is_remove_all()) {
            first = i + 1;
            clear = true;
            break;
        }
    }

    const std::vector<message> nothing;
    detail::check_removals(clear ? nothing : into, updates, first);
    if (clear) into.clear();

    detail::message_index index{into};
    std::vector<std::string> removed;
    for (std::size_t i = first; i < updates.size(); ++i) {
        message& m = updates[i];
        if (m.id.empty()) { // fresh message: its new id cannot clash, so no search
            m.id = make_message_id();
            into.push_back(std::move(m));
            index.appended();
            continue;
        }
        if (m.is_remove()) { // existence was checked above
            removed.push_back(std::move(m.id));
            continue;
        }
        if (const auto at = index.find(m.id)) {
            std::erase(removed, m.id); // re-sent after a removal: keep it
            into[*at] = std::move(m);
        } else {
            into.push_back(std::move(m));
            index.appended();
        }
    }

    if (!removed.empty()) {
        const std::unordered_set<std::string> doomed(removed.begin(), removed.end());
        std::erase_if(into, [&](const message& m) { return doomed.count(m.id) != 0; });
    }
}

} // namespace agentware

#endif
