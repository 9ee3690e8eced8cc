// A callable given without a schema must take a described struct.
#include <agentware/tool/make_tool.hpp>

struct undescribed_arguments {
    int count;
};

auto tool = agentware::make_tool("count", "Counts.", [](const undescribed_arguments& a) { return a.count; });
