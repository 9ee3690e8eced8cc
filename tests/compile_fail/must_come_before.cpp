// outer_guard lists inner_handler in must_come_before, so this order is rejected.
#include <agentware/core.hpp>

struct inner_handler {
    void before_agent(int&);
};
struct outer_guard {
    using must_come_before = agentware::type_list<inner_handler>;
    void before_agent(int&);
};

agentware::pipeline<inner_handler, outer_guard> p;
