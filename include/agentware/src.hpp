#ifndef AGENTWARE_SRC_HPP
#define AGENTWARE_SRC_HPP

// Include this header in exactly one translation unit of a program that uses
// agentware's JSON-based layers: it compiles Boost.JSON's implementation there,
// so the library stays header-only without linking libboost_json. Do not also
// link Boost::json.
#include <boost/json/src.hpp>

#endif
