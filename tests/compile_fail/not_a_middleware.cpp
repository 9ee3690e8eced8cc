// A type with none of the six hooks is not a middleware.
#include <agentware/core.hpp>

struct plain_struct {
    void before_modle(int&); // misspelt: declares no hook
};

agentware::pipeline<plain_struct> p;
