#ifndef AGENTWARE_DETAIL_CONFIG_HPP
#define AGENTWARE_DETAIL_CONFIG_HPP

// Header-only (the default) or separate compilation, Beast's way: with
// AGENTWARE_SEPARATE_COMPILATION defined in every translation unit, the
// non-template code that declares itself AGENTWARE_DECL is compiled once, in
// the one file that includes <agentware/src.hpp>, and the headers neither
// define it nor include what only its definitions need (Beast, OpenSSL).

#if defined(AGENTWARE_SEPARATE_COMPILATION)
#define AGENTWARE_DECL
#else
#define AGENTWARE_DECL inline
#define AGENTWARE_HEADER_ONLY 1
#endif

// A function that is, or starts, a coroutine: compiled once with separate
// compilation, and a template header-only, because g++ 12 emits a
// non-template inline coroutine (and the coroutines such a function
// instantiates) in every file that includes it, called or not.
// AGENTWARE_CORO_DECL goes before the declaration, AGENTWARE_CORO_DEF before
// the definition in the .ipp file.
#if defined(AGENTWARE_SEPARATE_COMPILATION)
#define AGENTWARE_CORO_DECL
#define AGENTWARE_CORO_DEF
#else
#define AGENTWARE_CORO_DECL template <class = void>
#define AGENTWARE_CORO_DEF template <class>
#endif

#endif
