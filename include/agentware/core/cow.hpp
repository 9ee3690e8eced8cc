#ifndef AGENTWARE_CORE_COW_HPP
#define AGENTWARE_CORE_COW_HPP

#include <memory>
#include <utility>

namespace agentware {

/// A read-mostly value that either borrows one it does not own or shares one
/// it does, and copies only on the first edit.
///
/// Requests handed to wrap hooks borrow what the agent already stores (the
/// history, the tool call being answered), so building a request copies
/// nothing. A hook that changes the value calls `edit()`, which copies once
/// into a shared value; copies of the request then share it, so a request
/// stays valid after the hook that edited it returns (which asynchronous
/// chains rely on).
template <class T>
class cow {
public:
    cow() = default;
    cow(const cow&) = default;
    cow& operator=(const cow&) = default;
    // A moved-from cow reads the empty value, not the one it handed over.
    cow(cow&& o) noexcept : owned_(std::move(o.owned_)), view_(std::exchange(o.view_, nullptr)) {}
    cow& operator=(cow&& o) noexcept {
        owned_ = std::move(o.owned_);
        view_ = std::exchange(o.view_, nullptr);
        return *this;
    }
    /// Borrows `v`, which must outlive every copy of this object.
    explicit cow(const T& v) noexcept : view_(&v) {}
    /// Owns `v` (implicit, like `std::optional`: a request may be built from a value).
    cow(T&& v) : owned_(std::make_shared<T>(std::move(v))), view_(owned_.get()) {} // NOLINT

    cow& operator=(T&& v) {
        owned_ = std::make_shared<T>(std::move(v));
        view_ = owned_.get();
        return *this;
    }

    const T& get() const noexcept { return view_ ? *view_ : none(); }
    const T& operator*() const noexcept { return get(); }
    const T* operator->() const noexcept { return &get(); }

    /// A value this object alone owns, copied from the current one if needed.
    T& edit() {
        if (!owned_ || owned_.use_count() != 1 || view_ != owned_.get()) {
            owned_ = std::make_shared<T>(get());
            view_ = owned_.get();
        }
        return *owned_;
    }

    /// True when this object still reads the value it was built on without copying it.
    bool borrowed() const noexcept { return view_ != nullptr && view_ != owned_.get(); }

private:
    static const T& none() noexcept {
        static const T empty{};
        return empty;
    }
    std::shared_ptr<T> owned_;
    const T* view_ = nullptr;
};

} // namespace agentware

#endif
