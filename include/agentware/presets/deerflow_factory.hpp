#ifndef AGENTWARE_PRESETS_DEERFLOW_FACTORY_HPP
#define AGENTWARE_PRESETS_DEERFLOW_FACTORY_HPP

// DeerFlow's SDK factory (reference §4.2): create_deerflow_agent(model, tools,
// features, extra middlewares...) with runtime_features, and the placement of
// extra middlewares next to an anchor, resolved when the program compiles.
//
// An extra middleware type declares where it goes:
//   using place_after = agentware::summarization;   // DeerFlow's @Next(SummarizationMiddleware)
//   using place_before = agentware::clarification;  // DeerFlow's @Prev(ClarificationMiddleware)
// An extra without either goes right before clarification. Anchors may be
// other extras. Both on one type, two extras on the same anchor, a cycle
// among extras and an anchor that is not in the chain do not compile; the
// error type's name says which rule, its template arguments name the
// middlewares (docs/lead_agent.md).

#include <agentware/agent/agent.hpp>
#include <agentware/core/pipeline.hpp>
#include <agentware/core/type_list.hpp>
#include <agentware/middleware/clarification.hpp>
#include <agentware/middleware/dangling_tool_call.hpp>
#include <agentware/middleware/guardrail.hpp>
#include <agentware/middleware/loop_detection.hpp>
#include <agentware/middleware/memory.hpp>
#include <agentware/middleware/sandbox.hpp>
#include <agentware/middleware/subagent_limit.hpp>
#include <agentware/middleware/summarization.hpp>
#include <agentware/middleware/thread_data.hpp>
#include <agentware/middleware/title.hpp>
#include <agentware/middleware/todo.hpp>
#include <agentware/middleware/token_budget.hpp>
#include <agentware/middleware/tool_error_handling.hpp>
#include <agentware/middleware/uploads.hpp>
#include <agentware/middleware/view_image.hpp>
#include <agentware/subagents/executor.hpp>
#include <agentware/subagents/task_tool.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace agentware {

// ---------------------------------------------------------------------------
// Placement errors: each names the rule; its template arguments name the middlewares.

template <class Extra>
struct deerflow_extra_declares_both_place_after_and_place_before {
    static_assert(detail::always_false<Extra>,
                  "agentware::create_deerflow_agent: the extra middleware in this error's template argument "
                  "declares both place_after and place_before (DeerFlow: cannot have both @Next and @Prev)");
};

template <class First, class Second, class Anchor>
struct deerflow_extras_conflict_same_anchor {
    static_assert(detail::always_false<First>,
                  "agentware::create_deerflow_agent: placement conflict: the first two extra middlewares in "
                  "this error's template arguments both go right next to the third on the same side");
};

template <class After, class Before, class Anchor>
struct deerflow_extras_conflict_opposite_sides {
    static_assert(detail::always_false<After>,
                  "agentware::create_deerflow_agent: placement conflict: the first extra middleware in this "
                  "error's template arguments is placed after the third and the second before it; anchor "
                  "one of them on the other extra instead");
};

template <class... Pending>
struct deerflow_extras_circular_placement {
    static_assert(detail::always_false<Pending...>,
                  "agentware::create_deerflow_agent: circular placement among the extra middlewares in this "
                  "error's template arguments (each is anchored on another of them)");
};

template <class Extra, class Anchor>
struct deerflow_extra_anchor_not_in_chain {
    static_assert(
        detail::always_false<Extra>,
        "agentware::create_deerflow_agent: the first middleware in this error's template arguments is "
        "anchored on the second, which is not in the chain");
};

