#ifndef AGENTWARE_MIDDLEWARE_DETAIL_EXCEPTION_NAME_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_EXCEPTION_NAME_HPP

// The name and message of a caught exception, as LangChain's texts show them
// (Python's `type(exc).__name__` and `str(exc)`): the class name without its
// namespaces, e.g. "model_error" for agentware::model_error.

#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>

#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#endif

namespace agentware::detail {

struct exception_info {
    std::string type; ///< unqualified class name
    std::string what; ///< what(), "" for a non-std exception
};

inline std::string unqualified(std::string name) {
    // Template arguments may hold "::" too: cut at the last "::" before any '<'.
    const std::size_t angle = name.find('<');
    const std::size_t colon = name.rfind("::", angle);
    if (colon != std::string::npos) name.erase(0, colon + 2);
    return name;
}

/// What `e` holds. Never throws for a non-null `e`.
inline exception_info describe_exception(std::exception_ptr e) {
    exception_info info{"unknown exception", {}};
    if (!e) return info;
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& x) {
        info.what = x.what();
        std::string name = typeid(x).name();
#if __has_include(<cxxabi.h>)
        int status = 0;
        std::unique_ptr<char, void (*)(void*)> demangled(
            abi::__cxa_demangle(typeid(x).name(), nullptr, nullptr, &status), std::free);
        if (status == 0 && demangled) name = demangled.get();
#endif
        info.type = unqualified(std::move(name));
    } catch (...) {
    }
    return info;
}

} // namespace agentware::detail

#endif
