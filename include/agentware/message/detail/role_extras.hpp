#ifndef AGENTWARE_MESSAGE_DETAIL_ROLE_EXTRAS_HPP
#define AGENTWARE_MESSAGE_DETAIL_ROLE_EXTRAS_HPP
// The members of a message that only some roles use (a tool message's call id,
// an ai message's reasoning and unusable tool calls), kept out of line.

#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// A tool call the model sent with arguments that are not a JSON object. Kept
/// (not dropped, not thrown) so the model can be told what went wrong.
struct invalid_tool_call {
    std::string id;
    std::string name;
    std::string raw_args;
    std::string error;

    friend bool operator==(const invalid_tool_call&, const invalid_tool_call&) = default;
};

namespace detail {

/// One pointer in the message; one allocation holding both strings' characters
/// when any is set. Most messages (human, system, an ai answer without
/// reasoning) hold none, and a tool message's block replaces the heap buffer
/// its call id needed anyway (provider ids are longer than a string's inline
/// buffer), so it costs no extra allocation.
class role_extras {
public:
    role_extras() noexcept = default;
    role_extras(const role_extras& o) {
        if (o.block_ != nullptr) assign(o.tool_call_id(), o.reasoning(), std::vector(o.block_->invalid));
    }
    role_extras(role_extras&& o) noexcept : block_(std::exchange(o.block_, nullptr)) {}
    role_extras& operator=(const role_extras& o) {
        if (this != &o) *this = role_extras(o);
        return *this;
    }
    role_extras& operator=(role_extras&& o) noexcept {
        if (this != &o) {
            release();
            block_ = std::exchange(o.block_, nullptr);
        }
        return *this;
    }
    ~role_extras() { release(); }

    std::string_view tool_call_id() const noexcept {
        return block_ ? std::string_view(chars(), block_->tool_call_id_size) : std::string_view();
    }
    std::string_view reasoning() const noexcept {
        return block_ ? std::string_view(chars() + block_->tool_call_id_size, block_->reasoning_size)
                      : std::string_view();
    }
    const std::vector<invalid_tool_call>& invalid_tool_calls() const noexcept {
        return block_ ? block_->invalid : no_invalid_calls();
    }

    void set_tool_call_id(std::string_view value) { assign(value, reasoning(), take_invalid()); }
    void set_reasoning(std::string_view value) { assign(tool_call_id(), value, take_invalid()); }
    std::vector<invalid_tool_call>& edit_invalid_tool_calls() {
        if (block_ == nullptr) make_block({}, {}, {});
        return block_->invalid;
    }

    friend bool operator==(const role_extras& a, const role_extras& b) noexcept {
        return a.tool_call_id() == b.tool_call_id() && a.reasoning() == b.reasoning() &&
               a.invalid_tool_calls() == b.invalid_tool_calls();
    }

private:
    struct block {
        std::vector<invalid_tool_call> invalid;
        std::uint32_t tool_call_id_size;
        std::uint32_t reasoning_size;
        // followed by the characters of tool_call_id, then those of reasoning
    };

    static const std::vector<invalid_tool_call>& no_invalid_calls() noexcept {
        static const std::vector<invalid_tool_call> none;
        return none;
    }

    const char* chars() const noexcept { return reinterpret_cast<const char*>(block_ + 1); }

    std::vector<invalid_tool_call> take_invalid() noexcept {
        return block_ ? std::move(block_->invalid) : std::vector<invalid_tool_call>();
    }

    /// Builds the new block before freeing the old one, as the strings may view it.
    void assign(std::string_view tool_call_id, std::string_view reasoning,
                std::vector<invalid_tool_call> invalid) {
        if (tool_call_id.empty() && reasoning.empty() && invalid.empty()) {
            release();
            return;
        }
        make_block(tool_call_id, reasoning, std::move(invalid));
    }

    void make_block(std::string_view tool_call_id, std::string_view reasoning,
                    std::vector<invalid_tool_call> invalid) {
        constexpr std::size_t max_size = std::numeric_limits<std::uint32_t>::max();
        if (tool_call_id.size() > max_size || reasoning.size() > max_size)
            throw std::length_error("message: tool call id or reasoning too long");
        void* storage = ::operator new(sizeof(block) + tool_call_id.size() + reasoning.size());
        auto* fresh =
            ::new (storage) block{std::move(invalid), static_cast<std::uint32_t>(tool_call_id.size()),
                                  static_cast<std::uint32_t>(reasoning.size())};
        char* out = reinterpret_cast<char*>(fresh + 1);
        if (!tool_call_id.empty()) std::memcpy(out, tool_call_id.data(), tool_call_id.size());
        if (!reasoning.empty()) std::memcpy(out + tool_call_id.size(), reasoning.data(), reasoning.size());
        release();
        block_ = fresh;
    }

    void release() noexcept {
        if (block_ == nullptr) return;
        block_->~block();
        ::operator delete(block_);
        block_ = nullptr;
    }

    block* block_ = nullptr;
};

} // namespace detail
} // namespace agentware

#endif
