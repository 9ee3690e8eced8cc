// An arguments struct with a member that has no JSON Schema form.
#include <agentware/tool/make_tool.hpp>

struct pointer_arguments {
    int* count;
};
BOOST_DESCRIBE_STRUCT(pointer_arguments, (), (count))

auto tool = agentware::make_tool("count", "Counts.", [](const pointer_arguments&) { return 0; });
