#ifndef AGENTWARE_POSTGRES_RESULT_HPP
#define AGENTWARE_POSTGRES_RESULT_HPP

// A statement's rows, in libpq's text format: each value is the text the
// server printed (JSON columns arrive as their JSON text, booleans as "t" or
// "f"), read as the type the caller asks for. Owns the PGresult.

#include <agentware/postgres/error.hpp>

#include <fmt/format.h>
#include <libpq-fe.h>

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace agentware::postgres {

class result {
public:
    result() = default;
    explicit result(PGresult* r) : r_(r) {}

    /// Rows returned (0 for a command).
    std::size_t size() const noexcept { return r_ ? static_cast<std::size_t>(PQntuples(r_.get())) : 0; }
    bool empty() const noexcept { return size() == 0; }
    std::size_t columns() const noexcept { return r_ ? static_cast<std::size_t>(PQnfields(r_.get())) : 0; }

    /// The index of the column `name`; an error naming it when the statement has none.
    std::size_t column(std::string_view name) const {
        for (std::size_t c = 0; c < columns(); ++c)
            if (name == PQfname(r_.get(), static_cast<int>(c))) return c;
        throw error(fmt::format("postgres: the result has no column \"{}\"", name));
    }

    /// Rows a command changed (INSERT, UPDATE, DELETE), 0 when it says none.
    std::uint64_t affected() const noexcept {
        const char* n = r_ ? PQcmdTuples(r_.get()) : "";
        return *n ? std::strtoull(n, nullptr, 10) : 0;
    }

    bool is_null(std::size_t row, std::size_t col) const {
        check(row, col);
        return PQgetisnull(r_.get(), static_cast<int>(row), static_cast<int>(col)) != 0;
    }

    /// The value's text; nullopt for SQL NULL.
    std::optional<std::string_view> text(std::size_t row, std::size_t col) const {
        if (is_null(row, col)) return std::nullopt;
        const auto r = static_cast<int>(row), c = static_cast<int>(col);
        return std::string_view(PQgetvalue(r_.get(), r, c),
                                static_cast<std::size_t>(PQgetlength(r_.get(), r, c)));
    }
    std::optional<std::string_view> text(std::size_t row, std::string_view col) const {
        return text(row, column(col));
    }

    /// The value as T: std::string, std::string_view, bool, an integer or a
    /// floating type; an error naming the column when it is NULL or not of T.
    template <class T>
    T as(std::size_t row, std::size_t col) const {
        const auto t = text(row, col);
        if (!t) throw error(fmt::format("postgres: column \"{}\" of row {} is NULL", name(col), row));
        if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view>) {
            return T(*t);
        } else if constexpr (std::is_same_v<T, bool>) {
            if (*t == "t") return true;
            if (*t == "f") return false;
            throw error(fmt::format("postgres: column \"{}\" is not a boolean: \"{}\"", name(col), *t));
        } else if constexpr (std::is_arithmetic_v<T>) {
            T v{};
            const auto [end, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
            if (ec != std::errc{} || end != t->data() + t->size())
                throw error(fmt::format("postgres: column \"{}\" is not a number of the asked type: \"{}\"",
                                        name(col), *t));
            return v;
        } else {
            static_assert(sizeof(T) == 0, "postgres::result::as<T>: T is a string, bool or arithmetic type");
        }
    }
    template <class T>
    T as(std::size_t row, std::string_view col) const {
        return as<T>(row, column(col));
    }

    std::string_view name(std::size_t col) const {
        if (col >= columns())
            throw error(fmt::format("postgres: no column {} (the result has {})", col, columns()));
        return PQfname(r_.get(), static_cast<int>(col));
    }

    PGresult* native() const noexcept { return r_.get(); }

private:
    void check(std::size_t row, std::size_t col) const {
        if (col >= columns() || row >= size())
            throw error(
                fmt::format("postgres: no value at row {}, column {} (the result has {} rows, {} columns)",
                            row, col, size(), columns()));
    }

    struct clear {
        void operator()(PGresult* r) const noexcept { PQclear(r); }
    };
    std::unique_ptr<PGresult, clear> r_;
};

} // namespace agentware::postgres

#endif
