// A middleware that declares must_be_last cannot be followed by another.
#include <agentware/core.hpp>

struct asks_to_be_last {
    static constexpr bool must_be_last = true;
    void after_model(int&);
};
struct other {
    void before_model(int&);
};

agentware::pipeline<asks_to_be_last, other> p;
