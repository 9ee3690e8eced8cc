#ifndef AGENTWARE_CORE_JUMP_HPP
#define AGENTWARE_CORE_JUMP_HPP

#include <optional>
#include <string_view>

namespace agentware {

/// Where control goes when a hook cuts its chain short.
///
/// `end`: leave the loop; the `after_agent` hooks still run.
/// `model`: go back to the start of a round (through the `before_model` hooks).
/// `tools`: run the pending tool calls of the last ai message.
enum class jump_to { end, model, tools };

/// What every pipeline entry point returns: empty when the whole chain ran,
/// otherwise the first jump a hook asked for (the rest of that chain did not run).
using hook_result = std::optional<jump_to>;

constexpr std::string_view to_string(jump_to j) noexcept {
    switch (j) {
    case jump_to::end:
        return "end";
    case jump_to::model:
        return "model";
    case jump_to::tools:
        return "tools";
    }
    return "?";
}

} // namespace agentware

#endif