namespace detail {

struct no_anchor {};

template <class M>
struct place_after_of {
    using type = no_anchor;
};
template <class M>
    requires requires { typename M::place_after; }
struct place_after_of<M> {
    using type = typename M::place_after;
};
template <class M>
struct place_before_of {
    using type = no_anchor;
};
template <class M>
    requires requires { typename M::place_before; }
struct place_before_of<M> {
    using type = typename M::place_before;
};

template <class M>
inline constexpr bool has_place_after = !std::is_same_v<typename place_after_of<M>::type, no_anchor>;
template <class M>
inline constexpr bool has_place_before = !std::is_same_v<typename place_before_of<M>::type, no_anchor>;
template <class M>
inline constexpr bool anchored = has_place_after<M> || has_place_before<M>;

// The anchor of an anchored extra, and whether it goes after it.
template <class M>
using anchor_t = std::conditional_t<has_place_after<M>, typename place_after_of<M>::type,
                                    typename place_before_of<M>::type>;

template <class A, class B>
consteval bool check_extra_pair() {
    if constexpr (!anchored<A> || !anchored<B> || std::is_same_v<A, B>) {
        return true;
    } else if constexpr (!std::is_same_v<anchor_t<A>, anchor_t<B>>) {
        return true;
    } else if constexpr (has_place_after<A> == has_place_after<B>) {
        (void)sizeof(deerflow_extras_conflict_same_anchor<A, B, anchor_t<A>>);
        return false;
    } else if constexpr (has_place_after<A>) {
        (void)sizeof(deerflow_extras_conflict_opposite_sides<A, B, anchor_t<A>>);
        return false;
    } else {
        return true; // reported once, from the (after, before) pair
    }
}

template <class M>
consteval bool check_extra_alone() {
    if constexpr (has_place_after<M> && has_place_before<M>) {
        (void)sizeof(deerflow_extra_declares_both_place_after_and_place_before<M>);
        return false;
    } else {
        return true;
    }
}

template <class... Extras>
consteval bool check_extras() {
    if constexpr (sizeof...(Extras) == 0) {
        return true;
    } else {
        const bool alone = (check_extra_alone<Extras>() && ...);
        const bool pairs = ([]<class A>(std::type_identity<A>) {
            return (check_extra_pair<A, Extras>() && ...);
        }(std::type_identity<Extras>{}) &&
                            ...);
        return alone && pairs;
    }
}

// The middleware type of a slot.
template <class S>
using extra_slot_middleware_t = slot_middleware_t<S>;

// Index of middleware M among the slots of List (its size when absent).
template <class M, class List>
struct slot_index;
template <class M, class... Slots>
struct slot_index<M, type_list<Slots...>> {
    static constexpr std::size_t value = index_in<M, slot_middleware_t<Slots>...>();
};

// Inserts T at position I of List.
template <std::size_t I, class T, class Before, class After>
struct insert_at_impl;
template <class T, class... Before, class... After>
struct insert_at_impl<0, T, type_list<Before...>, type_list<After...>> {
    using type = type_list<Before..., T, After...>;
};
template <std::size_t I, class T, class... Before, class A, class... After>
    requires(I > 0)
struct insert_at_impl<I, T, type_list<Before...>, type_list<A, After...>>
    : insert_at_impl<I - 1, T, type_list<Before..., A>, type_list<After...>> {};
template <std::size_t I, class T, class List>
using insert_at_t = typename insert_at_impl<I, T, type_list<>, List>::type;

// Removes T from List.
template <class T, class List>
struct list_remove;
template <class T, class... Ts>
struct list_remove<T, type_list<Ts...>> {
    using type = list_concat_t<std::conditional_t<std::is_same_v<T, Ts>, type_list<>, type_list<Ts>>...>;
};

// The first pending extra whose anchor is in List (void when none).
template <class List, class Pending>
struct first_placeable;
template <class List>
struct first_placeable<List, type_list<>> {
    using type = void;
};
template <class List, class P, class... Rest>
struct first_placeable<List, type_list<P, Rest...>> {
    using type = std::conditional_t<(slot_index<anchor_t<P>, List>::value < List::size), P,
                                    typename first_placeable<List, type_list<Rest...>>::type>;
};

template <class List, class Pending>
struct no_progress_error;
template <class List, class... Pending>
struct no_progress_error<List, type_list<Pending...>> {
    // A cycle when some anchor is itself pending; else a missing anchor.
    static consteval bool report() {
        constexpr bool cycle = (list_contains<anchor_t<Pending>, type_list<Pending...>>::value || ...);
        if constexpr (cycle) {
            (void)sizeof(deerflow_extras_circular_placement<Pending...>);
        } else {
            using first = typename list_at<0, type_list<Pending...>>::type;
            (void)sizeof(deerflow_extra_anchor_not_in_chain<first, anchor_t<first>>);
        }
        return false;
    }
    using type = List;
};

template <class List, class Pending>
struct place_anchored {
    using next = typename first_placeable<List, Pending>::type;
    template <class N>
    static auto step() {
        if constexpr (std::is_void_v<N>) {
            static_assert(no_progress_error<List, Pending>::report());
            return std::type_identity<List>{};
        } else {
            constexpr std::size_t at = slot_index<anchor_t<N>, List>::value;
            using placed = insert_at_t<(has_place_after<N> ? at + 1 : at), N, List>;
            return std::type_identity<
                typename place_anchored<placed, typename list_remove<N, Pending>::type>::type>{};
        }
    }
    using type = typename decltype(step<next>())::type;
};
template <class List>
struct place_anchored<List, type_list<>> {
    using type = List;
};

// Unanchored extras go right before the last slot (clarification), in the given order.
template <class Base, class Unanchored>
struct place_unanchored;
template <class... Base, class... U>
struct place_unanchored<type_list<Base...>, type_list<U...>> {
    using last = typename list_at<sizeof...(Base) - 1, type_list<Base...>>::type;
    using init = typename list_remove<last, type_list<Base...>>::type;
    using type = list_concat_t<init, type_list<U...>, type_list<last>>;
};

// Clarification stays last (DeerFlow moves it back when an extra pushed it off).
template <class List>
struct clarification_last {
    using cl = std::optional<clarification>;
    using type = std::conditional_t<list_contains<cl, List>::value,
                                    list_concat_t<typename list_remove<cl, List>::type, type_list<cl>>, List>;
};

template <class List>
struct pipeline_of;
template <class... Slots>
struct pipeline_of<type_list<Slots...>> {
    using type = pipeline<Slots...>;
};

} // namespace detail

