// An extra anchored on a middleware that is not in the SDK chain.
#include <agentware/middleware/input_sanitization.hpp>
#include <agentware/presets/deerflow_factory.hpp>

struct after_pii {
    using place_after = agentware::input_sanitization;
    template <class S>
    void before_model(S&) {}
};

agentware::deerflow_sdk_pipeline_t<after_pii>* p = nullptr;
