// needs_dirs lists makes_dirs in must_come_after, so this order is rejected.
#include <agentware/core.hpp>

struct makes_dirs {
    void before_agent(int&);
};
struct needs_dirs {
    using must_come_after = agentware::type_list<makes_dirs>;
    void before_agent(int&);
};

agentware::pipeline<needs_dirs, makes_dirs> p;
