#ifndef AGENTWARE_MESSAGE_PROVIDER_METADATA_HPP
#define AGENTWARE_MESSAGE_PROVIDER_METADATA_HPP
// What a model provider reports about an answer, kept typed on the message.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <string_view>

namespace agentware {

/// The tokens an answer cost, as the provider reported them.
struct token_usage {
    std::uint64_t input_tokens = 0;
    std::uint64_t output_tokens = 0;
    std::uint64_t total_tokens = 0;

    bool empty() const noexcept { return input_tokens == 0 && output_tokens == 0 && total_tokens == 0; }

    token_usage& operator+=(const token_usage& o) noexcept {
        input_tokens += o.input_tokens;
        output_tokens += o.output_tokens;
        total_tokens += o.total_tokens;
        return *this;
    }
    friend bool operator==(const token_usage&, const token_usage&) = default;
};

/// Why the model stopped ("stop", "tool_calls", "end_turn", ...), which model
/// answered, and what it cost: the provider's figures that middlewares and the
/// token counter read every round, so they are typed rather than JSON. Other
/// provider extras (a refusal, a thinking signature) and the stamps middlewares
/// add stay in message::metadata.
///
/// Kept out of line, in one allocation that holds both strings, so a message
/// without any (every human, tool and system message) pays one pointer, and a
/// parsed answer one small block instead of a JSON object of nine.
class provider_metadata {
public:
    provider_metadata() noexcept = default;
    provider_metadata(std::string_view finish_reason, std::string_view model, const token_usage& usage = {}) {
        assign(finish_reason, model, usage);
    }
    provider_metadata(const provider_metadata& o) {
        if (o.block_ != nullptr) assign(o.finish_reason(), o.model(), o.usage());
    }
    provider_metadata(provider_metadata&& o) noexcept : block_(o.block_) { o.block_ = nullptr; }
    provider_metadata& operator=(const provider_metadata& o) {
        if (this != &o) *this = provider_metadata(o);
        return *this;
    }
    provider_metadata& operator=(provider_metadata&& o) noexcept {
        if (this != &o) {
            release();
            block_ = o.block_;
            o.block_ = nullptr;
        }
        return *this;
    }
    ~provider_metadata() { release(); }

    /// The provider's stop reason, as it spelled it; "" when not reported.
    std::string_view finish_reason() const noexcept {
        return block_ ? std::string_view(chars(), block_->finish_reason_size) : std::string_view();
    }
    /// The model that answered (the provider's name for it); "" when not reported.
    std::string_view model() const noexcept {
        return block_ ? std::string_view(chars() + block_->finish_reason_size, block_->model_size)
                      : std::string_view();
    }
    /// Zero when not reported.
    token_usage usage() const noexcept { return block_ ? block_->usage : token_usage{}; }

    void set_finish_reason(std::string_view value) { assign(value, model(), usage()); }
    void set_model(std::string_view value) { assign(finish_reason(), value, usage()); }
    void set_usage(const token_usage& value) { assign(finish_reason(), model(), value); }

    /// True when nothing was reported (no allocation is held).
    bool empty() const noexcept { return block_ == nullptr; }
    void clear() noexcept { release(); }

    friend bool operator==(const provider_metadata& a, const provider_metadata& b) noexcept {
        return a.finish_reason() == b.finish_reason() && a.model() == b.model() && a.usage() == b.usage();
    }

private:
    struct block {
        token_usage usage;
        std::uint32_t finish_reason_size;
        std::uint32_t model_size;
        // followed by the characters of finish_reason, then those of model
    };

    const char* chars() const noexcept { return reinterpret_cast<const char*>(block_ + 1); }

    /// Builds the new block before freeing the old one, as the arguments may view it.
    void assign(std::string_view finish_reason, std::string_view model, const token_usage& usage) {
        if (finish_reason.empty() && model.empty() && usage.empty()) {
            release();
            return;
        }
        constexpr std::size_t max_size = std::numeric_limits<std::uint32_t>::max();
        if (finish_reason.size() > max_size || model.size() > max_size)
            throw std::length_error("provider_metadata: finish reason or model name too long");
        void* storage = ::operator new(sizeof(block) + finish_reason.size() + model.size());
        auto* fresh = ::new (storage) block{usage, static_cast<std::uint32_t>(finish_reason.size()),
                                            static_cast<std::uint32_t>(model.size())};
        char* out = reinterpret_cast<char*>(fresh + 1);
        if (!finish_reason.empty()) std::memcpy(out, finish_reason.data(), finish_reason.size());
        if (!model.empty()) std::memcpy(out + finish_reason.size(), model.data(), model.size());
        release();
        block_ = fresh;
    }

    void release() noexcept {
        ::operator delete(block_); // block is trivially destructible
        block_ = nullptr;
    }

    block* block_ = nullptr;
};

} // namespace agentware

#endif
