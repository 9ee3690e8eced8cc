#ifndef AGENTWARE_STATE_BASIC_STATE_HPP
#define AGENTWARE_STATE_BASIC_STATE_HPP

// The agent state: the messages plus the fields the pipeline's middlewares
// declare, composed at compile time into one plain object.

#include <agentware/core/fields.hpp>
#include <agentware/core/type_list.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/message/add_messages.hpp>
#include <agentware/message/json.hpp>
#include <agentware/message/message.hpp>
#include <agentware/state/update.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace agentware {
namespace detail {

template <class F>
typename F::value_type initial_value() {
    if constexpr (requires { F::initial(); })
        return F::initial();
    else
        return typename F::value_type{};
}

template <class F>
struct field_slot {
    typename F::value_type value = initial_value<F>();
};

/// Instantiated by `get<Field>(state)` for a field the state lacks; the compiler
/// prints `Field` in its template argument.
template <class Field>
struct state_has_no_such_field {
    static_assert(always_false<Field>,
                  "agentware::get<Field>(state): the field in this error's template argument is not in "
                  "the state, because no middleware of the pipeline declares it: list it in the "
                  "`using state_fields = agentware::fields<...>` of the middleware that owns it");
};
// Declared only: it stands for the value after that error, so that the error is the only one.
template <class Field>
typename Field::value_type& missing_field() noexcept;

template <class... Fs>
std::string field_names() {
    std::string out;
    ((out += out.empty() ? "" : ", ", out += std::string_view{Fs::name}), ...);
    return out.empty() ? "(none)" : out;
}

} // namespace detail

template <class FieldList>
class basic_state;

/// The state for a list of fields. Reach a field with `get<F>(state)`.
template <class... Fs>
class basic_state<type_list<Fs...>> : private detail::field_slot<Fs>... {
public:
    using fields = type_list<Fs...>;

    std::vector<message> messages;
    /// Keys of a loaded state that no field of this state claims, kept so that
    /// saving the state again loses nothing.
    boost::json::object unknown_fields;

    template <class F>
    static constexpr bool has = (std::is_same_v<F, Fs> || ...);

    template <class F>
    typename F::value_type& get() noexcept {
        if constexpr (has<F>)
            return static_cast<detail::field_slot<F>&>(*this).value;
        else
            return (void)sizeof(detail::state_has_no_such_field<F>), detail::missing_field<F>();
    }
    template <class F>
    const typename F::value_type& get() const noexcept {
        if constexpr (has<F>)
            return static_cast<const detail::field_slot<F>&>(*this).value;
        else
            return (void)sizeof(detail::state_has_no_such_field<F>), detail::missing_field<F>();
    }

    /// Folds `update` in: messages by the add_messages rule, each field by its
    /// merge rule. A field this state lacks, or a value of the wrong shape, is a
    /// state_error, and leaves the state as it was before the call.
    void apply(state_update update) {
        // Convert every field first, so a bad one changes nothing.
        auto staged = stage(update.fields);
        if (!update.messages.empty()) add_messages(messages, std::move(update.messages));
        commit(staged);
    }

    /// Type-erased read access to a field, for tools (which do not know the state type).
    static const void* find_field(const void* self, [[maybe_unused]] const void* tag) noexcept {
        [[maybe_unused]] const auto& s = *static_cast<const basic_state*>(self);
        const void* found = nullptr;
        [[maybe_unused]] bool hit =
            ((tag == &detail::field_tag<Fs> ? (found = &s.template get<Fs>(), true) : false) || ... || false);
        return found;
    }

    friend bool operator==(const basic_state& a, const basic_state& b) {
        return a.messages == b.messages && a.unknown_fields == b.unknown_fields &&
               ((a.template get<Fs>() == b.template get<Fs>()) && ...);
    }

    /// The state's JSON form without its messages: each field and the unknown
    /// keys (what a checkpointer that saves what changed compares).
    boost::json::object fields_json() const {
        boost::json::object o = unknown_fields;
        put_fields(o);
        return o;
    }

    friend void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const basic_state& s) {
        boost::json::object o = s.unknown_fields;
        boost::json::array msgs;
        msgs.reserve(s.messages.size());
        for (const message& m : s.messages)
            msgs.push_back(boost::json::value_from(m));
        o["messages"] = std::move(msgs);
        s.put_fields(o);
        jv = std::move(o);
    }

    friend basic_state tag_invoke(boost::json::value_to_tag<basic_state>, const boost::json::value& jv) {
        const auto* o = jv.if_object();
        if (!o) throw state_error("agent state: expected a JSON object");
        basic_state s;
        for (const auto& kv : *o) {
            std::string_view key = kv.key();
            if (key == "messages") {
                const auto* arr = kv.value().if_array();
                if (!arr) throw state_error("agent state: \"messages\" must be an array");
                s.messages.reserve(arr->size());
                for (const auto& m : *arr)
                    s.messages.push_back(boost::json::value_to<message>(m));
            } else if (!s.read_field(key, kv.value())) {
                s.unknown_fields.emplace(key, kv.value());
            }
        }
        return s;
    }

private:
    void put_fields([[maybe_unused]] boost::json::object& o) const {
        ((o[Fs::name] = boost::json::value_from(this->template get<Fs>())), ...);
    }

    using staged_fields = std::tuple<std::optional<typename Fs::value_type>...>;

    template <class F>
    static typename F::value_type convert(const boost::json::value& v) {
        try {
            return boost::json::value_to<typename F::value_type>(v);
        } catch (const std::exception& e) {
            throw state_error(
                detail::format("agent state: the value for field \"{}\" has the wrong shape: {}",
                               std::string_view{F::name}, e.what()));
        }
    }

    staged_fields stage(const boost::json::object& fields) const {
        staged_fields staged;
        for (const auto& kv : fields) {
            [[maybe_unused]] std::string_view key = kv.key();
            bool known =
                ((key == std::string_view{Fs::name}
                      ? (std::get<detail::index_in<Fs, Fs...>()>(staged) = convert<Fs>(kv.value()), true)
                      : false) ||
                 ... || false);
            if (!known)
                throw state_error(
                    detail::format("agent state: an update names the field \"{}\", which this agent's "
                                   "state does not have (its fields: {})",
                                   key, detail::field_names<Fs...>()));
        }
        return staged;
    }

    void commit([[maybe_unused]] staged_fields& staged) {
        ((std::get<detail::index_in<Fs, Fs...>()>(staged)
              ? merge_field<Fs>(get<Fs>(), std::move(*std::get<detail::index_in<Fs, Fs...>()>(staged)))
              : void()),
         ...);
    }

    bool read_field([[maybe_unused]] std::string_view key, [[maybe_unused]] const boost::json::value& v) {
        return ((key == std::string_view{Fs::name} ? (get<Fs>() = convert<Fs>(v), true) : false) || ... ||
                false);
    }
};

/// The field `F` of an agent state, as `std::get` reads a tuple: `get<artifacts>(state)`.
/// A free function, so a generic hook (`auto& state`) needs no `template` keyword.
template <state_field F, class Fields>
typename F::value_type& get(basic_state<Fields>& state) noexcept {
    return state.template get<F>();
}
template <state_field F, class Fields>
const typename F::value_type& get(const basic_state<Fields>& state) noexcept {
    return state.template get<F>();
}

/// The state type of an agent whose pipeline is `Pipeline`.
template <class Pipeline>
using agent_state = basic_state<typename Pipeline::state_fields>;

} // namespace agentware

#endif
