#ifndef AGENTWARE_DETAIL_COW_VECTOR_HPP
#define AGENTWARE_DETAIL_COW_VECTOR_HPP

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace agentware {

/// A read-mostly vector that either borrows one it does not own or shares one
/// it does, and copies only on the first edit.
///
/// A request to the model borrows the thread's message history, so building a
/// request costs the same at 10 or 10,000 messages. A middleware that changes
/// the request's messages calls `edit()`, which copies once into a shared
/// vector; copies of the request then share it, so a request stays valid after
/// the hook that edited it returns (which asynchronous chains rely on).
template <class T>
class cow_vector {
public:
    cow_vector() = default;
    /// Borrows `v`, which must outlive every copy of this object.
    explicit cow_vector(const std::vector<T>& v) noexcept : view_(&v) {}
    /// Owns `v`.
    explicit cow_vector(std::vector<T>&& v) : owned_(std::make_shared<std::vector<T>>(std::move(v))), view_(owned_.get()) {}

    cow_vector& operator=(std::vector<T>&& v) {
        owned_ = std::make_shared<std::vector<T>>(std::move(v));
        view_ = owned_.get();
        return *this;
    }

    const std::vector<T>& get() const noexcept { return view_ ? *view_ : none(); }
    operator std::span<const T>() const noexcept { return get(); }

    /// A vector this object alone owns, copied from the current one if needed.
    std::vector<T>& edit() {
        if (!owned_ || owned_.use_count() != 1 || view_ != owned_.get()) {
            owned_ = std::make_shared<std::vector<T>>(get());
            view_ = owned_.get();
        }
        return *owned_;
    }

    /// True when this object still reads the vector it was built on without copying it.
    bool borrowed() const noexcept { return view_ != nullptr && view_ != owned_.get(); }

    std::size_t size() const noexcept { return get().size(); }
    bool empty() const noexcept { return get().empty(); }
    auto begin() const noexcept { return get().begin(); }
    auto end() const noexcept { return get().end(); }
    const T& operator[](std::size_t i) const noexcept { return get()[i]; }
    const T& back() const noexcept { return get().back(); }

private:
    static const std::vector<T>& none() noexcept {
        static const std::vector<T> none;
        return none;
    }
    std::shared_ptr<std::vector<T>> owned_;
    const std::vector<T>* view_ = nullptr;
};

} // namespace agentware

#endif
