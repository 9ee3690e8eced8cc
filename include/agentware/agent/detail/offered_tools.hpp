#ifndef AGENTWARE_AGENT_DETAIL_OFFERED_TOOLS_HPP
#define AGENTWARE_AGENT_DETAIL_OFFERED_TOOLS_HPP

// The tools a round offers the model: the agent's own, plus those brought by
// the middlewares whose slots are engaged at that moment (the `tools()` hook).
//
// A middleware's `tools()` builds its tools (it may parse schemas), so the
// union is not rebuilt every round: it is kept under a key made of which
// optional tool-bringing slots are engaged and a generation that the agent
// bumps when its own tool set may have changed. A run compares keys each
// round (a few instructions) and takes the shared union only when they differ.

#include <agentware/core/hooks.hpp>
#include <agentware/core/slot.hpp>
#include <agentware/core/type_list.hpp>
#include <agentware/tool/tool.hpp>
#include <agentware/tool/tool_set.hpp>

#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <mutex>
#include <utility>

namespace agentware {

/// Instantiated for a middleware whose member `tools` the agent cannot call;
/// the compiler prints `Middleware` in the instantiation context.
template <class Middleware>
struct middleware_tools_hook_error {
    static_assert(
        detail::always_false<Middleware>,
        "agentware::agent: this middleware declares the hook `tools`, but the agent cannot call it as "
        "`tools()` returning a range of std::shared_ptr<agentware::tool_interface>. Fix the signature "
        "of tools in the middleware type named in the instantiation notes, or rename the member.");
};

namespace detail {

/// A range of tools, as a range-for reads it (spelled with std::begin rather
/// than std::ranges: <ranges> alone is a fifth of a second of every file's
/// compile time).
template <class R>
concept range_of_tools = requires(R& r) {
    std::begin(r) != std::end(r);
    { *std::begin(r) } -> std::convertible_to<std::shared_ptr<tool_interface>>;
};

/// `tools()` as the agent calls it.
template <class M>
concept callable_tools_hook = requires(M& m) { m.tools(); } &&
                              range_of_tools<std::remove_reference_t<decltype(std::declval<M&>().tools())>>;

template <class M>
consteval bool check_tools_hook() {
    if constexpr (declares_tools<M> && !callable_tools_hook<M>) (void)sizeof(middleware_tools_hook_error<M>);
    return true;
}

/// A tool-bringing middleware whose tools may change while its slot stays
/// engaged (MCP servers' `list_changed`): `tools_version()` grows each time
/// they do, and the next round asks `tools()` again.
template <class M>
concept versioned_tools = requires(const M& m) {
    { m.tools_version() } -> std::convertible_to<std::uint64_t>;
};

/// Which engaged optional slots bring tools, and when the agent's own tools
/// last changed: equal keys mean equal offers.
struct offer_key {
    std::uint64_t engaged = 0;
    std::uint64_t generation = ~std::uint64_t{0}; // matches no real generation: the first round looks up
    std::uint64_t versions = 0;                   // the sum of the engaged versioned_tools' versions
    friend bool operator==(const offer_key&, const offer_key&) = default;
};

/// What a run holds between rounds: the offer it used last, and its key.
struct round_offer {
    offer_key key;
    std::shared_ptr<const tool_set> tools;
};

template <class Pipeline>
class offered_tools;

template <class... Slots, template <class...> class P>
class offered_tools<P<Slots...>> {
    using slots = type_list<Slots...>;
    static_assert((check_tools_hook<slot_middleware_t<Slots>>() && ...));

    template <std::size_t I>
    using slot_at = typename list_at<I, slots>::type;

public:
    /// True when some middleware of the pipeline brings tools.
    static constexpr bool any = (declares_tools<slot_middleware_t<Slots>> || ... || false);

    /// The agent's tools may have changed (it handed out a mutable reference).
    void invalidate() noexcept { cache_->generation.fetch_add(1, std::memory_order_relaxed); }

    /// The tools offered now. `held` is the run's last offer: kept when the
    /// key has not changed. Throws std::invalid_argument when two tools share
    /// a name (a middleware's tool named like one of the agent's).
    template <class Pipe>
    const tool_set& current(Pipe& pipeline, const tool_set& own, round_offer& held) {
        const offer_key key{engaged(pipeline, std::index_sequence_for<Slots...>{}),
                            cache_->generation.load(std::memory_order_relaxed), versions(pipeline)};
        if (held.tools && held.key == key) return *held.tools;
        std::lock_guard lock(cache_->mutex);
        if (!cache_->tools || !(cache_->key == key)) {
            cache_->tools = build(pipeline, own);
            cache_->key = key;
        }
        held = {key, cache_->tools};
        return *held.tools;
    }

private:
    static constexpr bool any_versioned = (versioned_tools<slot_middleware_t<Slots>> || ... || false);

    template <class Pipe>
    static std::uint64_t versions(Pipe& pipeline) {
        std::uint64_t sum = 0;
        if constexpr (any_versioned)
            pipeline.for_each_enabled([&](auto& m) {
                if constexpr (versioned_tools<std::remove_cvref_t<decltype(m)>>) sum += m.tools_version();
            });
        return sum;
    }

    // Bit I is set when slot I is optional, brings tools and is engaged.
    template <class Pipe, std::size_t... Is>
    static std::uint64_t engaged(Pipe& pipeline, std::index_sequence<Is...>) noexcept {
        std::uint64_t bits = 0;
        ((optional_provider<slot_at<Is>> && pipeline.template enabled<slot_middleware_t<slot_at<Is>>>()
              ? bits |= std::uint64_t{1} << Is
              : bits),
         ...);
        return bits;
    }
    template <class S>
    static constexpr bool optional_provider = is_optional_slot_v<S> && declares_tools<slot_middleware_t<S>>;
    static_assert(sizeof...(Slots) <= 64, "agentware::agent: a pipeline of more than 64 slots");

    template <class Pipe>
    static std::shared_ptr<const tool_set> build(Pipe& pipeline, const tool_set& own) {
        auto out = std::make_shared<tool_set>(own);
        pipeline.for_each_enabled([&](auto& m) {
            if constexpr (declares_tools<std::remove_cvref_t<decltype(m)>>)
                for (auto&& t : m.tools())
                    out->add(std::shared_ptr<tool_interface>(t));
        });
        return out;
    }

    struct cache {
        std::mutex mutex;
        offer_key key;
        std::shared_ptr<const tool_set> tools;
        std::atomic<std::uint64_t> generation{0};
    };
    std::unique_ptr<cache> cache_ = std::make_unique<cache>();
};

} // namespace detail
} // namespace agentware

#endif
