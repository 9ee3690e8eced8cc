#ifndef AGENTWARE_CORE_COW_VECTOR_HPP
#define AGENTWARE_CORE_COW_VECTOR_HPP

#include <agentware/core/cow.hpp>

#include <cstddef>
#include <span>
#include <vector>

namespace agentware {

/// A copy-on-write vector (see `cow`) with the reading side of a vector.
///
/// A request to the model borrows the thread's message history, so building a
/// request costs the same at 10 or 10,000 messages. A middleware that changes
/// the request's messages calls `edit()`, which copies them once.
template <class T>
class cow_vector : public cow<std::vector<T>> {
    using base = cow<std::vector<T>>;

public:
    cow_vector() = default;
    /// Borrows `v`, which must outlive every copy of this object.
    explicit cow_vector(const std::vector<T>& v) noexcept : base(v) {}
    /// Owns `v`.
    explicit cow_vector(std::vector<T>&& v) : base(std::move(v)) {}

    cow_vector& operator=(std::vector<T>&& v) {
        base::operator=(std::move(v));
        return *this;
    }

    operator std::span<const T>() const noexcept { return this->get(); }

    std::size_t size() const noexcept { return this->get().size(); }
    bool empty() const noexcept { return this->get().empty(); }
    auto begin() const noexcept { return this->get().begin(); }
    auto end() const noexcept { return this->get().end(); }
    const T& operator[](std::size_t i) const noexcept { return this->get()[i]; }
    const T& back() const noexcept { return this->get().back(); }
};

} // namespace agentware

#endif
