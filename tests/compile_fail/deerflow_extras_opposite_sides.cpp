// One extra after an anchor and another before it: DeerFlow asks for cross-anchoring instead.
#include <agentware/presets/deerflow_factory.hpp>

struct after_memory {
    using place_after = agentware::memory;
    template <class S>
    void before_model(S&) {}
};
struct before_memory {
    using place_before = agentware::memory;
    template <class S>
    void before_model(S&) {}
};

agentware::deerflow_sdk_pipeline_t<before_memory, after_memory>* p = nullptr;
