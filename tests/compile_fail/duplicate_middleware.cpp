// The same middleware type twice (even once as an optional slot) is rejected.
#include <agentware/core.hpp>

#include <optional>

struct counter {
    void before_model(int&);
};

agentware::pipeline<counter, std::optional<counter>> p;
