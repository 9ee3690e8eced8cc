#ifndef AGENTWARE_STATE_UPDATE_HPP
#define AGENTWARE_STATE_UPDATE_HPP

#include <agentware/core/fields.hpp>
#include <agentware/message/message.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>

#include <string>
#include <utility>
#include <vector>

namespace agentware {

/// A partial change to the agent state, as a tool or a tool wrapper returns it.
///
/// Field values travel as JSON keyed by the field's name, because a tool does
/// not know the state type of the agent that runs it. The agent folds each
/// value in with the field's merge rule, and folds the updates of one round's
/// tool calls in call order, so parallel calls merge deterministically.
struct state_update {
    std::vector<message> messages; ///< merged by the add_messages rule
    boost::json::object fields;    ///< field name -> new value (or update, per the field's rule)

    template <state_field F>
    state_update& set(const typename F::value_type& value) {
        fields[F::name] = boost::json::value_from(value);
        return *this;
    }
    state_update& add(message m) {
        messages.push_back(std::move(m));
        return *this;
    }
    bool empty() const noexcept { return messages.empty() && fields.empty(); }
};

/// A state update named a field the agent's state does not have, or gave a
/// value that does not convert to the field's type.
class state_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace agentware

#endif