/// The SDK chain's slots (§4.2's assembled order), before extras.
using deerflow_sdk_base =
    type_list<std::optional<thread_data>, std::optional<uploads>, std::optional<sandbox>, dangling_tool_call,
              std::optional<guardrail<allowlist_provider>>, tool_error_handling, std::optional<summarization>,
              std::optional<todo>, std::optional<title>, std::optional<memory>, std::optional<view_image>,
              std::optional<subagent_limit>, std::optional<loop_detection>, std::optional<token_budget>,
              std::optional<clarification>>;

/// The pipeline type create_deerflow_agent makes for these extra middlewares.
template <class... Extras>
struct deerflow_sdk_pipeline {
    static_assert(detail::check_extras<Extras...>());
    using unanchored = detail::list_concat_t<
        std::conditional_t<detail::anchored<Extras>, type_list<>, type_list<Extras>>...>;
    using anchored = detail::list_concat_t<
        std::conditional_t<detail::anchored<Extras>, type_list<Extras>, type_list<>>...>;
    using with_unanchored = typename detail::place_unanchored<deerflow_sdk_base, unanchored>::type;
    using slots = typename detail::clarification_last<
        typename detail::place_anchored<with_unanchored, anchored>::type>::type;
    using type = typename detail::pipeline_of<slots>::type;
};
template <class... Extras>
using deerflow_sdk_pipeline_t = typename deerflow_sdk_pipeline<Extras...>::type;

/// One feature of runtime_features: off (false), on with the built-in
/// default (true), or on with the given middleware (DeerFlow's instance).
template <class M>
class feature {
public:
    feature(bool on = false) : value_(on) {}
    feature(M m) : value_(std::move(m)) {}
    bool on() const noexcept { return !std::holds_alternative<bool>(value_) || std::get<bool>(value_); }
    /// The given middleware, when one was given.
    const M* instance() const noexcept { return std::get_if<M>(&value_); }
    M* instance() noexcept { return std::get_if<M>(&value_); }

private:
    std::variant<bool, M> value_;
};

/// DeerFlow's RuntimeFeatures (§4.2), with its defaults.
struct runtime_features {
    feature<agentware::sandbox> sandbox =
        true; ///< thread_data, uploads and sandbox (a given sandbox: that one alone)
    feature<agentware::memory> memory = false;
    feature<agentware::summarization> summarization = false; ///< true is refused: it needs a model
    bool subagent = false;                                   ///< subagent_limit and the `task` tool
    bool vision = false;                                     ///< view_image and its tool
    feature<agentware::title> auto_title = false;
    feature<agentware::guardrail<allowlist_provider>> guardrail =
        false; ///< true is refused: no built-in provider
    feature<agentware::loop_detection> loop_detection = true;
    feature<agentware::token_budget> token_budget = false;

