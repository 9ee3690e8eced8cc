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

#endif
