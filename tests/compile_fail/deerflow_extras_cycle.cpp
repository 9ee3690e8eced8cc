// Two extras anchored on each other: neither can be placed.
#include <agentware/presets/deerflow_factory.hpp>

struct ping_extra;
struct pong_extra {
    using place_after = ping_extra;
    template <class S>
    void before_model(S&) {}
};
struct ping_extra {
    using place_before = pong_extra;
    template <class S>
    void before_model(S&) {}
};

agentware::deerflow_sdk_pipeline_t<ping_extra, pong_extra>* p = nullptr;
