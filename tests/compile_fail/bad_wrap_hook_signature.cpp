// A wrap_tool_call without the `next` parameter cannot be chained.
#include <agentware/core.hpp>

#include <string>

struct bad_wrap_tool {
    std::string wrap_tool_call(std::string& request);
};

void use() {
    agentware::pipeline<bad_wrap_tool> p;
    std::string request;
    (void)p.wrap_tool_call(request, [](std::string& r) { return r; });
}
