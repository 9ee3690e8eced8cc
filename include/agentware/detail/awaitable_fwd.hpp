#ifndef AGENTWARE_DETAIL_AWAITABLE_FWD_HPP
#define AGENTWARE_DETAIL_AWAITABLE_FWD_HPP

// Asio's awaitable, declared rather than included: the blocking loop and the
// declarations of the coroutine loop name it, and only code that runs a
// coroutine needs its definition (<boost/asio/awaitable.hpp>, which the
// coroutine loop's headers include). Asio's own declaration adds the default
// executor, so `boost::asio::awaitable<T>` and `awaitable<T, any_io_executor>`
// are one type.

#include <boost/asio/detail/config.hpp>

#if defined(BOOST_ASIO_USE_TS_EXECUTOR_AS_DEFAULT)
#include <boost/asio/awaitable.hpp> // the default executor is then an alias: no declaration to borrow
#else
namespace boost::asio {
class any_io_executor;
template <typename T, typename Executor>
class awaitable;
} // namespace boost::asio
#endif

namespace agentware::detail {

/// `boost::asio::awaitable<T>`, spelled so that it needs no definition.
template <class T>
using awaitable = boost::asio::awaitable<T, boost::asio::any_io_executor>;

template <class T, class Dependent>
struct dependent_on {
    using type = T;
};

/// `awaitable<T>` as the return type of a template's function, made to depend
/// on `Dependent`: g++ wants a non-dependent return type complete where the
/// template is defined, a dependent one only where the function is instantiated.
template <class T, class Dependent>
using awaitable_in = awaitable<typename dependent_on<T, Dependent>::type>;

} // namespace agentware::detail

#endif