    /// DeerFlow's checks, with its texts. Throws std::invalid_argument.
    void validate() const {
        if (summarization.on() && !summarization.instance())
            // Text kept for parity with DeerFlow (reference §4.2).
            throw std::invalid_argument("summarization=True requires a custom AgentMiddleware instance "
                                        "(SummarizationMiddleware needs a model argument)");
        if (guardrail.on() && !guardrail.instance())
            // Text kept for parity with DeerFlow (reference §4.2).
            throw std::invalid_argument("guardrail=True requires a custom AgentMiddleware instance (no "
                                        "built-in GuardrailMiddleware yet)");
    }
};

/// What create_deerflow_agent takes besides the model, tools and features.
struct deerflow_agent_options {
    std::string system_prompt;
    bool plan_mode = false;                      ///< todo
    std::shared_ptr<subagent_executor> executor; ///< for `task` (subagent feature); empty: one over the tools
};

namespace detail {

template <class Slot, class F>
void engage_feature(std::optional<Slot>& slot, F& f) {
    if (!f.on()) return;
    if (auto* m = f.instance())
        slot.emplace(std::move(*m));
    else
        slot.emplace();
}

} // namespace detail

/// DeerFlow's create_deerflow_agent: the SDK chain of `features` with the
/// extra middlewares placed by their anchors (at compile time), the tools
/// the features bring appended after the user's (a name the user already
/// has is skipped: the user's wins). Throws std::invalid_argument for the
/// features DeerFlow refuses. (DeerFlow's `middleware` full takeover is an
/// agent made with your own pipeline; mixing it with features or extras
/// cannot be written, so its two errors have no counterpart here.)
template <class Model, class... Extras>
auto create_deerflow_agent(Model model, tool_set tools, runtime_features features = {},
                           deerflow_agent_options options = {}, Extras... extra) {
    features.validate();
    using pipeline_t = deerflow_sdk_pipeline_t<Extras...>;
    pipeline_t chain;
    if (features.sandbox.on()) {
        if (auto* s = features.sandbox.instance()) {
            chain.template slot<sandbox>().emplace(std::move(*s));
        } else {
            thread_data_options td;
            td.lazy_init = true;
            chain.template slot<thread_data>().emplace(td);
            chain.template slot<uploads>().emplace();
            chain.template slot<sandbox>().emplace();
        }
    }
    detail::engage_feature(chain.template slot<guardrail<allowlist_provider>>(), features.guardrail);
    detail::engage_feature(chain.template slot<summarization>(), features.summarization);
    if (options.plan_mode) chain.template slot<todo>().emplace();
    detail::engage_feature(chain.template slot<title>(), features.auto_title);
    detail::engage_feature(chain.template slot<memory>(), features.memory);
    if (features.vision) chain.template slot<view_image>().emplace();
    if (features.subagent) chain.template slot<subagent_limit>().emplace();
    detail::engage_feature(chain.template slot<loop_detection>(), features.loop_detection);
    detail::engage_feature(chain.template slot<token_budget>(), features.token_budget);
    // Feature tools come after the user's; the user's name wins.
    if (tools.find(clarification_options{}.tool_name)) {
        clarification_options co;
        co.provide_tool = false;
        chain.template slot<clarification>().emplace(std::move(co));
    } else {
        chain.template slot<clarification>().emplace();
    }
    if (features.subagent && !tools.find("task")) {
        std::shared_ptr<subagent_executor> executor = options.executor;
        if (!executor) {
            subagent_executor_options eo;
            eo.tools = tools;
            // The sandbox's tools too (the user's win a name): the `bash` type is
            // offered when the sandbox runs bash (isolated, or allow_host_bash).
            if (const auto* s = chain.template get<sandbox>()) {
                eo.allow_bash = s->options().offers_bash();
                for (auto& t : s->tools())
                    if (!eo.tools.find(t->schema().name)) eo.tools.add(t);
            }
            executor = std::make_shared<subagent_executor>(std::move(eo));
        }
        tools.add(make_task_tool(std::move(executor)));
    }
    ((chain.template slot<Extras>() = std::move(extra)), ...);
    agent_options ao;
    ao.system_prompt = std::move(options.system_prompt);
    return agent<Model, pipeline_t>(std::move(model), std::move(tools), std::move(chain), std::move(ao));
}

} // namespace agentware

#endif
