// Everything the umbrella header brings.
#include <agentware.hpp>
