#ifndef AGENTWARE_MODEL_IMPL_MODEL_FACTORY_IPP
#define AGENTWARE_MODEL_IMPL_MODEL_FACTORY_IPP

// The model factory's definitions, compiled once in <agentware/src.hpp> with
// AGENTWARE_SEPARATE_COMPILATION. They stay in model_factory.hpp, after its
// declarations, so that a file that included the header first still gets them
// here.

#define AGENTWARE_MODEL_FACTORY_SOURCE
#include <agentware/model/model_factory.hpp>

#endif
