// The pipeline alone.
#include <agentware/core.hpp>
