#ifndef AGENTWARE_MESSAGE_IMPL_ADD_MESSAGES_IPP
#define AGENTWARE_MESSAGE_IMPL_ADD_MESSAGES_IPP

// add_messages: in every translation unit that includes add_messages.hpp
// (header-only), or once in <agentware/src.hpp> (AGENTWARE_SEPARATE_COMPILATION).

#include <agentware/message/add_messages.hpp>
#include <agentware/message/id.hpp>

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
AGENTWARE_DECL void check_removals(const std::vector<message>& base, const std::vector<message>& updates,
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

void add_messages(std::vector<message>& into, std::vector<message> updates) {
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
