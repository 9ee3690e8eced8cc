#ifndef AGENTWARE_CORE_HPP
#define AGENTWARE_CORE_HPP

// The middleware pipeline alone: hook concepts, pipeline, optional slots,
// jumps, state-field declarations and ordering rules. Pulls in only Boost.Hana
// and the standard library, so it compiles fast.

#include <agentware/core/fields.hpp>
#include <agentware/core/hooks.hpp>
#include <agentware/core/jump.hpp>
#include <agentware/core/ordering.hpp>
#include <agentware/core/pipeline.hpp>
#include <agentware/core/slot.hpp>
#include <agentware/core/type_list.hpp>

#endif
